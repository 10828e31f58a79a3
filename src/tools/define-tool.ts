/**
 * `defineTool`: the parameters give a tool both its JSON Schema and its
 * argument decoder, so what the model is told and what `execute` receives
 * cannot drift apart. Parameters are an io-ts codec (the fast path: converted
 * and decoded by rxagent itself), a Standard Schema that converts itself to
 * JSON Schema (Zod 4, Valibot with its adapter, ArkType...), or a plain JSON
 * Schema (validated with Ajv when the app has it installed).
 */
import * as t from 'io-ts'
import { isLeft, left, right, type Either } from 'fp-ts/lib/Either.js'
import { describeValue, NonNegativeNumber, reportErrors, struct, type JsonObject } from '../types/codec.js'
import { isCodec } from '../types/codec-kind.js'
import { decodeInput } from '../types/input.js'
import { text } from '../types/content.js'
import {
  FunctionValue,
  ToolName,
  type AgentTool,
  type SyncDecodingTool,
  type ToolDecodeResult,
  type ToolExecuteContext,
  type ToolOutput,
  type ToolReturn,
} from '../types/tool.js'
import { toJsonSchema } from './json-schema.js'
import { jsonSchemaDecoder, type UncompilableSchema } from './json-schema-validator.js'
import { hasStandardProps, objectSchema, standardDecoder, standardParts, type StandardSchemaV1, type StandardToolSchema } from './standard-schema.js'
import { exactDeep } from './strict.js'
import { unchangedCheck } from './unchanged-args.js'

/** What every tool definition holds besides its parameters and `execute`. */
interface ToolDefinitionBase {
  /** Sent to providers, which accept only `[a-zA-Z0-9_-]`, 1 to 64 characters. */
  name: string
  /** Tells the model when and how to use the tool. */
  description: string
  /** Milliseconds before the call is abandoned with an error result. */
  timeoutMs?: number
  /** Whether apps should ask a human before running it. */
  needsApproval?: boolean
  /** A short human label for UIs. */
  label?: string
}

/** A tool defined with an io-ts codec for its parameters. */
export interface ToolDefinition<C extends t.Mixed> extends ToolDefinitionBase {
  /** An object codec for the arguments; see `toJsonSchema` for what converts. */
  parameters: C
  /** Runs with arguments already decoded, unknown keys stripped. */
  execute: (args: t.TypeOf<C>, context: ToolExecuteContext) => ToolReturn
}

/** A tool defined with a Standard Schema (Zod 4, Valibot wrapped by `toStandardJsonSchema`, ArkType...). */
export interface StandardToolDefinition<S extends StandardToolSchema> extends ToolDefinitionBase {
  /** An object schema that validates (Standard Schema) and describes itself (Standard JSON Schema). */
  parameters: S
  /** Runs with the schema's output: what its `validate` returned (Zod strips unknown keys, applies defaults and transforms). */
  execute: (args: StandardSchemaV1.InferOutput<S>, context: ToolExecuteContext) => ToolReturn
}

/** JSON Schema keywords: tool parameters as a plain JSON Schema object (with `type: "object"`). */
export type JsonSchemaParameters = { readonly [keyword: string]: unknown }

/**
 * A tool defined with a plain JSON Schema. `Args` is what `execute` is
 * declared to receive (`Record<string, unknown>` unless given): the schema is
 * not read by the type checker.
 */
export interface JsonSchemaToolDefinition<Args> extends ToolDefinitionBase {
  /** A JSON Schema object with `type: "object"`; sent to providers without its `$schema`. */
  parameters: JsonSchemaParameters
  /** Runs with the arguments as the model wrote them, once Ajv (when installed) has accepted them. */
  execute: (args: Args, context: ToolExecuteContext) => ToolReturn
  /**
   * What a schema Ajv cannot compile does. `'error'` (the default): each call
   * is an error result naming the problem, since running on unchecked
   * arguments would hide it. `'unvalidated'`: arguments pass as they are, as
   * without Ajv; for a schema someone else validates anyway (an MCP server's).
   */
  uncompilableSchema?: 'error' | 'unvalidated'
}

/** Tool parameters, recognized by shape: an io-ts codec, an object with `~standard` (a Standard Schema), or a plain object (JSON Schema). */
const ParametersValue = new t.Type<unknown, unknown, unknown>(
  'Parameters',
  (u): u is unknown => isCodec(u) || hasStandardProps(u) || isPlainObject(u),
  (u, c) =>
    isCodec(u) || hasStandardProps(u) || isPlainObject(u)
      ? t.success(u)
      : t.failure(u, c, `expected an io-ts codec, a Standard Schema or a JSON Schema object, got ${describeValue(u)}`),
  t.identity,
)

function isPlainObject(u: unknown): boolean {
  if (typeof u !== 'object' || u === null || Array.isArray(u)) return false
  const prototype: unknown = Object.getPrototypeOf(u)
  return prototype === Object.prototype || prototype === null
}

/** What a definition must hold, checked before anything is built from it. */
const Definition = struct(
  'ToolDefinition',
  { name: ToolName, description: t.string, parameters: ParametersValue, execute: FunctionValue },
  { timeoutMs: NonNegativeNumber, needsApproval: t.boolean, label: t.string, uncompilableSchema: t.keyof({ error: null, unvalidated: null }) },
)

type Decode<A> = (raw: unknown) => ToolDecodeResult<A> | PromiseLike<ToolDecodeResult<A>>

/**
 * The exact decoder of an io-ts codec: unknown keys stripped at every level,
 * one line per problem. Synchronous, and the codec is made exact once.
 */
export function codecDecoder<C extends t.Mixed>(codec: C): (raw: unknown) => Either<readonly string[], t.TypeOf<C>> {
  const exact = exactDeep(codec)
  // Arguments the exact decode would hand back as they are skip io-ts (see unchanged-args.ts).
  const unchanged = unchangedCheck(codec)
  return (raw) => {
    if (unchanged?.(raw) === true) return right(raw as t.TypeOf<C>)
    const result = exact.decode(raw)
    return isLeft(result) ? left(reportErrors(result.left).map((issue) => issue.message)) : right(result.right)
  }
}

/**
 * The JSON Schema and the decoder of any kind of parameters; the kind is decided here, once.
 *
 * @throws TypeError when `uncompilable` is given for parameters that are not a JSON Schema.
 */
function partsOf(parameters: unknown, uncompilable: UncompilableSchema | undefined): { readonly schema: JsonObject; readonly decode: Decode<unknown> } {
  const json = !isCodec(parameters) && !hasStandardProps(parameters)
  if (!json && uncompilable !== undefined) throw new TypeError('uncompilableSchema applies to JSON Schema parameters only, not to an io-ts codec or a Standard Schema')
  if (isCodec(parameters)) return { schema: toJsonSchema(parameters), decode: codecDecoder(parameters) }
  if (hasStandardProps(parameters)) {
    const { jsonSchema, validate } = standardParts(parameters as StandardToolSchema)
    return { schema: jsonSchema, decode: standardDecoder(validate) }
  }
  // Ajv is given the schema as written ($schema included: it names the dialect).
  return { schema: objectSchema(parameters, 'the JSON Schema'), decode: jsonSchemaDecoder(parameters as JsonObject, uncompilable) }
}

/**
 * Builds a frozen {@link AgentTool} from a definition. With io-ts parameters
 * arguments decode synchronously and exactly (unknown keys stripped at every
 * level); with a Standard Schema `execute` gets what the schema's `validate`
 * returns (possibly asynchronously); with a JSON Schema, the arguments Ajv
 * accepted (or, without Ajv installed, the arguments as they are; a schema
 * Ajv cannot compile fails each call, unless `uncompilableSchema` says
 * `'unvalidated'`).
 *
 * @throws InvalidInputError (a `TypeError`) naming the field, when the
 * definition is not one (no name, an `execute` that is not a function,
 * parameters of no known kind, an `uncompilableSchema` that is neither
 * `'error'` nor `'unvalidated'`…) or the name breaks providers' rule;
 * TypeError naming the tool when the parameters have no JSON Schema of an
 * object (an io-ts codec with no equivalent, a Standard Schema without the
 * Standard JSON Schema interface, a JSON Schema whose `type` is not
 * `"object"`), or an `uncompilableSchema` given with parameters that are not
 * a JSON Schema.
 */
export function defineTool<C extends t.Mixed>(def: ToolDefinition<C>): SyncDecodingTool<t.TypeOf<C>>
export function defineTool<S extends StandardToolSchema>(def: StandardToolDefinition<S>): AgentTool<StandardSchemaV1.InferOutput<S>>
export function defineTool<Args = Record<string, unknown>>(def: JsonSchemaToolDefinition<Args>): AgentTool<Args>
export function defineTool(
  def: ToolDefinition<t.Mixed> | StandardToolDefinition<StandardToolSchema> | JsonSchemaToolDefinition<unknown>,
): AgentTool<unknown> {
  decodeInput(Definition, def, 'defineTool', 'tool definition')
  let parts
  try {
    parts = partsOf(def.parameters, 'uncompilableSchema' in def ? def.uncompilableSchema : undefined)
  } catch (error) {
    // Re-thrown here so the message says which tool, since the converters only know the parameters.
    if (error instanceof TypeError) throw new TypeError(`Tool ${def.name}: ${error.message}`, { cause: error })
    throw error
  }
  return Object.freeze({
    name: def.name,
    description: def.description,
    schema: parts.schema,
    decodeArguments: parts.decode,
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
