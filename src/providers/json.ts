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
