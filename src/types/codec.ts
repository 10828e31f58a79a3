/**
 * Codec building blocks shared by every boundary type, and the one place that
 * turns io-ts validation errors into sentences a human can act on.
 */
import * as t from 'io-ts'
import { isLeft, type Either, left, right } from 'fp-ts/lib/Either.js'
import { isKind } from './codec-kind.js'

/** A JSON object: what tool arguments, extension data and details are. */
export const JsonObject = t.UnknownRecord
export type JsonObject = t.TypeOf<typeof JsonObject>

/** Whole, non-negative numbers: token counts, timestamps, indices. */
export const NonNegativeInteger = new t.Type<number, number, unknown>(
  'NonNegativeInteger',
  (u): u is number => typeof u === 'number' && Number.isInteger(u) && u >= 0,
  (u, c) => (typeof u === 'number' && Number.isInteger(u) && u >= 0 ? t.success(u) : t.failure(u, c)),
  t.identity,
)

/** Whole numbers of either sign: a usage chunk's change to a count (a provider may revise one down). */
export const Integer = new t.Type<number, number, unknown>(
  'Integer',
  (u): u is number => typeof u === 'number' && Number.isInteger(u),
  (u, c) => (typeof u === 'number' && Number.isInteger(u) ? t.success(u) : t.failure(u, c)),
  t.identity,
)

/** Finite, non-negative numbers: money and rates. */
export const NonNegativeNumber = new t.Type<number, number, unknown>(
  'NonNegativeNumber',
  (u): u is number => typeof u === 'number' && Number.isFinite(u) && u >= 0,
  (u, c) => (typeof u === 'number' && Number.isFinite(u) && u >= 0 ? t.success(u) : t.failure(u, c)),
  t.identity,
)

/**
 * An object codec with required and optional fields. Optional fields are
 * absent rather than `undefined` after a JSON round trip, so they are typed
 * `?:` and never written as `undefined` by this library.
 */
export function struct<R extends t.Props, O extends t.Props>(
  name: string,
  required: R,
  optional: O,
): t.IntersectionC<[t.TypeC<R>, t.PartialC<O>]> {
  return t.intersection([t.type(required), t.partial(optional)], name)
}

/** Reads the literal value a member codec declares for `tag`, looking through intersections, exact and readonly wrappers. */
function tagValueOf(codec: t.Mixed, tag: string): string | undefined {
  if (isKind(codec, 'InterfaceType', 'PartialType')) {
    const prop = (codec.props as Record<string, t.Mixed>)[tag]
    return isKind(prop, 'LiteralType') && typeof prop.value === 'string' ? prop.value : undefined
  }
  if (isKind(codec, 'IntersectionType')) {
    for (const member of codec.types as t.Mixed[]) {
      const v = tagValueOf(member, tag)
      if (v !== undefined) return v
    }
    return undefined
  }
  if (isKind(codec, 'ExactType', 'ReadonlyType', 'RefinementType')) {
    return tagValueOf(codec.type as t.Mixed, tag)
  }
  return undefined
}

/** The tag and members of each union built by {@link taggedUnion}, for code that dispatches on the tag (fast-is.ts). */
const taggedUnions = new WeakMap<t.Mixed, { readonly tag: string; readonly members: ReadonlyMap<string, t.Mixed> }>()

/** The tag and members (by tag value) of a union built by {@link taggedUnion}; `undefined` for any other codec. */
export const taggedUnionOf = (codec: t.Mixed): { readonly tag: string; readonly members: ReadonlyMap<string, t.Mixed> } | undefined => taggedUnions.get(codec)

/**
 * A union discriminated by a string field. Unlike `t.union` it validates only
 * the member the tag names, so a bad `toolCall` block reports the toolCall's
 * fields instead of five members' worth of noise. It stays a `t.UnionType`,
 * so schema converters can still walk its members.
 */
export function taggedUnion<CS extends [t.Mixed, t.Mixed, ...t.Mixed[]]>(
  tag: string,
  codecs: CS,
  name: string,
): t.UnionType<CS, t.TypeOf<CS[number]>, t.OutputOf<CS[number]>, unknown> {
  const byTag = new Map<string, t.Mixed>()
  for (const codec of codecs) {
    const value = tagValueOf(codec, tag)
    if (value === undefined) throw new TypeError(`taggedUnion ${name}: member ${codec.name} has no literal '${tag}' field`)
    if (byTag.has(value)) throw new TypeError(`taggedUnion ${name}: two members share ${tag} '${value}'`)
    byTag.set(value, codec)
  }
  const expected = [...byTag.keys()].map((k) => `'${k}'`).join(' | ')
  const member = (u: unknown): t.Mixed | undefined =>
    typeof u === 'object' && u !== null ? byTag.get((u as Record<string, unknown>)[tag] as string) : undefined
  const union = new t.UnionType<CS, t.TypeOf<CS[number]>, t.OutputOf<CS[number]>, unknown>(
    name,
    (u): u is t.TypeOf<CS[number]> => member(u)?.is(u) ?? false,
    (u, c) => {
      if (typeof u !== 'object' || u === null || Array.isArray(u)) return t.failure(u, c, `expected an object tagged by '${tag}', got ${describeValue(u)}`)
      const codec = member(u)
      if (codec === undefined) {
        const got = (u as Record<string, unknown>)[tag]
        return t.failure(u, c, `'${tag}' must be one of ${expected}, got ${describeValue(got)}`)
      }
      return codec.validate(u, t.appendContext(c, '', codec, u))
    },
    (a) => (member(a) ?? t.unknown).encode(a),
    codecs,
  )
  taggedUnions.set(union, { tag, members: byTag })
  return union
}

/** One problem found while decoding: where, what was expected, what was there. */
export interface DecodeIssue {
  /** A path like `messages[2].content[0].text`, or `(root)`. */
  readonly path: string
  readonly expected: string
  readonly actual: string
  readonly message: string
}

/** A decode failure. `message` lists every issue, one per line. */
export class DecodeError extends Error {
  override readonly name = 'DecodeError'
  constructor(
    readonly what: string,
    readonly issues: readonly DecodeIssue[],
  ) {
    super(`Invalid ${what}:\n${issues.map((i) => `  - ${i.message}`).join('\n')}`)
  }
}

/**
 * Adds `amount` to `record[key]`, own keys only: keys such as `toString` or
 * `__proto__` are data here, not the prototype's.
 */
export function addToRecord(record: Record<string, number>, key: string, amount: number): void {
  const previous = Object.hasOwn(record, key) ? (record[key] ?? 0) : 0
  Object.defineProperty(record, key, { value: previous + amount, enumerable: true, writable: true, configurable: true })
}

/** Words for whatever was thrown or emitted as an error, for messages people and models read. */
export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message === '' ? error.name : error.message
  if (typeof error === 'string') return error
  try {
    return JSON.stringify(error) ?? String(error)
  } catch {
    // Cyclic or BigInt-holding values.
    return String(error)
  }
}

/** Describes a value in a few characters for an error message. */
export function describeValue(u: unknown): string {
  if (u === undefined) return 'undefined (missing)'
  if (typeof u === 'string') return JSON.stringify(u.length > 40 ? `${u.slice(0, 40)}…` : u)
  if (typeof u === 'number' || typeof u === 'boolean' || u === null) return String(u)
  if (Array.isArray(u)) return `an array of ${u.length}`
  if (typeof u === 'object') {
    const constructor = (u as { constructor?: { name?: unknown } }).constructor?.name
    return typeof constructor === 'string' && constructor !== 'Object' ? `an instance of ${constructor}` : 'an object'
  }
  return typeof u
}

function isMemberStep(context: t.Context, i: number): boolean {
  const parent = context[i - 1]?.type
  return isKind(parent, 'IntersectionType', 'UnionType')
}

function pathOf(context: t.Context, root: string): string {
  let path = root
  for (let i = 1; i < context.length; i++) {
    const entry = context[i]!
    const parent = context[i - 1]!
    // Intersections and unions record their members under '0', '1', …: not part of the data's path.
    if (entry.key === '' || isMemberStep(context, i)) continue
    const isIndex = /^\d+$/.test(entry.key) && (isKind(parent.type, 'ArrayType', 'ReadonlyArrayType', 'TupleType') || Array.isArray(parent.actual))
    path += isIndex ? `[${entry.key}]` : path === '' ? entry.key : `.${entry.key}`
  }
  return path === '' ? '(root)' : path
}

/**
 * Turns io-ts errors into issues with readable paths (`messages[2].content`,
 * starting at `root` when given); unions and intersections collapse to their
 * deepest failure, and values are shown truncated.
 */
export function reportErrors(errors: t.Errors, root = ''): DecodeIssue[] {
  const seen = new Set<string>()
  const issues: DecodeIssue[] = []
  for (const error of errors) {
    // A failure of a whole union or intersection member reads as a failure of the union or intersection.
    let lastIndex = error.context.length - 1
    while (lastIndex > 0 && isMemberStep(error.context, lastIndex)) lastIndex--
    const path = pathOf(error.context, root)
    const expected = error.context[lastIndex]?.type.name ?? 'unknown'
    const actual = describeValue(error.value)
    const message = error.message !== undefined ? `at ${path}: ${error.message}` : `at ${path}: expected ${expected}, got ${actual}`
    if (seen.has(message)) continue
    seen.add(message)
    issues.push({ path, expected, actual, message })
  }
  return issues
}

/** Decodes `u` with `codec`, as an Either whose left names every bad path. */
export function decode<A, O>(codec: t.Type<A, O, unknown>, u: unknown, what: string = codec.name): Either<DecodeError, A> {
  const result = codec.decode(u)
  return isLeft(result) ? left(new DecodeError(what, reportErrors(result.left))) : right(result.right)
}

/** Decodes or throws a {@link DecodeError}. For boundaries where a bad value is a programming error. */
export function decodeOrThrow<A, O>(codec: t.Type<A, O, unknown>, u: unknown, what: string = codec.name): A {
  const result = decode(codec, u, what)
  if (isLeft(result)) throw result.left
  return result.right
}
