/**
 * The synthetic `parallel` / `multi_tool_use.parallel` wrapper some models
 * emit (one call whose arguments list several calls), unwrapped into its
 * calls by the Responses decoder.
 */
import { isRecord, stringOf, type Json } from './json.js'

/** Names of the synthetic wrapper some models emit for parallel calls. */
export const parallelWrapperNames: ReadonlySet<string> = new Set(['parallel', 'multi_tool_use.parallel'])

/** One call listed in a parallel wrapper's arguments. */
interface WrappedCall {
  readonly name: string
  readonly args: Json
}

/**
 * The calls a `parallel` wrapper's arguments list, or `undefined` when the
 * arguments are not that shape (the call is then kept as it is).
 */
export function unwrapParallel(args: string): WrappedCall[] | undefined {
  let json: unknown
  try {
    json = JSON.parse(args)
  } catch {
    return undefined
  }
  const uses = isRecord(json) ? json['tool_uses'] : undefined
  if (!Array.isArray(uses) || uses.length === 0) return undefined
  const calls: WrappedCall[] = []
  for (const use of uses) {
    const recipient = isRecord(use) ? stringOf(use?.['recipient_name']) : undefined
    if (recipient === undefined || !isRecord(use)) return undefined
    const parameters = use['parameters']
    calls.push({ name: recipient.replace(/^functions\./, ''), args: isRecord(parameters) ? parameters : {} })
  }
  return calls
}
