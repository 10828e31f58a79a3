/**
 * The marks of a streamed assistant message (`StreamMarks` in `agent-log.ts`),
 * gathered from a run's events as `AgentStore.record` sees them and put on
 * the message's `messageEnd` entry.
 *
 * The clock is read by the events that are marked — a turn's start, the
 * message's first content chunk (once), a retry, a fallback, the end — never
 * once per delta: a delta after the first costs one boolean test, and
 * nothing is allocated for it. The times are those `turnMetrics` measures
 * (the model call is timed from the turn's start; the first chunk is the
 * first content chunk, whichever attempt it came from). A fallback is one
 * mark: the `streamRetry` that follows its `modelFallback` (the new model's
 * first attempt) is not a retry of its own.
 */
import type { ProviderChunk } from '../types/chunk.js'
import type { ModelFallbackEvent, StreamRetryEvent } from '../types/event.js'
import type { StreamMarks } from './agent-log.js'

/** What tells the time: an agent's scheduler. */
export interface Clock {
  now(): number
}

type RetryMark = NonNullable<StreamMarks['retries']>[number]
type FallbackMark = NonNullable<StreamMarks['fallbacks']>[number]

/** See the module comment. */
export class StreamMarker {
  /** From a turn's start to its first content chunk: the one test a delta pays. */
  awaitingChunk = false
  private startedAt: number | undefined
  private firstChunkAt: number | undefined
  private retries: RetryMark[] | undefined
  private fallbacks: FallbackMark[] | undefined
  /** The last event was a fallback: its `streamRetry` follows. */
  private fellBack = false

  /**
   * @param clock the agent's clock (its scheduler): an object of the process's life, not an arrow made
   * per Agent, which the store's per-event code inlined and lost with the Agent (see `AgentStore`).
   */
  constructor(private readonly clock: Clock) {}

  private now(): number {
    return this.clock.now()
  }

  /** A turn starts: its model call with it. */
  turnStart(): void {
    this.startedAt = this.now()
    this.firstChunkAt = undefined
    this.retries = undefined
    this.fallbacks = undefined
    this.fellBack = false
    this.awaitingChunk = true
  }

  /** A chunk of the message arrived (called only while {@link awaitingChunk}). */
  chunk(chunk: ProviderChunk): void {
    if (chunk.type === 'usage') return
    this.firstChunkAt = this.now()
    this.awaitingChunk = false
  }

  /** An attempt was discarded and the model is called again. */
  retry(event: StreamRetryEvent): void {
    if (this.fellBack) {
      this.fellBack = false
      return
    }
    ;(this.retries ??= []).push(Object.freeze({ at: this.now(), attempt: event.attempt, delayMs: event.delayMs, error: event.error.message }))
  }

  /** The next model of the chain took the message over. */
  fallback(event: ModelFallbackEvent): void {
    ;(this.fallbacks ??= []).push(Object.freeze({ at: this.now(), provider: event.to.provider, modelId: event.to.modelId, error: event.error.message }))
    this.fellBack = true
  }

  /** The marks of the assistant message ending now (`undefined` when no turn started it), forgotten here. */
  end(): StreamMarks | undefined {
    const startedAt = this.startedAt
    if (startedAt === undefined) return undefined
    const { firstChunkAt, retries, fallbacks } = this
    this.startedAt = undefined
    this.firstChunkAt = undefined
    this.retries = undefined
    this.fallbacks = undefined
    this.fellBack = false
    this.awaitingChunk = false
    return Object.freeze({
      startedAt,
      ...(firstChunkAt === undefined ? {} : { firstChunkAt }),
      endedAt: this.now(),
      ...(retries === undefined ? {} : { retries: Object.freeze(retries) }),
      ...(fallbacks === undefined ? {} : { fallbacks: Object.freeze(fallbacks) }),
    })
  }
}
