/**
 * Tool parameters for Gemini: its OpenAPI subset of JSON Schema (the
 * `parameters` field), converted from the JSON Schema a tool declares.
 * Models that take full JSON Schema get it as is (`parametersJsonSchema`,
 * see `google-request.ts`).
 */
import { isRecord, type Json } from './json.js'

/** Keywords of Gemini's schema subset that carry over unchanged. */
const keptKeywords = [
  'title',
  'description',
  'nullable',
  'maxItems',
  'minItems',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
  'default',
  'example',
  'propertyOrdering',
] as const

/** The only formats Gemini accepts, per type; others are rejected with a 400. */
const allowedFormats: Readonly<Record<string, ReadonlySet<string>>> = {
  string: new Set(['enum', 'date-time']),
  integer: new Set(['int32', 'int64']),
  number: new Set(['float', 'double']),
}

/** Recursion guard for `$ref` cycles: past it a schema is a plain object. */
const MAX_DEPTH = 24

const withNote = (description: unknown, note: string): string => (typeof description === 'string' && description !== '' ? `${description} (${note})` : note)

const isNullSchema = (s: unknown): boolean => isRecord(s) && (s['type'] === 'null' || (s['const'] === null && s['type'] === undefined))

function resolveRef(root: Json, ref: string): unknown {
  const m = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref)
  if (m === null) return undefined
  const defs = root[m[1]!]
  const name = m[2]!.replace(/~1/g, '/').replace(/~0/g, '~')
  return isRecord(defs) ? defs[name] : undefined
}

/**
 * A JSON Schema in Gemini's OpenAPI subset: local `$ref`s inlined, type
 * arrays and `null` members of `anyOf`/`oneOf` turned into `nullable`,
 * `oneOf` into `anyOf`, `const` into a one-value `enum`, non-string enums
 * into a description note (Gemini enums are strings only), `allOf` merged,
 * tuple items into an `anyOf` of them, and everything else the subset lacks
 * (`additionalProperties`, `$schema`, unsupported formats...) dropped.
 */
export function geminiSchema(schema: unknown): Json {
  const root = isRecord(schema) ? schema : {}
  return convertSchema(root, root, 0)
}

function convertSchema(s: unknown, root: Json, depth: number): Json {
  if (!isRecord(s)) return {}
  if (depth > MAX_DEPTH) return { type: 'object' }
  if (typeof s['$ref'] === 'string') {
    const target = convertSchema(resolveRef(root, s['$ref']), root, depth + 1)
    return typeof s['description'] === 'string' ? { ...target, description: s['description'] } : target
  }
  const out: Json = {}
  for (const k of keptKeywords) if (s[k] !== undefined) out[k] = s[k]

  let types = typeof s['type'] === 'string' ? [s['type']] : Array.isArray(s['type']) ? s['type'].filter((t): t is string => typeof t === 'string') : []
  if (types.includes('null')) {
    out['nullable'] = true
    types = types.filter((t) => t !== 'null')
  }

  let values = s['const'] !== undefined ? [s['const']] : Array.isArray(s['enum']) ? s['enum'] : undefined
  if (values !== undefined) {
    if (values.includes(null)) {
      out['nullable'] = true
      values = values.filter((v) => v !== null)
    }
    if (values.length > 0 && values.every((v) => typeof v === 'string')) {
      out['enum'] = values
      if (types.length === 0) types = ['string']
    } else if (values.length > 0) {
      out['description'] = withNote(out['description'], `one of ${values.map((v) => JSON.stringify(v)).join(', ')}`)
      if (types.length === 0) {
        const first = values[0]
        types = [typeof first === 'number' ? (Number.isInteger(first) ? 'integer' : 'number') : typeof first === 'boolean' ? 'boolean' : 'string']
      }
    }
  }
  if (types.length === 1) out['type'] = types[0]
  else if (types.length > 1) out['anyOf'] = types.map((type) => ({ type }))

  const format = s['format']
  if (typeof format === 'string' && typeof out['type'] === 'string' && allowedFormats[out['type']]?.has(format) === true) out['format'] = format

  if (isRecord(s['properties'])) {
    const properties: Json = {}
    for (const [name, value] of Object.entries(s['properties'])) properties[name] = convertSchema(value, root, depth + 1)
    out['properties'] = properties
    const required = Array.isArray(s['required']) ? s['required'].filter((k): k is string => typeof k === 'string' && Object.hasOwn(properties, k)) : []
    if (required.length > 0) out['required'] = required
    out['type'] ??= 'object'
  }

  const tuple = Array.isArray(s['prefixItems']) ? s['prefixItems'] : Array.isArray(s['items']) ? s['items'] : undefined
  if (isRecord(s['items'])) out['items'] = convertSchema(s['items'], root, depth + 1)
  else if (tuple !== undefined && tuple.length > 0) {
    const members = tuple.map((m) => convertSchema(m, root, depth + 1))
    out['items'] = members.length === 1 ? members[0] : { anyOf: members }
  }
  if (out['items'] !== undefined) out['type'] ??= 'array'

  const union = Array.isArray(s['anyOf']) ? s['anyOf'] : Array.isArray(s['oneOf']) ? s['oneOf'] : undefined
  if (union !== undefined) {
    if (union.some(isNullSchema)) out['nullable'] = true
    const members = union.filter((m) => !isNullSchema(m)).map((m) => convertSchema(m, root, depth + 1))
    if (members.length === 1) Object.assign(out, { ...members[0], ...out })
    else if (members.length > 1) out['anyOf'] = members
  }

  if (Array.isArray(s['allOf'])) {
    for (const member of s['allOf'].map((m) => convertSchema(m, root, depth + 1))) {
      for (const [k, v] of Object.entries(member)) {
        if (k === 'properties' && isRecord(v)) out['properties'] = { ...(isRecord(out['properties']) ? out['properties'] : {}), ...v }
        else if (k === 'required' && Array.isArray(v)) out['required'] = [...new Set([...(Array.isArray(out['required']) ? out['required'] : []), ...v])]
        else out[k] ??= v
      }
    }
  }
  return out
}
