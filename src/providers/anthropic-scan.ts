/**
 * The one Anthropic event a long answer is made of — a text or argument
 * delta — read without `JSON.parse` when it is in the API's own compact form:
 *
 *   {"type":"content_block_delta","index":N,"delta":{"type":"text_delta","text":"…"}}
 *   {"type":"content_block_delta","index":N,"delta":{"type":"input_json_delta","partial_json":"…"}}
 *
 * Why hand-written: `JSON.parse` of that object (three objects, four strings)
 * was the largest single cost of the whole client — 24% of its CPU time on the
 * WIRE Anthropic text stream, in process. The scan is exact: it accepts an
 * event only if the data is byte for byte that shape, with a canonical index
 * and a string that is valid JSON (one without quotes, backslashes or control
 * characters is taken as is; any other is parsed by `JSON.parse` as a string
 * literal). Anything else — other key orders, extra fields, whitespace,
 * malformed JSON — returns `undefined`, and the event is parsed whole as
 * before, with the same results and the same errors.
 */

const head = '{"type":"content_block_delta","index":'
const textMid = ',"delta":{"type":"text_delta","text":"'
const jsonMid = ',"delta":{"type":"input_json_delta","partial_json":"'
const tail = '"}}'

/** What {@link scanDelta} read besides the string (one object, reused: no allocation per event). */
export const scanned = { index: 0, json: false }

/** The delta's string if `data` is a delta event in the compact form (its index and kind in {@link scanned}), else `undefined`. */
export function scanDelta(data: string): string | undefined {
  // `slice(…) ===` rather than `startsWith`: the data is a slice of the parser's buffer, and on such a
  // string startsWith and charCodeAt were 2-4× slower than one short copy and one comparison.
  if (data.slice(0, head.length) !== head || data.slice(data.length - tail.length) !== tail) return undefined
  // The index: canonical JSON digits (no leading zero), at most 9 of them.
  let i = head.length
  let index = 0
  const first = i
  for (let c = data.charCodeAt(i); c >= 48 && c <= 57; c = data.charCodeAt(++i)) index = index * 10 + (c - 48)
  const digits = i - first
  if (digits === 0 || digits > 9 || (digits > 1 && data.charCodeAt(first) === 48)) return undefined
  let json: boolean
  if (data.slice(i, i + textMid.length) === textMid) {
    json = false
    i += textMid.length
  } else if (data.slice(i, i + jsonMid.length) === jsonMid) {
    json = true
    i += jsonMid.length
  } else return undefined
  const end = data.length - tail.length
  if (end < i) return undefined
  const value = data.slice(i, end)
  for (let k = 0; k < value.length; k++) {
    const c = value.charCodeAt(k)
    // A quote, a backslash or a control character: the literal needs JSON's own reading.
    if (c === 34 || c === 92 || c < 32) return literal(value, index, json)
  }
  scanned.index = index
  scanned.json = json
  return value
}

/** `value` read as the inside of a JSON string literal (escapes resolved), or `undefined` if it is not one. */
function literal(value: string, index: number, json: boolean): string | undefined {
  let text: unknown
  try {
    text = JSON.parse(`"${value}"`)
  } catch {
    return undefined
  }
  if (typeof text !== 'string') return undefined
  scanned.index = index
  scanned.json = json
  return text
}
