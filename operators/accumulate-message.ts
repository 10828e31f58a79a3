import { Observable, type OperatorFunction, type Subscriber } from 'rxjs'
import { linked, LinkedObserver } from '../src/rx/linked-observer.js'
import { MessageFold, type FoldFailure, type MessageUpdate } from '../src/stream/message-fold.js'
// Its hidden classes kept for the process (see fold-residents.ts).
import '../src/stream/fold-residents.js'
import type { ProviderChunk } from '../src/types/chunk.js'
import type { AssistantStreamEvent } from '../src/types/event.js'
import type { AssistantMessage } from '../src/types/message.js'
import type { ModelSpec } from '../src/types/model.js'
import { errorText } from '../src/types/codec.js'
import { providerErrorInfo } from '../src/types/provider-error.js'
import { resident, unused } from '../src/rx/resident.js'

/** Options for {@link accumulateMessage}. */
export interface AccumulateMessageOptions {
  /** The model the stream comes from: names the message and prices its usage. */
  readonly model: ModelSpec
  /** The message's timestamp source; pass the scheduler's `now` for virtual time. */
  readonly now: () => number
  /** When this emits, the stream is dropped and the message ends with stopReason `aborted`. */
  readonly abort?: Observable<unknown>
  /**
   * How deep parsed tool-call arguments may nest (default
   * `MAX_ARGUMENT_DEPTH`, 64 levels, the arguments object being level 1).
   * Deeper arguments are the call's `parseError`, checked once per call.
   */
  readonly maxArgumentDepth?: number
}

/** Whether an error means "cancelled" rather than "failed". */
export function isAbortError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'AbortError'
}

/**
 * Folds a provider's chunks into one assistant message and emits
 * `messageStart`, a `messageUpdate` per content chunk, and `messageEnd`.
 *
 * A `retry` chunk (from {@link retryStream}) emits `streamRetry` with the
 * discarded partial message and starts over from empty content, keeping the
 * usage already billed; the next attempt's `messageStart` is not re-announced.
 *
 * It never errors: a contract violation, a stream that completes without
 * `stop`, a stream error, or an exception inside the fold (a chunk that
 * throws when read, data that cannot be frozen) ends the message with
 * stopReason `error` and an `errorMessage` saying what happened; `abort`
 * ends it with `aborted`. The content received so far is kept in every case.
 *
 * ```
 * chunks: --s--t--t--p--|        s: messageStart, t: textDelta, p: stop
 * result: --S--u--u-----(E|)     S: messageStart, u: messageUpdate, E: messageEnd
 * ```
 */
export function accumulateMessage(options: AccumulateMessageOptions): OperatorFunction<ProviderChunk, AssistantStreamEvent> {
  return (source) => accumulated(source, options)
}

/**
 * `source.pipe(accumulateMessage(options))` without the operator: `streamLlm` folds each turn's
 * answer with options of that turn, and an operator made per turn is a closure made per turn
 * (with the pull's own teardown in from-async-iterable.ts, TOOLS 200, callgrind, two full GCs
 * before each of 6 runs: 85.5 -> 84.7 M instructions a run).
 * Internal: not exported from the package.
 */
export function accumulated(source: Observable<ProviderChunk>, options: AccumulateMessageOptions): Observable<AssistantStreamEvent> {
  return new Observable<AssistantStreamEvent>(accumulate.bind(undefined, source, options))
}

/** A subscription of {@link accumulateMessage}: bound, not a closure made per message (see `pullFrom` in from-async-iterable.ts). */
function accumulate(source: Observable<ProviderChunk>, options: AccumulateMessageOptions, subscriber: Subscriber<AssistantStreamEvent>): void {
  const accumulation = new Accumulation(subscriber, options)
  // Subscribed before the source, so an abort already signalled never lets the source start.
  if (options.abort !== undefined) {
    options.abort.subscribe(linked<unknown>(subscriber, { next: () => accumulation.end({ reason: 'aborted', message: 'the request was aborted' }), complete: () => undefined }))
    if (accumulation.ended) return
  }
  accumulation.input = linked<ProviderChunk>(subscriber, accumulation, undefined, ChunkLink)
  source.subscribe(accumulation.input)
}

/**
 * One message being accumulated: the handler of the chunks. A class rather
 * than closures: every chunk passes through `next`, and a prototype method
 * keeps its optimized code from run to run (see `linked`).
 */
class Accumulation {
  /** A fallback switches the model that names and prices the message. */
  private model: ModelSpec
  private fold: MessageFold
  /** After a retry the next attempt's `messageStart` is not announced again. */
  private announced = false
  ended = false
  /**
   * The chunks' observer. Linked observers (no Subject, no takeUntil: this runs once per model
   * call on the hot path): closing `input` drops the source at once, even a synchronous one in
   * the middle of emitting, and a downstream unsubscribe closes both.
   */
  input: LinkedObserver<ProviderChunk> | undefined

  constructor(
    private readonly subscriber: Subscriber<AssistantStreamEvent>,
    private readonly options: AccumulateMessageOptions,
  ) {
    this.model = options.model
    this.fold = new MessageFold(this.model, options.now(), undefined, options.maxArgumentDepth)
  }

  next(chunk: ProviderChunk): void {
    // `?.`: a hostile stream's `null` goes on to the guarded fold, which fails on it. Read once and
    // handed to the fold (see `MessageFold.log`): each read of `type` is a megamorphic lookup.
    const type = chunk?.type
    if (type === 'retry') return this.retry(chunk as Extract<ProviderChunk, { type: 'retry' }>)
    let result: MessageUpdate | undefined | string
    // Only the fold is guarded: what downstream throws is not the stream's fault.
    try {
      result = this.fold.push(chunk, type)
    } catch (error) {
      return this.failed(error)
    }
    if (result === undefined) {
      if (type === 'messageStart' && !this.announced) this.subscriber.next({ type: 'messageStart', message: this.fold.current() })
    } else if (typeof result === 'string') this.end({ reason: 'error', message: `stream contract violated: ${result}` })
    else this.subscriber.next(result)
  }

  error(error: unknown): void {
    const kind = providerErrorInfo(error)?.kind
    this.end(
      isAbortError(error)
        ? { reason: 'aborted', message: errorText(error) }
        : { reason: 'error', message: errorText(error), ...(kind === undefined ? {} : { kind }) },
    )
  }

  complete(): void {
    this.end()
  }

  end(failure?: FoldFailure): void {
    if (this.ended) return
    this.ended = true
    this.input?.unsubscribe()
    const { subscriber, fold } = this
    let message: AssistantMessage
    try {
      if (!fold.isStarted && !this.announced) subscriber.next({ type: 'messageStart', message: fold.current() })
      message = fold.finish(failure)
    } catch (error) {
      // The content cannot be read back: the message ends empty, with both reasons.
      const why = `the message could not be assembled (${errorText(error)})`
      message = new MessageFold(this.model, this.options.now()).finish({ reason: 'error', message: failure === undefined ? why : `${failure.message}; ${why}` })
    }
    subscriber.next({ type: 'messageEnd', message })
    subscriber.complete()
  }

  /** An exception inside the fold (a hostile chunk, data it cannot freeze) ends the message; it never escapes. */
  private failed(error: unknown): void {
    this.end({ reason: 'error', message: `the stream could not be folded: ${errorText(error)}` })
  }

  /** A `retry` chunk: the attempt so far is discarded (its usage kept) and a new one starts. */
  private retry(chunk: Extract<ProviderChunk, { type: 'retry' }>): void {
    let discarded: AssistantMessage
    try {
      // Even after `stop`: a silent context overflow is only known once the answer is complete.
      discarded = this.fold.finish({ reason: 'error', message: chunk.error.message, kind: chunk.error.kind })
    } catch (error) {
      return this.failed(error)
    }
    this.announced ||= this.fold.isStarted
    if (chunk.model !== undefined) {
      this.subscriber.next({ type: 'modelFallback', from: this.model, to: chunk.model, error: chunk.error, message: discarded })
      this.model = chunk.model
    }
    this.fold = new MessageFold(this.model, discarded.timestamp, this.fold)
    this.subscriber.next({ type: 'streamRetry', attempt: chunk.attempt, delayMs: chunk.delayMs, error: chunk.error, message: discarded })
  }
}

/** The chunks' linked observer, with a `next` of its own: every chunk passes here (see `LinkClass`). */
class ChunkLink extends LinkedObserver<ProviderChunk> {
  override next(chunk: ProviderChunk): void {
    if (this.stopped || this.closed) return
    try {
      this.handlers.next(chunk)
    } catch (thrown) {
      this.route(thrown)
    }
  }
}

// Their hidden classes outlive a run (see `resident`).
const residentAccumulation = resident(new Accumulation(unused, { model: { provider: 'resident', modelId: 'resident', thinkingLevel: 'off' }, now: () => 0 }))
resident(new ChunkLink(residentAccumulation, undefined, undefined))
