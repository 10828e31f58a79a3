import { asyncScheduler, Observable, type MonoTypeOperatorFunction, type SchedulerAction, type SchedulerLike, type Subscriber } from 'rxjs'
import type { ProviderChunk } from '../src/types/chunk.js'
import { ProviderError, type ProviderErrorInfo } from '../src/types/provider-error.js'
import type { RetryOptions } from '../src/types/run-config.js'
import { errorText } from '../src/types/codec.js'
import { linked, LinkedObserver } from '../src/rx/linked-observer.js'
import { callUser, CallbackError } from '../src/rx/user-callback.js'
import { resident, unused } from '../src/rx/resident.js'

export type { RetryOptions } from '../src/types/run-config.js'

/** The delay before retry number `attempt` (1-based): the server's if it gave one, else capped exponential backoff with jitter. */
export function retryDelay(info: ProviderErrorInfo, attempt: number, options: RetryOptions = {}): number {
  if (info.retryAfterMs !== undefined) return info.retryAfterMs
  const base = options.baseDelayMs ?? 1000
  const cap = options.maxDelayMs ?? 30_000
  const jitter = Math.min(Math.max(options.jitter ?? 0.2, 0), 1)
  const exponential = Math.min(cap, base * 2 ** (attempt - 1))
  const spread = exponential * jitter * (2 * (options.random ?? Math.random)() - 1)
  return Math.max(0, Math.min(cap, Math.round(exponential + spread)))
}

/** A failed retry callback, with the provider error it was deciding on. */
const named = (failure: CallbackError, error: unknown): Error => new Error(`${failure.message} (deciding whether to retry: ${errorText(error)})`, { cause: failure })

/**
 * Makes a model call again when it fails with a retryable
 * {@link ProviderError}, resubscribing to the (cold) source after a backoff.
 * Before each new attempt it emits a `retry` chunk, so downstream knows the
 * attempt so far is discarded — whether or not anything was streamed; the
 * user never sees text twice. Errors that are not retryable, that come after
 * `stop`, or that exhaust the attempts are passed on unchanged.
 *
 * ```
 * source (1st): -s-t-#            #: ProviderError, retryable
 * source (2nd):          -s-t-t-p|
 * result:       -s-t-r---(-s-t-t-p|)   r: retry chunk, then the wait, then the new attempt
 * ```
 */
export function retryStream(options: RetryOptions = {}): MonoTypeOperatorFunction<ProviderChunk> {
  const settings: RetrySettings = {
    options,
    maxAttempts: Math.max(1, options.maxAttempts ?? 4),
    scheduler: options.scheduler ?? asyncScheduler,
    maxServerDelay: options.maxServerDelayMs ?? 60_000,
    shouldRetry: options.shouldRetry ?? retryable,
  }
  return (source) => new Observable<ProviderChunk>(startRetries.bind(undefined, source, settings))
}

/** A subscription of {@link retryStream}: bound, not a closure made per model call (see `pullFrom` in from-async-iterable.ts). */
function startRetries(source: Observable<ProviderChunk>, settings: RetrySettings, subscriber: Subscriber<ProviderChunk>): void {
  new Retries(source, subscriber, settings).start()
}

const retryable = (info: ProviderErrorInfo): boolean => info.retryable

/** What {@link retryStream} was configured with, shared by its subscriptions. */
interface RetrySettings {
  readonly options: RetryOptions
  readonly maxAttempts: number
  readonly scheduler: SchedulerLike
  readonly maxServerDelay: number
  readonly shouldRetry: (info: ProviderErrorInfo, attempt: number) => boolean
}

/**
 * One subscription of {@link retryStream}: its attempts. A class rather than
 * closures made per model call: a run holds one while its answer streams,
 * and a thousand runs at once hold a thousand (1,000 live FANOUT runs of
 * `agentLoop`, heap after a full GC: 9.7 → 9.0 KB per run).
 */
class Retries {
  private attempt = 1

  constructor(
    private readonly source: Observable<ProviderChunk>,
    private readonly subscriber: Subscriber<ProviderChunk>,
    private readonly settings: RetrySettings,
  ) {}

  /** Subscribes the next attempt; a linked observer: one call per chunk on the hot path, torn down with the subscriber. */
  start(): void {
    this.source.subscribe(linked<ProviderChunk>(this.subscriber, new Attempt(this.subscriber, this), undefined, AttemptLink))
  }

  /** An attempt failed: a retry after the backoff, or the error passed on. */
  failed(error: unknown, stopped: boolean): void {
    const { subscriber, settings, attempt } = this
    const info = error instanceof ProviderError ? error.info : undefined
    if (info === undefined || stopped || attempt >= settings.maxAttempts) {
      subscriber.error(error)
      return
    }
    const retry = callUser('retry.shouldRetry', settings.shouldRetry, info, attempt)
    if (retry instanceof CallbackError || !retry) {
      subscriber.error(retry instanceof CallbackError ? named(retry, error) : error)
      return
    }
    const delayMs = callUser('retry.random', retryDelay, info, attempt, settings.options)
    if (delayMs instanceof CallbackError) {
      subscriber.error(named(delayMs, error))
      return
    }
    if (delayMs > settings.maxServerDelay) {
      subscriber.error(
        new ProviderError({ ...info, retryable: false, message: `${errorText(error)} (the server asked to wait ${Math.round(delayMs / 1000)} s, longer than the ${Math.round(settings.maxServerDelay / 1000)} s allowed)` }),
      )
      return
    }
    subscriber.next({ type: 'retry', attempt, delayMs, error: info })
    this.attempt++
    // The wait ends with the subscriber: an unsubscribe during the backoff cancels the next attempt.
    subscriber.add(settings.scheduler.schedule(startAgain, delayMs, this))
  }
}

function startAgain(this: SchedulerAction<Retries>, retries?: Retries): void {
  retries?.start()
}

/**
 * One attempt's chunks, passed on; its error goes to {@link Retries.failed}
 * with whether `stop` was seen. A class, so that its per-chunk `next` keeps
 * its optimized code (see `linked`).
 */
class Attempt {
  private stopped = false

  constructor(
    private readonly subscriber: Subscriber<ProviderChunk>,
    private readonly retries: Retries,
  ) {}

  next(chunk: ProviderChunk): void {
    if (chunk.type === 'stop') this.stopped = true
    this.subscriber.next(chunk)
  }

  error(error: unknown): void {
    this.retries.failed(error, this.stopped)
  }
}

/** An attempt's linked observer, with a `next` of its own: every chunk passes here (see `LinkClass`). */
class AttemptLink extends LinkedObserver<ProviderChunk> {
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
const residentAttempt = resident(new Attempt(unused, resident(new Retries(unused, unused, unused))))
resident(new AttemptLink(residentAttempt, undefined, undefined))
