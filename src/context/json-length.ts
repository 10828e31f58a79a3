/**
 * The length of a value's JSON text without making the text: what
 * `JSON.stringify(value)?.length ?? 0` gives (0 where it throws), for the
 * token estimate of tool-call arguments and extension data
 * (`estimate-tokens.ts`).
 *
 * `JSON.stringify` is a runtime call that builds the text: about 5,500
 * instructions for the small arguments of a benchmark tool call, and the
 * Agent's default sliding window estimates every call once. Measured here,
 * plain data (what parsed arguments are) costs a fraction of that: agent-tools
 * 200 under callgrind (40 warm-up runs, two full GCs before each of 4 runs,
 * --single-threaded), 155.1 -> 154.7 M instructions a run: its calls of
 * `JSON.stringify`, 600 a run, cost about 2 M, the walk 1 M of that.
 *
 * Only plain data is measured: strings, finite and non-finite numbers,
 * booleans, `null`, arrays and objects whose prototype is `Array.prototype`
 * or `Object.prototype` with no `toJSON`, and `undefined`, functions and
 * symbols in them (left out of an object, `null` in an array) — a few levels
 * deep. Anything else (a `toJSON`, a class instance, a `BigInt`, a value
 * nested deeper, a cycle) is left to `JSON.stringify` itself, whatever the
 * walk read before.
 */

/** Levels the walk enters before it leaves the value to `JSON.stringify` (a cycle ends there too). */
const MAX_DEPTH = 16

/** What a string holds that JSON escapes: a quote, a backslash, a control character, a surrogate (paired or lone). */
const ESCAPED = /["\\\u0000-\u001F\uD800-\uDFFF]/

/** Strings shorter than this are scanned by a loop, longer ones first by {@link ESCAPED}. */
const SCAN_BY_LOOP = 64

/** A result of the walk: the value is not plain data, `JSON.stringify` measures it. */
const UNKNOWN = -1

/** What the walk gives for `undefined`, a function or a symbol: nothing in an object, `null` in an array. */
const SKIPPED = -2

/** See the module comment. */
export function jsonLength(value: unknown): number {
  // Anything JSON cannot encode (cycles, BigInt, a getter that throws) is something no
  // adapter can send either, so it counts as nothing rather than throwing.
  try {
    const length = measure(value, 0)
    if (length === SKIPPED) return 0
    if (length !== UNKNOWN) return length
    return JSON.stringify(value)?.length ?? 0
  } catch {
    return 0
  }
}

function measure(value: unknown, depth: number): number {
  switch (typeof value) {
    case 'string':
      return quotedLength(value)
    case 'number':
      return Number.isFinite(value) ? String(value).length : 4
    case 'boolean':
      return value ? 4 : 5
    case 'undefined':
    case 'function':
    case 'symbol':
      return SKIPPED
    case 'object':
      if (value === null) return 4
      if (depth >= MAX_DEPTH) return UNKNOWN
      return Array.isArray(value) ? arrayLength(value, depth) : objectLength(value, depth)
    default:
      return UNKNOWN
  }
}

function arrayLength(array: readonly unknown[], depth: number): number {
  if (Object.getPrototypeOf(array) !== Array.prototype || (array as { toJSON?: unknown }).toJSON !== undefined) return UNKNOWN
  const n = array.length
  // The brackets and the commas between the items.
  let length = n === 0 ? 2 : n + 1
  for (let i = 0; i < n; i++) {
    const item = measure(array[i], depth + 1)
    if (item === UNKNOWN) return UNKNOWN
    length += item === SKIPPED ? 4 : item
  }
  return length
}

function objectLength(object: object, depth: number): number {
  if (Object.getPrototypeOf(object) !== Object.prototype || (object as { toJSON?: unknown }).toJSON !== undefined) return UNKNOWN
  const keys = Object.keys(object)
  let length = 2
  let members = 0
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!
    const item = measure((object as Record<string, unknown>)[key], depth + 1)
    if (item === UNKNOWN) return UNKNOWN
    if (item === SKIPPED) continue
    // The key, its colon, the value, and a comma before every member but the first.
    length += quotedLength(key) + 1 + item + (members++ === 0 ? 0 : 1)
  }
  return length
}

/** The length of `text` as a JSON string: quotes, escapes, and `\uXXXX` for a control character or a lone surrogate. */
function quotedLength(text: string): number {
  const n = text.length
  if (n >= SCAN_BY_LOOP && !ESCAPED.test(text)) return n + 2
  let length = n + 2
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c >= 0x20 && c !== 0x22 && c !== 0x5c && (c < 0xd800 || c > 0xdfff)) continue
    if (c === 0x22 || c === 0x5c || c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d) length += 1
    else if (c < 0x20) length += 5
    else if (c <= 0xdbff && i + 1 < n && text.charCodeAt(i + 1) >= 0xdc00 && text.charCodeAt(i + 1) <= 0xdfff) i++
    else if (c >= 0xd800) length += 5
  }
  return length
}
