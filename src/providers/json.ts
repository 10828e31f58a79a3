/** Narrowing decoded JSON: the adapters read provider payloads field by field, never trusting a shape. */

/** A JSON object, once narrowed from `unknown`. */
export type Json = Record<string, unknown>

/** Whether `value` is a JSON object (not an array, not null). */
export const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

/** `value` if it is a string. */
export const stringOf = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)

/** `o[key]` if it is an object. */
export const recordAt = (o: Json | undefined, key: string): Json | undefined => {
  const v = o?.[key]
  return isRecord(v) ? v : undefined
}

/** `o[key]` if it is a string. */
export const stringAt = (o: Json | undefined, key: string): string | undefined => {
  const v = o?.[key]
  return typeof v === 'string' ? v : undefined
}

/** `o[key]` if it is a finite, non-negative number (a token count), rounded. */
export const countAt = (o: Json | undefined, key: string): number | undefined => {
  const v = o?.[key]
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.round(v) : undefined
}

// The `as…` forms take the value, not the object and the key. Decoders read fields as
// `asString(o?.['name'])`: the property read then sits in the decoder, where each site keeps its own
// monomorphic inline cache. Inside `stringAt(o, key)` one `o[key]` site serves every field of every
// decoder and goes megamorphic — each read, and above all each read of an absent field, is then a
// generic lookup. Measured on the WIRE text stream (20k deltas, in process, CPU µs per event, SSE
// parsing included): the OpenAI Chat decoder 2.95 → 2.3 (with `firstChoice` and `reasoningOf` below
// it allocating no closure or array per event); the floor (JSON.parse + inline reads) 1.6.

/** `value` if it is a JSON object. */
export const asRecord = (value: unknown): Json | undefined => (isRecord(value) ? value : undefined)

/** `value` if it is a finite, non-negative number (a token count), rounded. */
export const asCount = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined)
