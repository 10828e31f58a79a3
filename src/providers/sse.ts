/**
 * Server-sent events from a byte stream, however the network split it.
 * Parsing is eventsource-parser's (maintained, spec-complete, no
 * dependencies); this file only turns bytes into text without breaking a
 * multi-byte character across network chunks, and bounds what the parser
 * may buffer: an event larger than `maxEventSize` — or one endless line —
 * stops the decoder instead of filling the heap.
 */
import { createParser, type EventSourceMessage, type EventSourceParser, type ParseError } from 'eventsource-parser'
import type { ProviderError } from '../types/provider-error.js'
import { protocolError } from './errors.js'
import { resident } from '../rx/resident.js'
import { Utf8Chunks } from './utf8-chunks.js'

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

/** Receives each event the moment its blank line arrives (a method: see `WireReader`, whose per-event code lives on a prototype). */
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

/**
 * A parser and the decoder it feeds for the time of one response, kept
 * between responses (see {@link leaseParser}).
 */
class ParserLease {
  readonly parser: EventSourceParser
  decoder: SseDecoder | undefined = undefined

  constructor(readonly maxBufferSize: number) {
    this.parser = createParser({
      // The parser's own message object is the event (its `id` field is ignored): one allocation per
      // event fewer than copying it.
      onEvent: (message: EventSourceMessage) => this.decoder!.parsed(message),
      onError: (error: ParseError) => this.decoder!.parseError(error),
      maxBufferSize,
    })
  }
}

/** Free leases, by `maxBufferSize`: at most {@link maxFreeLeases} each. */
const freeLeases = new Map<number, ParserLease[]>()
const maxFreeLeases = 8

/**
 * A parser for `decoder`, kept from an earlier response when one is free.
 * eventsource-parser's per-event code (`processLines`) is a closure made per
 * parser: a parser per response let its optimized code die with the
 * response, and a full GC between two responses (two WIRE runs) had it
 * compiled again, with the `onEvent` closure that inlines the adapter's
 * decoder, every time: the largest compile jobs of a WIRE run
 * (`--trace-opt`). A leased parser lives on, and its code with it.
 */
function leaseParser(maxBufferSize: number, decoder: SseDecoder): ParserLease {
  const lease = freeLeases.get(maxBufferSize)?.pop() ?? new ParserLease(maxBufferSize)
  lease.decoder = decoder
  return lease
}

/** Gives a lease back once its response ended: reset (nothing of that response is kept) and free again. */
function releaseParser(lease: ParserLease): void {
  lease.parser.reset()
  lease.decoder = undefined
  let free = freeLeases.get(lease.maxBufferSize)
  if (free === undefined) freeLeases.set(lease.maxBufferSize, (free = []))
  if (free.length < maxFreeLeases) free.push(lease)
}

/**
 * An incremental SSE decoder: bytes in, complete events out — returned by
 * `push` (and `end`), or, with a sink, handed to it one by one as the
 * parser completes them (no array per network chunk: the hot path of every
 * adapter, see `WireReader`). A sink that throws stops the feed; the
 * decoder must then not be fed again.
 */
export class SseDecoder {
  private readonly text = new Utf8Chunks()
  private readonly pending: Pending | undefined
  private readonly sink: SseSink
  private readonly max: number
  private readonly provider: string
  /** The parser, from the first text to `end()` (see {@link leaseParser}). */
  private lease: ParserLease | undefined = undefined
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
    this.feed(typeof bytes === 'string' ? bytes : this.text.decode(bytes))
    return this.take()
  }

  /**
   * The body ended. An event whose lines are complete but that lacks the
   * closing blank line is dispatched (several servers omit it); a line cut
   * off mid-way is dropped, as the SSE spec says: it is a truncated event.
   */
  end(): readonly SseEvent[] {
    this.feed(this.text.end())
    const lease = this.lease
    if (lease !== undefined) {
      if (this.error === undefined && (this.lastChar === '\n' || this.lastChar === '\r')) lease.parser.feed('\n\n')
      // Not reached when the sink threw: that parser is not reused.
      this.lease = undefined
      releaseParser(lease)
    }
    return this.take()
  }

  /** @internal The parser completed an event. */
  parsed(message: EventSourceMessage): void {
    this.sink.sseEvent(message)
  }

  /** @internal The parser's error: only an oversized event stops the decoder. */
  parseError(error: ParseError): void {
    if (error.type !== 'max-buffer-size-exceeded') return
    this.error = protocolError(this.provider, `an event exceeds the maximum size of ${this.max} characters (maxEventSize)`)
  }

  private feed(text: string): void {
    if (text === '' || this.error !== undefined) return
    this.lastChar = text[text.length - 1]!
    ;(this.lease ??= leaseParser(this.max, this)).parser.feed(text)
  }

  private take(): readonly SseEvent[] {
    const pending = this.pending
    if (pending === undefined || pending.events.length === 0) return noEvents
    const out = pending.events
    pending.events = []
    return out
  }
}

// Its hidden class outlives a response (see `resident`): with no decoder alive after a full GC
// (between two WIRE runs), the code that embeds its map was thrown away ("weak objects").
resident(new SseDecoder())
