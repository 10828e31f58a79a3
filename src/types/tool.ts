/** What a tool is to the loop: a name, a schema, and an execute function. */
import * as t from 'io-ts'
import type { Observable } from 'rxjs'
import type { Either } from 'fp-ts/lib/Either.js'
import { struct, JsonObject, NonNegativeNumber, describeValue } from './codec.js'
import { UserContent } from './content.js'

/**
 * What a tool returns (and what each progress update carries): content for the
 * model, and `details` for the app only.
 */
export const ToolOutput = struct('ToolOutput', { content: t.readonlyArray(UserContent) }, { details: t.unknown })
export type ToolOutput = t.TypeOf<typeof ToolOutput>

/** A tool as a provider sees it: the JSON Schema of its parameters. */
export const ToolSchema = t.type({ name: t.string, description: t.string, parameters: JsonObject }, 'ToolSchema')
export type ToolSchema = t.TypeOf<typeof ToolSchema>

/** What `execute` may return: a final value, a Promise of it, or an Observable whose last value is the result. */
export type ToolReturn = ToolOutput | string | PromiseLike<ToolOutput | string> | Observable<ToolOutput | string>

/** What decoding a call's arguments gives: `Right` with the arguments `execute` receives, or `Left` with each problem in words. */
export type ToolDecodeResult<Args> = Either<readonly string[], Args>

/** What `execute` is given besides its decoded arguments. */
export interface ToolExecuteContext {
  /** The id of the tool call being answered. */
  readonly toolCallId: string
  /**
   * Aborted when the run is aborted, the call times out, or the call is
   * interrupted. An accessor of the context the runtime passes (made on first
   * read), not an own enumerable property: `{ ...context }` does not copy it;
   * pass `context` itself, or `{ ...context, signal: context.signal }`.
   */
  readonly signal: AbortSignal
  /**
   * Set when the run is a durable workflow (`rxagent/dbos`): the same key each
   * time this call is executed (`<session>:<run>:<call>`), so that a tool with
   * side effects can make the one execution that may be repeated (the call in
   * flight when its worker died) idempotent.
   */
  readonly idempotencyKey?: string
}

/**
 * A tool the loop can run. Build one with `defineTool`, which derives
 * `schema` from the parameters (an io-ts codec, a Standard Schema, or a JSON
 * Schema) and decodes arguments before `execute`.
 */
export interface AgentTool<Args = unknown> {
  readonly name: string
  readonly description: string
  /** JSON Schema of the parameters, sent to providers. */
  readonly schema: JsonObject
  /**
   * Decodes raw arguments: `Right` with the arguments `execute` receives, or
   * `Left` with each problem in words (the model reads them). A Promise of
   * either when validation is asynchronous (an async Standard Schema, a JSON
   * Schema tool called before its validator has loaded).
   */
  readonly decodeArguments: (raw: unknown) => ToolDecodeResult<Args> | PromiseLike<ToolDecodeResult<Args>>
  /**
   * Runs the tool. A thrown error, a rejected Promise or an erroring Observable
   * becomes an error result the model sees; the loop goes on.
   */
  // Method syntax on purpose: it makes AgentTool<{ path: string }> assignable to AgentTool<unknown>,
  // so tools with different argument types share one array.
  execute(args: Args, context: ToolExecuteContext): ToolReturn
  /** Milliseconds before the call is abandoned with an error result (overrides the loop's default). */
  readonly timeoutMs?: number
  /** Whether apps should ask a human before running it (used by approval modes). */
  readonly needsApproval?: boolean
  /** A short human label for UIs. */
  readonly label?: string
}

/** A tool whose arguments decode synchronously, as every tool with io-ts parameters does. */
export interface SyncDecodingTool<Args = unknown> extends AgentTool<Args> {
  /** Decodes raw arguments: `Right` with the exact arguments (unknown keys stripped), or `Left` with each problem in words. */
  readonly decodeArguments: (raw: unknown) => ToolDecodeResult<Args>
}

/** The schema a provider needs for `tool`. */
export const toolSchemaOf = (tool: AgentTool): ToolSchema => ({
  name: tool.name,
  description: tool.description,
  parameters: tool.schema,
})

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/

/** A tool name providers accept: `[a-zA-Z0-9_-]`, 1 to 64 characters. */
export const ToolName = new t.Type<string, string, unknown>(
  'ToolName',
  (u): u is string => typeof u === 'string' && TOOL_NAME.test(u),
  (u, c) =>
    typeof u !== 'string'
      ? t.failure(u, c)
      : TOOL_NAME.test(u)
        ? t.success(u)
        : t.failure(u, c, `Invalid tool name ${describeValue(u)}: it must be 1 to 64 characters of letters, digits, '_' or '-'`),
  t.identity,
)

/** Any function (a tool's `execute`, `decodeArguments`). */
export const FunctionValue = new t.Type<(...args: never[]) => unknown, (...args: never[]) => unknown, unknown>(
  'Function',
  (u): u is (...args: never[]) => unknown => typeof u === 'function',
  (u, c) => (typeof u === 'function' ? t.success(u as (...args: never[]) => unknown) : t.failure(u, c)),
  t.identity,
)

/** The shape of an {@link AgentTool}, checked where tools enter (a run's context, an Agent's tools). */
const AgentToolShape = struct(
  'AgentTool',
  { name: ToolName, description: t.string, schema: JsonObject, decodeArguments: FunctionValue, execute: FunctionValue },
  { timeoutMs: NonNegativeNumber, needsApproval: t.boolean, label: t.string },
)

/** A list of tools: each an {@link AgentTool}, no two with one name (the second would never be called). */
export const AgentTools = new t.Type<readonly AgentTool[], readonly AgentTool[], unknown>(
  'ReadonlyArray<AgentTool>',
  (u): u is readonly AgentTool[] => Array.isArray(u) && u.every((x) => AgentToolShape.is(x)),
  (u, c) => {
    if (!Array.isArray(u)) return t.failure(u, c)
    const errors: t.ValidationError[] = []
    const seen = new Map<string, number>()
    u.forEach((tool: unknown, i) => {
      const at = t.appendContext(c, String(i), AgentToolShape, tool)
      const r = AgentToolShape.validate(tool, at)
      if (r._tag === 'Left') return errors.push(...r.left)
      const first = seen.get(r.right.name)
      if (first !== undefined) {
        const name = r.right.name
        const fields = t.appendContext(at, '', AgentToolShape.types[0], tool)
        errors.push({ value: name, context: t.appendContext(fields, 'name', ToolName, name), message: `the tool at index ${first} is also named ${JSON.stringify(name)}` })
      } else seen.set(r.right.name, i)
      return undefined
    })
    return errors.length > 0 ? t.failures(errors) : t.success(u as readonly AgentTool[])
  },
  t.identity,
)
