/**
 * Validating tool arguments against a plain JSON Schema, with Ajv when the
 * app has installed it. Ajv is not a dependency of rxagent: it is loaded with
 * a dynamic `import()`, once per dialect and process, when the first JSON
 * Schema tool is defined. Without Ajv, arguments reach `execute` unvalidated.
 */
import { left, right, type Either } from 'fp-ts/lib/Either.js'
import type { JsonObject } from '../types/codec.js'
import { formatPath, pointerKeys } from './issue-path.js'

/** The JSON Schema dialects Ajv validates, by the module that validates them. */
type Dialect = 'ajv/dist/2020.js' | 'ajv/dist/2019.js' | 'ajv'

/** One Ajv error, as far as it is read here. */
interface AjvError {
  readonly instancePath: string
  readonly keyword: string
  readonly message?: string
  readonly params: Readonly<Record<string, unknown>>
}

/** A compiled validator: `true`, or `false` with its `errors`. */
type Validate = ((data: unknown) => boolean) & { readonly errors?: readonly AjvError[] | null }

interface Ajv {
  compile(schema: object): Validate
}

/**
 * Ajv's options here: every problem reported (the model fixes them all at
 * once); unknown keywords and formats tolerated (tool schemas carry
 * annotations of their own; formats need `ajv-formats`, which is not loaded,
 * so `format` is not checked); no schema kept by `$id` (two tools may share
 * one); no console output.
 */
const OPTIONS = { strict: false, allErrors: true, validateFormats: false, addUsedSchema: false, logger: false } as const

/** The Ajv of each dialect: loading, loaded, or `null` when it could not be loaded. */
const instances = new Map<Dialect, Promise<Ajv | null> | Ajv | null>()

/** Which Ajv build validates `schema`: by its `$schema`; draft 2020-12 when it names none (MCP's default dialect). */
export function dialectOf(schema: JsonObject): Dialect {
  const uri = typeof schema['$schema'] === 'string' ? schema['$schema'] : ''
  if (/draft-0[67]/.test(uri)) return 'ajv'
  if (uri.includes('2019-09')) return 'ajv/dist/2019.js'
  return 'ajv/dist/2020.js'
}

/** The class a dynamically imported Ajv module exports (CommonJS: on `default`, and on `default.default`). */
function ajvClass(module: unknown): (new (options: typeof OPTIONS) => Ajv) | undefined {
  const outer = (module as { default?: unknown }).default
  const inner = typeof outer === 'function' ? (outer as { default?: unknown }).default : undefined
  const candidate = typeof inner === 'function' ? inner : outer
  return typeof candidate === 'function' ? (candidate as new (options: typeof OPTIONS) => Ajv) : undefined
}

/** Imports one dialect's Ajv. Never rejects: a missing (or broken) Ajv is `null`. */
async function importAjv(dialect: Dialect): Promise<Ajv | null> {
  try {
    // One literal specifier per dialect, so that bundlers see each.
    const module: unknown =
      dialect === 'ajv' ? await import('ajv') : dialect === 'ajv/dist/2019.js' ? await import('ajv/dist/2019.js') : await import('ajv/dist/2020.js')
    const Class = ajvClass(module)
    return Class === undefined ? null : new Class(OPTIONS)
  } catch {
    return null
  }
}

/** The Ajv of `dialect`: itself once loaded, `null` when missing, else the Promise of either. Starts loading on first use. */
function ajvFor(dialect: Dialect): Promise<Ajv | null> | Ajv | null {
  const known = instances.get(dialect)
  if (known !== undefined) return known
  const loading = importAjv(dialect).then((ajv) => {
    instances.set(dialect, ajv)
    return ajv
  })
  instances.set(dialect, loading)
  return loading
}

/** One line per Ajv error, with io-ts-style paths. */
function messages(raw: unknown, errors: readonly AjvError[]): string[] {
  return errors.map((error) => {
    const keys = pointerKeys(error.instancePath)
    const missing = error.keyword === 'required' ? error.params['missingProperty'] : undefined
    if (typeof missing === 'string') return `at ${formatPath(raw, [...keys, missing])}: is required, got undefined (missing)`
    const extra = error.keyword === 'additionalProperties' ? error.params['additionalProperty'] : undefined
    const detail = typeof extra === 'string' ? ` (${JSON.stringify(extra)})` : ''
    return `at ${formatPath(raw, keys)}: ${error.message ?? `fails '${error.keyword}'`}${detail}`
  })
}

/** How a tool's schema stands with its validator. */
type State =
  | { readonly kind: 'waiting'; readonly ready: Promise<void> }
  | { readonly kind: 'ready'; readonly validate: Validate }
  | { readonly kind: 'unvalidated' }
  | { readonly kind: 'broken'; readonly problem: string }

/**
 * A tool's `decodeArguments` for a JSON Schema: Ajv's verdict, with every
 * problem on its own line. Synchronous once Ajv is loaded (it starts loading
 * here, at definition time); a Promise for a call that comes before. Without
 * Ajv the arguments pass as they are. A schema Ajv cannot compile makes each
 * call an error naming the problem: the schema is the app's mistake, and
 * running the tool on unchecked arguments would hide it.
 */
export function jsonSchemaDecoder<A>(schema: JsonObject): (raw: unknown) => Either<readonly string[], A> | Promise<Either<readonly string[], A>> {
  const dialect = dialectOf(schema)
  // Ajv looks `$schema` up among the meta-schemas it knows: the dialect is chosen here instead.
  const { $schema: _, ...compilable } = schema
  let state: State
  const settle = (ajv: Ajv | null): void => {
    if (ajv === null) return void (state = { kind: 'unvalidated' })
    try {
      state = { kind: 'ready', validate: ajv.compile(compilable) }
    } catch (error) {
      state = { kind: 'broken', problem: `the tool's JSON Schema does not compile: ${error instanceof Error ? error.message : String(error)}` }
    }
  }
  const decode = (raw: unknown): Either<readonly string[], A> | Promise<Either<readonly string[], A>> => {
    switch (state.kind) {
      case 'ready':
        return state.validate(raw) ? right(raw as A) : left(messages(raw, state.validate.errors ?? []))
      case 'unvalidated':
        // The documented behavior without Ajv: JSON Schema is what the model is told, not a check.
        return right(raw as A)
      case 'broken':
        return left([state.problem])
      case 'waiting':
        return state.ready.then(() => decode(raw))
    }
  }
  // Loaded now: by the time the model calls the tool, Ajv is ready and decoding is synchronous.
  const ajv = ajvFor(dialect)
  if (ajv instanceof Promise) state = { kind: 'waiting', ready: ajv.then(settle) }
  else settle(ajv)
  return decode
}
