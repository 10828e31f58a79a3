/**
 * The arguments of a tool call while the model is still writing them: the
 * JSON fragments so far, parsed with `partial-json` — lazily. A streaming
 * message's tool-call block carries its `arguments` as a getter that parses
 * on first read and remembers the result, so that a UI can show, say, the
 * `path` of a `write_file` call before the call ends, and a stream nobody
 * reads never runs the parser. Once the call ends, its arguments are the
 * strict `JSON.parse` of the whole text, as before.
 */
import { Allow, parse } from 'partial-json'
import type { ToolCallContent } from '../types/content.js'
import { MAX_ARGUMENT_DEPTH } from '../types/deep-freeze.js'

/**
 * How much of a call's JSON text a partial read parses: the first 64 KiB.
 * Every read parses from the start (partial-json is not incremental), so a
 * read costs O(this), however long the arguments grow; a UI reading each
 * update of a huge call pays at most this much per read. Beyond it, partial
 * arguments stop growing until the call ends and its full arguments are
 * parsed.
 */
export const MAX_PARTIAL_ARGUMENT_CHARS = 64 * 1024

/**
 * What may be partial: strings, arrays, objects, `null`, booleans (`tr` is
 * `true`: a valid prefix can only become that). Not numbers: `12` may be the
 * start of `1234`, so a number shows only once something follows it. So each
 * partial value is a prefix of the final one: object keys a subset, arrays
 * shorter, strings a prefix, scalars final.
 */
const ALLOW = Allow.STR | Allow.ARR | Allow.OBJ | Allow.NULL | Allow.BOOL

/** The partial arguments of nothing, or of text that is no object yet. */
const none: Record<string, unknown> = Object.freeze({})

const OPEN_BRACE = 0x7b
const OPEN_BRACKET = 0x5b
const CLOSE_BRACE = 0x7d
const CLOSE_BRACKET = 0x5d
const QUOTE = 0x22
const BACKSLASH = 0x5c

/**
 * Where the partial parse stops: after {@link MAX_PARTIAL_ARGUMENT_CHARS}, or
 * before the first `{` or `[` that would nest deeper than `maxDepth` (the
 * arguments object is level 1). `partial-json` recurses once per level, and
 * model output is untrusted: 14 KB of `[` would overflow the stack. A cut is
 * just an earlier prefix, so what is parsed is still a partial view.
 */
function cutAt(raw: string, maxDepth: number): number {
  const end = Math.min(raw.length, MAX_PARTIAL_ARGUMENT_CHARS)
  let depth = 0
  let inString = false
  for (let i = 0; i < end; i++) {
    const c = raw.charCodeAt(i)
    if (inString) {
      if (c === BACKSLASH) i++
      else if (c === QUOTE) inString = false
    } else if (c === QUOTE) inString = true
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > maxDepth) return i
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--
  }
  return end
}

/**
 * Freezes what `partial-json` built, without recursion, and undoes its one
 * divergence from `JSON.parse`: it assigns keys, so a `"__proto__"` key whose
 * value is an object became the prototype. It is made an own key again.
 */
function settle(value: object): void {
  const nodes: object[] = [value]
  while (nodes.length > 0) {
    const node = nodes.pop()!
    if (!Array.isArray(node)) {
      const prototype: unknown = Object.getPrototypeOf(node)
      if (prototype !== Object.prototype) {
        Object.setPrototypeOf(node, Object.prototype)
        Object.defineProperty(node, '__proto__', { value: prototype, enumerable: true, writable: true, configurable: true })
      }
    }
    Object.freeze(node)
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child === 'object' && child !== null) nodes.push(child)
    }
  }
}

/**
 * The arguments so far of a call whose JSON text so far is `raw`: a frozen
 * object, `{}` until the text holds at least an object's start. Never throws.
 * Bounded: see {@link MAX_PARTIAL_ARGUMENT_CHARS} and {@link cutAt}.
 */
export function partialArguments(raw: string, maxDepth: number): Record<string, unknown> {
  const text = raw.slice(0, cutAt(raw, maxDepth))
  if (text.trim() === '') return none
  let value: unknown
  try {
    value = parse(text, ALLOW)
  } catch {
    // Malformed (not merely unfinished) JSON: the strict parse at the end will say what is wrong.
    return none
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return none
  settle(value)
  return value as Record<string, unknown>
}

/** The partial arguments read so far, by block: a block is frozen, so its cache lives here. */
const parsedOf = new WeakMap<object, Record<string, unknown>>()
/** The depth limit of a block made with another than {@link MAX_ARGUMENT_DEPTH} (rare: a model setting). */
const depthOf = new WeakMap<object, number>()

/** The one `arguments` getter of every streaming block: shared, so no closure per block. */
const ARGUMENTS: PropertyDescriptor = {
  get(this: ToolCallContent): Record<string, unknown> {
    let parsed = parsedOf.get(this)
    if (parsed === undefined) {
      parsed = partialArguments(this.partialJson ?? '', depthOf.get(this) ?? MAX_ARGUMENT_DEPTH)
      parsedOf.set(this, parsed)
    }
    return parsed
  },
  enumerable: true,
  configurable: false,
}

/**
 * A frozen tool-call block of a call still streaming, whose `arguments` are
 * parsed from `partialJson` when first read (an own, enumerable getter: a
 * spread, `JSON.stringify` or `toEqual` sees a plain value). The getter is one
 * shared function defined on a plain object, not an object literal's `get`:
 * a literal with an accessor builds a closure and leaves V8's fast literal
 * path, about 2.2 µs a block against 0.5 µs (a micro-benchmark of 10⁶ blocks);
 * a snapshot of a streaming call makes one per arguments delta.
 */
export function streamingToolCall(id: string, name: string, partialJson: string, maxDepth: number): ToolCallContent {
  const block = { type: 'toolCall' as const, id, name } as { type: 'toolCall'; id: string; name: string; arguments: Record<string, unknown>; partialJson: string }
  // Defined in the literal's key order: type, id, name, arguments, partialJson.
  Object.defineProperty(block, 'arguments', ARGUMENTS)
  block.partialJson = partialJson
  if (maxDepth !== MAX_ARGUMENT_DEPTH) depthOf.set(block, maxDepth)
  return Object.freeze(block)
}
