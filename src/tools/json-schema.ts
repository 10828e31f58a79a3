/**
 * io-ts codec → JSON Schema (draft 2020-12 style) for tool parameters. The
 * converter walks io-ts's codec kinds, recognized by shape so that codecs from
 * any copy of io-ts convert, and a codec is the single source of truth for both
 * what the model is told and what the runtime accepts.
 */
import type * as t from 'io-ts'
import { describeValue, type JsonObject } from '../types/codec.js'
import { copyMismatch, isCodec, isKind } from '../types/codec-kind.js'

const descriptions = new WeakMap<t.Mixed, string>()

/**
 * Attaches a description, emitted as `description` wherever the returned codec
 * appears in a schema (a field, an array item, a union member...).
 *
 * Returns a copy of `codec` of the same class with the same `validate`, `is`
 * and `encode`, never `codec` itself: describing a shared codec such as
 * `t.string` in place would describe every use of it in every tool.
 */
export function withDescription<C extends t.Mixed>(codec: C, description: string): C {
  const copy = Object.create(Object.getPrototypeOf(codec), Object.getOwnPropertyDescriptors(codec)) as C
  descriptions.set(copy, description)
  return copy
}

/**
 * Converts a tool's parameter codec to JSON Schema. No `$schema` key; every
 * object is closed (`additionalProperties: false`).
 *
 * @throws TypeError when the codec is not an object codec, or when some part
 * of it has no JSON Schema equivalent (functions, `never`, recursion, custom
 * `new t.Type`s, records keyed by other than strings...). The message names
 * the path, e.g. `parameters.items[].when`.
 */
export function toJsonSchema(codec: t.Mixed): JsonObject {
  if (!isCodec(codec)) throw new TypeError(`tool parameters must be an io-ts codec, got ${describeValue(codec)}`)
  const schema = convert(codec, 'parameters')
  if (schema['type'] !== 'object') {
    throw new TypeError(
      `tool parameters must be an object codec (t.type, t.partial, t.exact, t.intersection of those, or a string-keyed t.record), got ${codec.name}`,
    )
  }
  return schema
}

const SUPPORTED =
  'Supported: t.type, t.partial, t.exact, t.strict, t.intersection of objects, t.string, t.number, t.boolean, t.null, ' +
  't.unknown, t.Int, brands and refinements (as their base type), t.literal, t.keyof, t.union, t.array, t.readonlyArray, ' +
  't.tuple, t.readonly, t.record with string or string-literal keys, t.UnknownRecord, t.UnknownArray; ' +
  'a union with t.undefined marks an optional object property.'

function unsupported(codec: t.Mixed, path: string, why: string): TypeError {
  return new TypeError(`Cannot convert ${codec.name} at ${path} to JSON Schema: ${why}. ${SUPPORTED}`)
}

function convert(codec: t.Mixed, path: string): JsonObject {
  return describedSchema(codec, convertBare(codec, path))
}

function describedSchema(codec: t.Mixed, schema: JsonObject): JsonObject {
  const description = descriptions.get(codec)
  return description === undefined ? schema : { ...schema, description }
}

function convertBare(codec: t.Mixed, path: string): JsonObject {
  // Wrappers first, so a description on the wrapped codec survives.
  if (isKind(codec, 'RefinementType')) return isInteger(codec) ? { type: 'integer' } : convert(codec.type, path)
  if (isKind(codec, 'ReadonlyType')) return convert(codec.type, path)
  const shape = objectShape(codec, path)
  if (shape !== undefined) return objectSchema(shape)
  if (isKind(codec, 'StringType')) return { type: 'string' }
  if (isKind(codec, 'NumberType')) return { type: 'number' }
  if (isKind(codec, 'BooleanType')) return { type: 'boolean' }
  if (isKind(codec, 'NullType')) return { type: 'null' }
  if (isKind(codec, 'UnknownType', 'AnyType')) return {}
  if (isKind(codec, 'AnyDictionaryType')) return { type: 'object' }
  if (isKind(codec, 'AnyArrayType')) return { type: 'array' }
  if (isKind(codec, 'LiteralType')) return enumSchema([codec.value])
  if (isKind(codec, 'KeyofType')) return enumSchema(Object.keys(codec.keys))
  if (isKind(codec, 'ArrayType', 'ReadonlyArrayType')) {
    return { type: 'array', items: convert(codec.type, `${path}[]`) }
  }
  if (isKind(codec, 'TupleType')) {
    const members = codec.types as t.Mixed[]
    return {
      type: 'array',
      prefixItems: members.map((member, i) => convert(member, `${path}[${i}]`)),
      minItems: members.length,
      maxItems: members.length,
    }
  }
  if (isKind(codec, 'DictionaryType')) return recordSchema(codec, path)
  if (isKind(codec, 'UnionType')) {
    const { schema, optional } = unionSchema(codec, path)
    if (optional) throw unsupported(codec, path, 'undefined can only make an object property optional')
    return schema
  }
  if (isKind(codec, 'RecursiveType')) throw unsupported(codec, path, 'recursive codecs have no finite schema')
  if (isKind(codec, 'UndefinedType', 'VoidType')) {
    throw unsupported(codec, path, 'undefined has no JSON value')
  }
  throw unsupported(codec, path, copyMismatch(codec) ?? `${codec.name} has no known JSON structure`)
}

function isInteger(codec: t.RefinementType<t.Mixed>): boolean {
  return (codec.name === 'Int' || codec.name === 'Integer') && isKind(codec.type, 'NumberType')
}

/** The properties of an object codec, before they become a schema. */
interface Shape {
  readonly properties: Map<string, JsonObject>
  readonly required: Set<string>
}

function objectSchema(shape: Shape): JsonObject {
  return {
    type: 'object',
    // fromEntries defines own properties, so a field named `__proto__` stays a field.
    properties: Object.fromEntries(shape.properties),
    required: [...shape.required],
    additionalProperties: false,
  }
}

/** The shape of an object codec, or `undefined` if `codec` is not one. */
function objectShape(codec: t.Mixed, path: string): Shape | undefined {
  // Deprecated StrictType still exists in the wild; it is exact(type(props)).
  if (isKind(codec, 'InterfaceType', 'StrictType')) return propsShape(codec.props, path, true)
  if (isKind(codec, 'PartialType')) return propsShape(codec.props, path, false)
  if (isKind(codec, 'ExactType', 'ReadonlyType', 'RefinementType')) {
    return objectShape(codec.type, path)
  }
  if (isKind(codec, 'IntersectionType')) {
    const merged: Shape = { properties: new Map(), required: new Set() }
    for (const member of codec.types as t.Mixed[]) {
      const shape = objectShape(member, path)
      if (shape === undefined) throw unsupported(member, path, copyMismatch(member) ?? 'an intersection may only combine object codecs')
      for (const [key, schema] of shape.properties) {
        const existing = merged.properties.get(key)
        const same = existing === undefined || JSON.stringify(existing) === JSON.stringify(schema)
        merged.properties.set(key, same ? schema : { allOf: [existing, schema] })
      }
      for (const key of shape.required) merged.required.add(key)
    }
    return merged
  }
  return undefined
}

function propsShape(props: t.Props, path: string, required: boolean): Shape {
  const shape: Shape = { properties: new Map(), required: new Set() }
  for (const [key, codec] of Object.entries(props)) {
    const keyPath = /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`
    if (isKind(codec, 'UnionType')) {
      const { schema, optional } = unionSchema(codec, keyPath)
      shape.properties.set(key, describedSchema(codec, schema))
      if (required && !optional) shape.required.add(key)
    } else {
      shape.properties.set(key, convert(codec, keyPath))
      if (required) shape.required.add(key)
    }
  }
  return shape
}

const isUndefined = (codec: t.Mixed): boolean => isKind(codec, 'UndefinedType', 'VoidType')

/** Members of nested unions, flattened, except described ones: their description belongs to them. */
function flatten(codec: t.UnionType<t.Mixed[]>): t.Mixed[] {
  return (codec.types as t.Mixed[]).flatMap((member) =>
    isKind(member, 'UnionType') && !descriptions.has(member) ? flatten(member) : [member],
  )
}

/** Literal values of an undescribed literal or keyof codec, else `undefined`. */
function literalValues(codec: t.Mixed): Array<string | number | boolean> | undefined {
  if (descriptions.has(codec)) return undefined
  if (isKind(codec, 'LiteralType')) return [codec.value]
  if (isKind(codec, 'KeyofType')) return Object.keys(codec.keys)
  return undefined
}

/** A union's schema, and whether it admits `undefined` (which JSON can only express as an absent property). */
function unionSchema(codec: t.UnionType<t.Mixed[]>, path: string): { schema: JsonObject; optional: boolean } {
  const members = flatten(codec)
  const defined = members.filter((member) => !isUndefined(member))
  if (defined.length === 0) throw unsupported(codec, path, 'a union of only undefined has no JSON value')
  // Literals collapse into one enum, placed where the first literal was.
  const values: Array<string | number | boolean> = []
  const schemas: JsonObject[] = []
  let enumAt = -1
  for (const member of defined) {
    const literal = literalValues(member)
    if (literal === undefined) {
      schemas.push(convert(member, path))
      continue
    }
    if (enumAt === -1) enumAt = schemas.length
    values.push(...literal)
  }
  if (enumAt !== -1) schemas.splice(enumAt, 0, enumSchema(values))
  const [only] = schemas
  const schema = schemas.length === 1 && only !== undefined ? only : { anyOf: schemas }
  return { schema, optional: defined.length < members.length }
}

function enumSchema(values: ReadonlyArray<string | number | boolean>): JsonObject {
  const unique = [...new Set(values)]
  const types = new Set(unique.map((value) => typeof value))
  const [type] = types
  const typed: JsonObject = types.size === 1 && type !== undefined ? { type } : {}
  return unique.length === 1 ? { ...typed, const: unique[0] } : { ...typed, enum: unique }
}

/** String keys a record's domain allows, when it is a finite set; `undefined` for open or non-string domains. */
function domainKeys(domain: t.Mixed): string[] | undefined {
  if (isKind(domain, 'LiteralType')) return typeof domain.value === 'string' ? [domain.value] : undefined
  if (isKind(domain, 'KeyofType')) return Object.keys(domain.keys)
  if (isKind(domain, 'UnionType')) {
    const keys: string[] = []
    for (const member of domain.types as t.Mixed[]) {
      const memberKeys = domainKeys(member)
      if (memberKeys === undefined) return undefined
      keys.push(...memberKeys)
    }
    return keys
  }
  return undefined
}

function recordSchema(codec: t.DictionaryType<t.Mixed, t.Mixed>, path: string): JsonObject {
  if (isKind(codec.domain, 'StringType')) {
    return { type: 'object', additionalProperties: convert(codec.codomain, `${path}[string]`) }
  }
  const keys = domainKeys(codec.domain)
  if (keys === undefined) {
    throw unsupported(codec, path, `record keys must be t.string or string literals, got ${codec.domain.name}`)
  }
  // io-ts requires every key of a finite domain, so they are all required.
  const value = (key: string): JsonObject => convert(codec.codomain, `${path}[${JSON.stringify(key)}]`)
  return objectSchema({ properties: new Map(keys.map((key) => [key, value(key)])), required: new Set(keys) })
}
