/**
 * io-ts codecs recognized by their shape (`_tag` plus the fields of each kind),
 * never by `instanceof`. io-ts is a peer dependency: a user's codecs may come
 * from another copy of io-ts than the one rxagent loads (npm installs two when
 * versions do not dedupe), and `instanceof` would reject every one of them.
 */
import type * as t from 'io-ts'

/** The io-ts kinds rxagent looks into, by tag. */
interface CodecKinds {
  InterfaceType: t.InterfaceType<t.Props>
  StrictType: t.StrictType<t.Props>
  PartialType: t.PartialType<t.Props>
  ExactType: t.ExactType<t.Mixed>
  ReadonlyType: t.ReadonlyType<t.Mixed>
  RefinementType: t.RefinementType<t.Mixed>
  RecursiveType: t.RecursiveType<t.Mixed>
  ArrayType: t.ArrayType<t.Mixed>
  ReadonlyArrayType: t.ReadonlyArrayType<t.Mixed>
  TupleType: t.TupleType<t.Mixed[]>
  IntersectionType: t.IntersectionType<t.Mixed[]>
  UnionType: t.UnionType<t.Mixed[]>
  DictionaryType: t.DictionaryType<t.Mixed, t.Mixed>
  LiteralType: t.LiteralType<string | number | boolean>
  KeyofType: t.KeyofType<Record<string, unknown>>
  StringType: t.StringType
  NumberType: t.NumberType
  BooleanType: t.BooleanType
  NullType: t.NullType
  UndefinedType: t.UndefinedType
  VoidType: t.VoidType
  UnknownType: t.UnknownType
  AnyType: t.AnyType
  AnyDictionaryType: t.AnyDictionaryType
  AnyArrayType: t.AnyArrayType
}
type CodecKind = keyof CodecKinds

type Fields = Record<string, unknown>
const isObject = (u: unknown): u is Fields => typeof u === 'object' && u !== null
const isFunction = (u: unknown): boolean => typeof u === 'function'

/** Whether `u` has what every io-ts `Type` has: a name, `is`, `validate`, `encode`, `decode`. */
export function isCodec(u: unknown): u is t.Mixed {
  return (
    isObject(u) &&
    typeof u['name'] === 'string' &&
    isFunction(u['is']) &&
    isFunction(u['validate']) &&
    isFunction(u['encode']) &&
    isFunction(u['decode'])
  )
}

const isCodecArray = (u: unknown): boolean => Array.isArray(u) && u.every(isCodec)
const isProps = (u: unknown): boolean => isObject(u) && Object.values(u).every(isCodec)
const leaf = (): boolean => true

/** What each kind has besides its tag. `RecursiveType`'s `type` is a getter that runs the definition: not touched here. */
const shapes: { readonly [K in CodecKind]: (codec: Fields) => boolean } = {
  InterfaceType: (c) => isProps(c['props']),
  StrictType: (c) => isProps(c['props']),
  PartialType: (c) => isProps(c['props']),
  ExactType: (c) => isCodec(c['type']),
  ReadonlyType: (c) => isCodec(c['type']),
  RefinementType: (c) => isCodec(c['type']) && isFunction(c['predicate']),
  RecursiveType: (c) => isFunction(c['runDefinition']),
  ArrayType: (c) => isCodec(c['type']),
  ReadonlyArrayType: (c) => isCodec(c['type']),
  TupleType: (c) => isCodecArray(c['types']),
  IntersectionType: (c) => isCodecArray(c['types']),
  UnionType: (c) => isCodecArray(c['types']),
  DictionaryType: (c) => isCodec(c['domain']) && isCodec(c['codomain']),
  LiteralType: (c) => ['string', 'number', 'boolean'].includes(typeof c['value']),
  KeyofType: (c) => isObject(c['keys']),
  StringType: leaf,
  NumberType: leaf,
  BooleanType: leaf,
  NullType: leaf,
  UndefinedType: leaf,
  VoidType: leaf,
  UnknownType: leaf,
  AnyType: leaf,
  AnyDictionaryType: leaf,
  AnyArrayType: leaf,
}

const tagOf = (u: unknown): unknown => (isObject(u) ? u['_tag'] : undefined)
const isKnownTag = (tag: unknown): tag is CodecKind => typeof tag === 'string' && Object.hasOwn(shapes, tag)

/** Whether `codec` is an io-ts codec of one of `kinds`, from any copy of io-ts. */
export function isKind<K extends CodecKind>(codec: unknown, ...kinds: readonly K[]): codec is CodecKinds[K] {
  const tag = tagOf(codec)
  return (kinds as readonly unknown[]).includes(tag) && isKnownTag(tag) && isCodec(codec) && shapes[tag](codec as unknown as Fields)
}

/**
 * Why `codec` is not recognized when the reason is a mismatch of io-ts copies:
 * it carries the tag of a known kind without that kind's fields (another
 * version of io-ts), or it is not a codec at all. `undefined` otherwise.
 */
export function copyMismatch(codec: unknown): string | undefined {
  const tag = tagOf(codec)
  if (isKnownTag(tag) && !isKind(codec, tag)) {
    return (
      `it looks like an io-ts ${tag} but does not have its shape: two copies of io-ts, of different versions, are installed. ` +
      'rxagent declares io-ts as a peer dependency: install one version (`npm ls io-ts` shows the copies)'
    )
  }
  return undefined
}

/**
 * Whether `codec` encodes (and decodes) a string as itself, so keys it
 * accepts come out unchanged. `t.identity` is per copy, so this reads the kind.
 */
export function keepsStrings(codec: t.Mixed): boolean {
  if (isKind(codec, 'StringType', 'LiteralType', 'KeyofType')) return true
  if (isKind(codec, 'RefinementType', 'ReadonlyType')) return keepsStrings(codec.type)
  if (isKind(codec, 'UnionType')) return (codec.types as t.Mixed[]).every(keepsStrings)
  return false
}
