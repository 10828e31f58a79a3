/**
 * The event a long Chat Completions answer is made of — a content delta or a
 * tool call's argument fragment — read without `JSON.parse` when it is in
 * OpenAI's own compact form, after a first event of the response was parsed
 * whole:
 *
 *   P{"index":0,"delta":{"content":"…"},"logprobs":null,"finish_reason":null}]T
 *   P{"index":0,"delta":{"tool_calls":[{"index":K,"function":{"arguments":"…"}}]},"logprobs":null,"finish_reason":null}]T
 *
 * where P is `{"id":…,"object":…,"created":…,…,"choices":[` byte for byte as
 * in an event already parsed (learned from it: only fields the decoder does
 * not read once started, with string, number or null values, re-serialized
 * and compared), and T is `,"usage":null,"obfuscation":"…"}` or
 * `,"usage":null}`.
 *
 * Why hand-written: `JSON.parse` of such an event (a dozen fields) was the
 * largest single cost of the client on the WIRE OpenAI streams. The scan is
 * exact: every byte outside the two strings is compared, and a string with a
 * quote, a backslash or a control character is read by `JSON.parse` as a
 * string literal. Anything else returns `undefined` and the event is parsed
 * whole as before, with the same results and the same errors.
 */
import type { Json } from './json.js'

/** Top-level fields a started decoder ignores: an event whose prefix holds only these may be scanned. */
const ignored = new Set(['id', 'object', 'created', 'model', 'service_tier', 'system_fingerprint'])

const textHead = '{"index":0,"delta":{"content":"'
const textTail = '"},"logprobs":null,"finish_reason":null}]'
const argsHead = '{"index":0,"delta":{"tool_calls":[{"index":'
const argsMid = ',"function":{"arguments":"'
const argsTail = '"}}]},"logprobs":null,"finish_reason":null}]'
const plainEnd = ',"usage":null}'
const obfuscated = ',"usage":null,"obfuscation":"'

/** Whether `s` needs no JSON escape reading: no quote, backslash or control character. */
function plain(s: string): boolean {
  for (let k = 0; k < s.length; k++) {
    const c = s.charCodeAt(k)
    if (c === 34 || c === 92 || c < 32) return false
  }
  return true
}

/** `s` read as the inside of a JSON string literal, or `undefined` if it is not one. */
function literal(s: string): string | undefined {
  if (plain(s)) return s
  try {
    const v: unknown = JSON.parse(`"${s}"`)
    return typeof v === 'string' ? v : undefined
  } catch {
    return undefined
  }
}

/** One response's scanner. `slice(…) ===` rather than `startsWith`: faster on the parser's sliced strings. */
export class ChatScan {
  private prefix: string | undefined
  /** What the last successful {@link scan} read: `-1` for content, else the tool call's index. */
  callIndex = -1

  /** Learns P from an event parsed whole (`json` is `data` parsed), if it has the form. */
  learn(data: string, json: Json): void {
    if (this.prefix !== undefined) return
    let p = '{'
    for (const key of Object.keys(json)) {
      if (key === 'choices') {
        p += '"choices":['
        if (data.slice(0, p.length) === p) this.prefix = p
        return
      }
      const v = json[key]
      if (!ignored.has(key) || !(typeof v === 'string' || typeof v === 'number' || v === null)) return
      p += `${JSON.stringify(key)}:${JSON.stringify(v)},`
    }
  }

  /** The string a content or argument event carries (which one: {@link callIndex}), or `undefined`. */
  scan(data: string): string | undefined {
    const p = this.prefix
    if (p === undefined || data.slice(0, p.length) !== p) return undefined
    // T, from the end.
    let end: number
    if (data.slice(data.length - plainEnd.length) === plainEnd) end = data.length - plainEnd.length
    else {
      if (data.slice(data.length - 2) !== '"}') return undefined
      end = data.lastIndexOf(obfuscated)
      if (end < p.length || literal(data.slice(end + obfuscated.length, data.length - 2)) === undefined) return undefined
    }
    let i = p.length
    if (data.slice(i, i + textHead.length) === textHead) {
      i += textHead.length
      const stop = end - textTail.length
      if (stop < i || data.slice(stop, end) !== textTail) return undefined
      this.callIndex = -1
      return literal(data.slice(i, stop))
    }
    if (data.slice(i, i + argsHead.length) !== argsHead) return undefined
    i += argsHead.length
    const first = i
    let index = 0
    for (let c = data.charCodeAt(i); c >= 48 && c <= 57; c = data.charCodeAt(++i)) index = index * 10 + (c - 48)
    const digits = i - first
    if (digits === 0 || digits > 9 || (digits > 1 && data.charCodeAt(first) === 48)) return undefined
    if (data.slice(i, i + argsMid.length) !== argsMid) return undefined
    i += argsMid.length
    const stop = end - argsTail.length
    if (stop < i || data.slice(stop, end) !== argsTail) return undefined
    this.callIndex = index
    return literal(data.slice(i, stop))
  }
}
