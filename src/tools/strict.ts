/**
 * Deep key stripping for decoded tool arguments. Models add keys nobody asked
 * for; `t.type` keeps them, which would hand `execute` values its type does not
 * describe. `exactDeep` makes every object level exact without changing what
 * is accepted or how a rejection reads.
 */
import * as t from 'io-ts'
import { isLeft } from 'fp-ts/lib/Either.js'
import { isKind, keepsStrings } from '../types/codec-kind.js'

const cache = new WeakMap<t.Mixed, t.Mixed>()

/**
 * A codec with the same static type as `codec` whose decode strips unknown keys
 * at every object level: inside arrays, tuples, unions, intersections, records,
 * readonly wrappers, refinements and recursive codecs. It accepts and rejects
 * exactly the values `codec` does, with the same error paths and names.
 * Cached per codec.
 */
export function exactDeep<C extends t.Mixed>(codec: C): C {
  return deep(codec) as C
}

function deep(codec: t.Mixed): t.Mixed {
  const cached = cache.get(codec)
  if (cached !== undefined) return cached
  if (isKind(codec, 'RecursiveType')) {
    // Cached before the definition runs (lazily, on first use), so self-references resolve to the copy.
    const copy: t.Mixed = t.recursion<unknown, unknown, unknown, t.Mixed>(codec.name, () => deep(codec.type as t.Mixed))
    cache.set(codec, copy)
    return copy
  }
  const result = rebuild(codec)
  cache.set(codec, result)
  return result
}

function deepProps(props: t.Props): t.Props {
  return Object.fromEntries(Object.entries(props).map(([key, codec]) => [key, deep(codec)]))
}

/** The same codec under another name, so error messages keep naming what the user wrote. */
function renamed(codec: t.Mixed, name: string): t.Mixed {
  if (codec.name === name) return codec
  const descriptors = { ...Object.getOwnPropertyDescriptors(codec), name: { value: name, enumerable: true } }
  return Object.create(Object.getPrototypeOf(codec), descriptors) as t.Mixed
}

function rebuild(codec: t.Mixed): t.Mixed {
  const { name } = codec
  if (isKind(codec, 'InterfaceType', 'StrictType')) return t.exact(t.type(deepProps(codec.props), name), name)
  if (isKind(codec, 'PartialType')) return t.exact(t.partial(deepProps(codec.props), name), name)
  if (isKind(codec, 'ExactType')) return renamed(deep(codec.type), name)
  // Each member strips to its own keys and io-ts merges the results, so the
  // intersection keeps exactly the union of its members' keys.
  if (isKind(codec, 'IntersectionType')) {
    return t.intersection((codec.types as t.Mixed[]).map(deep) as [t.Mixed, t.Mixed], name)
  }
  if (isKind(codec, 'UnionType')) return union(codec)
  if (isKind(codec, 'RefinementType')) return refinement(codec)
  if (isKind(codec, 'ReadonlyType')) return unlessSame(codec, codec.type, (inner) => t.readonly(inner, name))
  if (isKind(codec, 'ArrayType')) return unlessSame(codec, codec.type, (inner) => t.array(inner, name))
  if (isKind(codec, 'ReadonlyArrayType')) return unlessSame(codec, codec.type, (inner) => t.readonlyArray(inner, name))
  if (isKind(codec, 'DictionaryType')) return record(codec)
  if (isKind(codec, 'TupleType')) {
    const members = codec.types as t.Mixed[]
    const stripped = members.map(deep)
    return stripped.every((member, i) => member === members[i]) ? codec : t.tuple(stripped as [t.Mixed], name)
  }
  return codec
}

/** Rebuilds around `inner` only when it strips something, so leaf-only codecs stay untouched. */
function unlessSame(codec: t.Mixed, inner: t.Mixed, build: (stripped: t.Mixed) => t.Mixed): t.Mixed {
  const stripped = deep(inner)
  return stripped === inner ? codec : build(stripped)
}

/**
 * A union keeps its own validate (which may be a tagged one with better
 * messages) to decide and to report; then the first member that accepts the
 * value strips it. That member is the one the union chose: stripping never
 * changes acceptance, and tagged members accept disjoint values.
 */
function union(codec: t.UnionType<t.Mixed[]>): t.Mixed {
  const members = codec.types as t.Mixed[]
  const stripped = members.map(deep)
  if (stripped.every((member, i) => member === members[i])) return codec
  return new t.UnionType<t.Mixed[], unknown, unknown, unknown>(
    codec.name,
    codec.is,
    (u, c) => {
      const decided = codec.validate(u, c)
      if (isLeft(decided)) return decided
      for (const member of stripped) {
        const result = member.validate(u, c)
        if (!isLeft(result)) return result
      }
      return decided
    },
    codec.encode,
    stripped,
  )
}

/**
 * io-ts rebuilds a changed record with `a[k] = v`, which turns a `"__proto__"`
 * key (JSON.parse makes them own keys) into the object's prototype. Stripping
 * changes records far more often than io-ts alone does, so keys are defined
 * here instead. Domains that rewrite keys keep io-ts's own rebuild.
 */
function record(codec: t.DictionaryType<t.Mixed, t.Mixed>): t.Mixed {
  const stripped = deep(codec.codomain)
  if (stripped === codec.codomain) return codec
  if (codec.domain.encode !== t.identity && !keepsStrings(codec.domain)) return t.record(codec.domain, stripped, codec.name)
  return new t.DictionaryType<t.Mixed, t.Mixed, unknown, unknown, unknown>(
    codec.name,
    codec.is,
    (u, c) => {
      const decided = codec.validate(u, c)
      if (isLeft(decided)) return decided
      const input = u as Record<string, unknown>
      const output: Record<string, unknown> = {}
      for (const key of Object.keys(decided.right as object)) {
        const result = stripped.validate(input[key], t.appendContext(c, key, stripped, input[key]))
        if (isLeft(result)) return result
        Object.defineProperty(output, key, { value: result.right, enumerable: true, writable: true, configurable: true })
      }
      return t.success(output)
    },
    codec.encode,
    codec.domain,
    stripped,
  )
}

/**
 * A refinement runs its predicate on the original decoded value (a predicate
 * may look at keys the stripped value lacks), then returns the stripped one.
 */
function refinement(codec: t.RefinementType<t.Mixed>): t.Mixed {
  const inner = codec.type
  const stripped = deep(inner)
  if (stripped === inner) return codec
  return new t.RefinementType(
    codec.name,
    codec.is,
    (u, c) => {
      const decided = codec.validate(u, c)
      return isLeft(decided) ? decided : stripped.validate(u, c)
    },
    codec.encode,
    stripped,
    codec.predicate,
  )
}
