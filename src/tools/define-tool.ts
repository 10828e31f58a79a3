/**
 * `defineTool`: one io-ts codec gives a tool both its JSON Schema and its
 * argument decoder, so what the model is told and what `execute` receives
 * cannot drift apart.
 */
import * as t from 'io-ts'
import { isLeft, left, right, type Either } from 'fp-ts/lib/Either.js'
import { describeValue, NonNegativeNumber, reportErrors, struct } from '../types/codec.js'
import { isCodec } from '../types/codec-kind.js'
import { decodeInput } from '../types/input.js'
import { text } from '../types/content.js'
import { FunctionValue, ToolName, type AgentTool, type ToolExecuteContext, type ToolOutput, type ToolReturn } from '../types/tool.js'
import { toJsonSchema } from './json-schema.js'
import { exactDeep } from './strict.js'

/** What it takes to define a tool. */
export interface ToolDefinition<C extends t.Mixed> {
  /** Sent to providers, which accept only `[a-zA-Z0-9_-]`, 1 to 64 characters. */
  name: string
  /** Tells the model when and how to use the tool. */
  description: string
  /** An object codec for the arguments; see `toJsonSchema` for what converts. */
  parameters: C
  /** Runs with arguments already decoded, unknown keys stripped. */
  execute: (args: t.TypeOf<C>, context: ToolExecuteContext) => ToolReturn
  /** Milliseconds before the call is abandoned with an error result. */
  timeoutMs?: number
  /** Whether apps should ask a human before running it. */
  needsApproval?: boolean
  /** A short human label for UIs. */
  label?: string
}

/** An io-ts codec, recognized by its shape (not `instanceof`, which a second copy of io-ts would fail). */
const CodecValue = new t.Type<t.Mixed, t.Mixed, unknown>(
  'Codec',
  isCodec,
  (u, c) => (isCodec(u) ? t.success(u) : t.failure(u, c, `expected an io-ts codec, got ${describeValue(u)}`)),
  t.identity,
)

/** What a definition must hold, checked before anything is built from it. */
const Definition = struct(
  'ToolDefinition',
  { name: ToolName, description: t.string, parameters: CodecValue, execute: FunctionValue },
  { timeoutMs: NonNegativeNumber, needsApproval: t.boolean, label: t.string },
)

/**
 * Builds a frozen {@link AgentTool} from a definition.
 *
 * @throws InvalidInputError (a `TypeError`) naming the field, when the
 * definition is not one (no name, an `execute` that is not a function…) or the
 * name breaks providers' rule; TypeError naming the tool when the parameters
 * codec has no JSON Schema equivalent.
 */
export function defineTool<C extends t.Mixed>(def: ToolDefinition<C>): AgentTool<t.TypeOf<C>> {
  decodeInput(Definition, def, 'defineTool', 'tool definition')
  let schema
  try {
    schema = toJsonSchema(def.parameters)
  } catch (error) {
    // Re-thrown here so the message says which tool, since the converter only knows the path.
    if (error instanceof TypeError) throw new TypeError(`Tool ${def.name}: ${error.message}`, { cause: error })
    throw error
  }
  const exact = exactDeep(def.parameters)
  const decodeArguments = (raw: unknown): Either<readonly string[], t.TypeOf<C>> => {
    const result = exact.decode(raw)
    return isLeft(result) ? left(reportErrors(result.left).map((issue) => issue.message)) : right(result.right)
  }
  return Object.freeze({
    name: def.name,
    description: def.description,
    schema,
    decodeArguments,
    execute: def.execute,
    ...(def.timeoutMs !== undefined && { timeoutMs: def.timeoutMs }),
    ...(def.needsApproval !== undefined && { needsApproval: def.needsApproval }),
    ...(def.label !== undefined && { label: def.label }),
  })
}

/** A tool result holding one text block, with optional app-only `details`. */
export function toolResult(value: string, details?: unknown): ToolOutput {
  return details === undefined ? { content: [text(value)] } : { content: [text(value)], details }
}
