/**
 * Tool parameters written with any Standard Schema library (Zod 4, Valibot
 * through `@valibot/to-json-schema`, ArkType...): the schema validates, and
 * its Standard JSON Schema interface gives the JSON Schema providers need.
 *
 * The two interfaces are copied from `@standard-schema/spec` 1.1, as the spec
 * asks of libraries that accept Standard Schemas: no schema library, not even
 * the spec package, is a dependency of rxagent.
 */
import { left, right, type Either } from 'fp-ts/lib/Either.js'
import { describeValue, type JsonObject } from '../types/codec.js'
import { isThenable } from '../rx/user-callback.js'
import { formatPath } from './issue-path.js'

/** A Standard Schema v1 (`@standard-schema/spec`): something that validates. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': StandardSchemaV1.Props<Input, Output>
}

export declare namespace StandardSchemaV1 {
  /** The `~standard` properties of a Standard Schema. */
  interface Props<Input = unknown, Output = Input> {
    readonly version: 1
    readonly vendor: string
    readonly types?: { readonly input: Input; readonly output: Output } | undefined
    readonly validate: (value: unknown, options?: { readonly libraryOptions?: Record<string, unknown> | undefined }) => Result<Output> | Promise<Result<Output>>
  }
  /** What `validate` gives: a value, or issues. */
  type Result<Output> = { readonly value: Output; readonly issues?: undefined } | { readonly issues: ReadonlyArray<Issue> }
  /** One validation problem: a message, and where. */
  interface Issue {
    readonly message: string
    readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined
  }
  /** The validated type of a Standard Schema. */
  type InferOutput<S extends StandardSchemaV1> = NonNullable<S['~standard']['types']>['output']
  /** The accepted type of a Standard Schema. */
  type InferInput<S extends StandardSchemaV1> = NonNullable<S['~standard']['types']>['input']
}

/** A Standard JSON Schema v1 (`@standard-schema/spec` 1.1): something that describes itself in JSON Schema. */
export interface StandardJSONSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': StandardJSONSchemaV1.Props<Input, Output>
}

export declare namespace StandardJSONSchemaV1 {
  /** The `~standard` properties of a Standard JSON Schema. */
  interface Props<Input = unknown, Output = Input> {
    readonly version: 1
    readonly vendor: string
    readonly types?: { readonly input: Input; readonly output: Output } | undefined
    readonly jsonSchema: {
      readonly input: (options: Options) => Record<string, unknown>
      readonly output: (options: Options) => Record<string, unknown>
    }
  }
  /** Which JSON Schema to generate. */
  interface Options {
    readonly target: 'draft-2020-12' | 'draft-07' | 'openapi-3.0' | ({} & string)
    readonly libraryOptions?: Record<string, unknown> | undefined
  }
}

/**
 * Tool parameters as a Standard Schema: a schema that both validates
 * (Standard Schema) and converts itself to JSON Schema (Standard JSON Schema).
 * A Zod 4 schema is one as it is; a Valibot schema once wrapped by
 * `toStandardJsonSchema` from `@valibot/to-json-schema`.
 */
export interface StandardToolSchema<Input = unknown, Output = Input> {
  readonly '~standard': StandardSchemaV1.Props<Input, Output> & StandardJSONSchemaV1.Props<Input, Output>
}

/** Whether `u` claims to be a Standard Schema (has a `~standard` object); what it lacks is checked by {@link standardParts}. */
export const hasStandardProps = (u: unknown): boolean =>
  (typeof u === 'object' || typeof u === 'function') && u !== null && typeof (u as { '~standard'?: unknown })['~standard'] === 'object'

/**
 * The JSON Schema and the validate function of a Standard Schema used as tool
 * parameters: the JSON Schema of its input (what the model writes), draft
 * 2020-12, without `$schema` (providers are told no dialect for io-ts tools
 * either).
 *
 * @throws TypeError saying what is missing: a `validate`, the Standard JSON
 * Schema interface (with the adapter to use for Valibot), a converter that
 * works, or an object schema.
 */
export function standardParts(schema: StandardToolSchema): { readonly jsonSchema: JsonObject; readonly validate: StandardSchemaV1.Props['validate'] } {
  const props = schema['~standard']
  const vendor = typeof props.vendor === 'string' ? props.vendor : 'unknown'
  if (typeof props.validate !== 'function') throw new TypeError(`parameters are a Standard Schema (vendor ${vendor}) without a validate function`)
  const converter = (props as Partial<StandardJSONSchemaV1.Props>).jsonSchema
  if (typeof converter !== 'object' || converter === null || typeof converter.input !== 'function') {
    const hint = vendor === 'valibot' ? ` Wrap it with toStandardJsonSchema(...) from '@valibot/to-json-schema'.` : ''
    throw new TypeError(
      `parameters are a Standard Schema (vendor ${vendor}) without the Standard JSON Schema interface (~standard.jsonSchema), so there is no JSON Schema to send to the model.${hint}`,
    )
  }
  let generated: unknown
  try {
    generated = converter.input({ target: 'draft-2020-12' })
  } catch (error) {
    throw new TypeError(`the JSON Schema of the parameters (vendor ${vendor}) could not be generated: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    })
  }
  return { jsonSchema: objectSchema(generated, `the JSON Schema generated by ${vendor}`), validate: props.validate }
}

/**
 * `schema` as tool parameters: an object schema, with `$schema` left out.
 *
 * @throws TypeError when it is not a JSON Schema of an object (`type: "object"`).
 */
export function objectSchema(schema: unknown, what: string): JsonObject {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) throw new TypeError(`${what} is not a JSON Schema object, got ${describeValue(schema)}`)
  const { $schema: _, ...rest } = schema as JsonObject
  if (rest['type'] !== 'object') {
    throw new TypeError(`tool parameters must describe an object: ${what} has type ${JSON.stringify(rest['type']) ?? 'undefined'}, not "object"`)
  }
  return rest
}

/** The decode of a Standard Schema's result: its value, or one line per issue. */
function fromResult<A>(raw: unknown, result: StandardSchemaV1.Result<A>): Either<readonly string[], A> {
  if (result.issues === undefined) return right(result.value)
  // An empty issue list is still a failure, by the spec (`issues` present).
  if (result.issues.length === 0) return left(['at (root): rejected, with no issue given'])
  return left(result.issues.map((issue) => `at ${formatPath(raw, (issue.path ?? []).map(keyOf))}: ${issue.message}`))
}

const keyOf = (segment: PropertyKey | { readonly key: PropertyKey }): PropertyKey => (typeof segment === 'object' ? segment.key : segment)

/**
 * A tool's `decodeArguments` over a Standard Schema's `validate`. A
 * synchronous validate gives a synchronous decode; an asynchronous one, a
 * Promise of it.
 */
export function standardDecoder<A>(
  validate: StandardSchemaV1.Props<unknown, A>['validate'],
): (raw: unknown) => Either<readonly string[], A> | Promise<Either<readonly string[], A>> {
  return (raw) => {
    const result = validate(raw)
    return isThenable(result) ? Promise.resolve(result).then((settled) => fromResult(raw, settled)) : fromResult(raw, result)
  }
}
