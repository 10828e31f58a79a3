/**
 * Server-sent events from a byte stream, however the network split it: bytes
 * become text without breaking a multi-byte character across network chunks,
 * text becomes events (the WHATWG `text/event-stream` rules: `\n`, `\r\n` or
 * `\r` line ends, `data:` lines joined by `\n`, `event:`, comments, unknown
 * fields ignored), and what may be buffered is bounded: an event larger than
 * `maxEventSize` — or one endless line — stops the decoder instead of
 * filling the heap.
 *
 * The parser is a class rather than eventsource-parser's closures, with the
 * same results (the same fast paths too: an LF-only chunk is cut by
 * `indexOf('\n')`, a one-line `data:` event is handed over without a
 * concatenation). The reason is V8's: an optimized function is kept by the
 * function object, and eventsource-parser's `processLines` is a closure made
 * per parser, so per response. After a full GC that freed the last response's
 * parser, its optimized code — with the adapter's decoder inlined into it —
 * is gone and every later response runs it cold until it is optimized again.
 * A method on a prototype lives as long as the process. With the other
 * per-response closures made methods (http.ts, protocol.ts) and the classes
 * on that path kept resident: WIRE client CPU per delta, a full GC before
 * each run as the bench does, `bench/wire/worker.mjs` alternating the build
 * before, this one and the floor on a loaded 2-core machine: Anthropic text
 * 3.9–4.7 → 2.5–3.1 µs (floor 2.7–4.5), OpenAI text 5.9–7.3 → 4.2–6.3
 * (floor 4.6–6.6), Anthropic 50 tool turns 82–119 → 66–110 (floor 46–66);
 * TurboFan compile time per tool run (`--trace-opt`) 342 → 197 ms.
 */
import type { ProviderError } from '../types/provider-error.js'
import { protocolError } from './errors.js'
import { resident } from '../rx/resident.js'

/** One SSE event: `event` is the `event:` field when the server sent one. */
export interface SseEvent {
  readonly event?: string
  readonly data: string
}

/** What `push` returns when no event completed (shared, never written to). */
const noEvents: readonly SseEvent[] = Object.freeze([])

/** The default `maxEventSize`: 16 MiB. */
export const defaultMaxEventSize = 16 * 1024 * 1024

/** Options of {@link SseDecoder}. */
export interface SseDecoderOptions {
  /** Names the provider in the error (default `server`). */
  readonly provider?: string
  /**
   * The largest event buffered, in characters: the incomplete line plus the
   * event's data so far (default {@link defaultMaxEventSize}, 16 MiB). The bound is checked after each
   * network chunk, so the buffer never exceeds it by more than one chunk.
   */
  readonly maxEventSize?: number
}

/** Receives each event the moment its blank line arrives. */
export interface SseSink {
  sseEvent(event: SseEvent): void
}

/** The sink of a decoder without one: `push` and `end` return the events. */
class Pending implements SseSink {
  events: SseEvent[] = []
  sseEvent(event: SseEvent): void {
    this.events.push(event)
  }
}

const LF = 10
const CR = 13
const SPACE = 32

/** The one event object shape handed to sinks: `event` is `undefined` when the server sent none. */
class ParsedEvent implements SseEvent {
  constructor(
    readonly event: string | undefined,
    readonly data: string,
  ) {}
}

/** Whether `text` has `data:` at `i`. */
const isData = (text: string, i: number): boolean =>
  text.charCodeAt(i) === 100 && text.charCodeAt(i + 1) === 97 && text.charCodeAt(i + 2) === 116 && text.charCodeAt(i + 3) === 97 && text.charCodeAt(i + 4) === 58

/** Whether `text` has `event:` at `i`. */
const isEvent = (text: string, i: number): boolean =>
  text.charCodeAt(i) === 101 &&
  text.charCodeAt(i + 1) === 118 &&
  text.charCodeAt(i + 2) === 101 &&
  text.charCodeAt(i + 3) === 110 &&
  text.charCodeAt(i + 4) === 116 &&
  text.charCodeAt(i + 5) === 58

/**
 * An incremental SSE decoder: bytes in, complete events out — returned by
 * `push` (and `end`), or, with a sink, handed to it one by one as they
 * complete (no array per network chunk: the hot path of every adapter, see
 * `WireReader`). A sink that throws stops the feed; the decoder must then not
 * be fed again.
 */
export class SseDecoder {
  private readonly text = new TextDecoder('utf-8')
  private readonly sink: SseSink
  private readonly pending: Pending | undefined
  private readonly max: number
  private readonly provider: string
  /** The incomplete last line, in pieces (a long line arriving in many chunks is joined once). */
  private readonly partial: string[] = []
  private partialLength = 0
  private data = ''
  private dataLines = 0
  private eventType: string | undefined = undefined
  private first = true
  private lastChar = '\n'
  /**
   * Set when an event exceeded `maxEventSize` (a `protocol` error); the
   * decoder then takes no more input. Events completed before it in the same
   * chunk are still returned.
   */
  error: ProviderError | undefined = undefined

  constructor(options: SseDecoderOptions = {}, sink?: SseSink) {
    this.max = options.maxEventSize ?? defaultMaxEventSize
    this.provider = options.provider ?? 'server'
    this.pending = sink === undefined ? new Pending() : undefined
    this.sink = sink ?? this.pending!
  }

  /** Feeds one network chunk; returns the events it completed (none with a sink: the sink got them). */
  push(bytes: Uint8Array | string): readonly SseEvent[] {
    this.feed(typeof bytes === 'string' ? bytes : this.text.decode(bytes, { stream: true }))
    return this.take()
  }

  /**
   * The body ended. An event whose lines are complete but that lacks the
   * closing blank line is dispatched (several servers omit it); a line cut
   * off mid-way is dropped, as the SSE spec says: it is a truncated event.
   */
  end(): readonly SseEvent[] {
    this.feed(this.text.decode())
    if (this.error === undefined && (this.lastChar === '\n' || this.lastChar === '\r')) this.feed('\n\n')
    return this.take()
  }

  private feed(chunk: string): void {
    if (chunk === '' || this.error !== undefined) return
    this.lastChar = chunk[chunk.length - 1]!
    let text = chunk
    if (this.first) {
      this.first = false
      // A byte order mark read as Latin-1 characters (eventsource-parser drops it the same way).
      if (text.charCodeAt(0) === 239 && text.charCodeAt(1) === 187 && text.charCodeAt(2) === 191) text = text.slice(3)
    }
    if (this.partial.length > 0) {
      if (text.indexOf('\n') === -1 && text.indexOf('\r') === -1) {
        this.partial.push(text)
        this.partialLength += text.length
        this.check()
        return
      }
      this.partial.push(text)
      text = this.partial.join('')
      this.partial.length = 0
      this.partialLength = 0
    }
    const rest = text.indexOf('\r') === -1 ? this.lfLines(text) : this.lines(text)
    if (rest !== '') {
      this.partial.push(rest)
      this.partialLength = rest.length
    }
    this.check()
  }

  /** The lines of an LF-only text; returns its incomplete last line. */
  private lfLines(text: string): string {
    let start = 0
    let lf = text.indexOf('\n')
    while (lf !== -1) {
      if (start === lf) this.dispatch()
      else if (isData(text, start)) {
        const value = text.slice(text.charCodeAt(start + 5) === SPACE ? start + 6 : start + 5, lf)
        if (this.dataLines === 0 && text.charCodeAt(lf + 1) === LF) {
          // A one-line event: handed over at once, its blank line skipped.
          this.sink.sseEvent(new ParsedEvent(this.eventType, value))
          this.eventType = undefined
          start = lf + 2
          lf = text.indexOf('\n', start)
          continue
        }
        this.addData(value)
      } else if (isEvent(text, start)) this.eventType = text.slice(text.charCodeAt(start + 6) === SPACE ? start + 7 : start + 6, lf) || undefined
      else this.line(text, start, lf)
      start = lf + 1
      lf = text.indexOf('\n', start)
    }
    return text.slice(start)
  }

  /** The lines of a text with CRs (`\r\n`, `\r` or `\n` ends); returns its incomplete last line. */
  private lines(text: string): string {
    let start = 0
    while (start < text.length) {
      const cr = text.indexOf('\r', start)
      const lf = text.indexOf('\n', start)
      // A CR that ends the text may be the first half of a CRLF: the line waits for the next chunk.
      const end = cr !== -1 && lf !== -1 ? Math.min(cr, lf) : cr !== -1 ? (cr === text.length - 1 ? -1 : cr) : lf
      if (end === -1) break
      this.line(text, start, end)
      start = end + 1
      if (text.charCodeAt(start - 1) === CR && text.charCodeAt(start) === LF) start++
    }
    return text.slice(start)
  }

  /** One line, `text[start, end)`, by the general rules. */
  private line(text: string, start: number, end: number): void {
    if (start === end) return this.dispatch()
    if (isData(text, start)) return this.addData(text.slice(text.charCodeAt(start + 5) === SPACE ? start + 6 : start + 5, end))
    if (isEvent(text, start)) {
      this.eventType = text.slice(text.charCodeAt(start + 6) === SPACE ? start + 7 : start + 6, end) || undefined
      return
    }
    // A comment, `id:` and `retry:` (no reconnection here) and unknown fields change nothing.
    if (text.charCodeAt(start) === 58) return
    const line = text.slice(start, end)
    const colon = line.indexOf(':')
    const field = colon === -1 ? line : line.slice(0, colon)
    const value = colon === -1 ? '' : line.slice(colon + (line.charCodeAt(colon + 1) === SPACE ? 2 : 1))
    if (field === 'data') this.addData(value)
    else if (field === 'event') this.eventType = value || undefined
  }

  private addData(value: string): void {
    this.data = this.dataLines === 0 ? value : `${this.data}\n${value}`
    this.dataLines++
  }

  /** A blank line: the event so far, if it has data. */
  private dispatch(): void {
    const { dataLines, eventType, data } = this
    this.data = ''
    this.dataLines = 0
    this.eventType = undefined
    if (dataLines > 0) this.sink.sseEvent(new ParsedEvent(eventType, data))
  }

  /** The buffer bound: the incomplete line and the event's data. */
  private check(): void {
    if (this.partialLength + this.data.length <= this.max) return
    this.partial.length = 0
    this.partialLength = 0
    this.data = ''
    this.dataLines = 0
    this.eventType = undefined
    this.error = protocolError(this.provider, `an event exceeds the maximum size of ${this.max} characters (maxEventSize)`)
  }

  private take(): readonly SseEvent[] {
    const pending = this.pending
    if (pending === undefined || pending.events.length === 0) return noEvents
    const out = pending.events
    pending.events = []
    return out
  }
}

// Their hidden classes outlive a response (see `resident`): a class's fields are added to its
// instances by map transitions that V8 holds weakly, and the per-event code embeds the maps. With
// no instance alive after a full GC (between two WIRE runs), that code was thrown away ("weak
// objects") and compiled again by the next response.
resident([new ParsedEvent(undefined, ''), new SseDecoder()])
