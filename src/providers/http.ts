/**
 * The transport every adapter shares: one POST, its body as a stream of byte
 * chunks. The request starts on subscribe; unsubscribing aborts it at any
 * moment (before the response, or while the body is read). Timeouts run on
 * an injected scheduler, so tests can make them virtual.
 *
 * Nothing a server sends is trusted: the whole call has a deadline, an error
 * body is read only up to a bound, and a `200` that is not an event stream is
 * an error. The body arrives serialized (by `streamFnOf`, which classifies a
 * body that cannot be: the request's fault, not the network's).
 */
import { asyncScheduler, Observable, type SchedulerLike, type Subscriber, type Subscription } from 'rxjs'
import { ProviderError } from '../types/provider-error.js'
import { excerpt } from './errors.js'
import { defaultMaxEventSize } from './sse.js'
import { resident, unused } from '../rx/resident.js'

/** One HTTP request, ready to send. */
export interface HttpRequest {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  /**
   * Serialized as JSON (by `streamFnOf`, before anything is sent); a built-in
   * builder may hand it over already serialized, as a `JsonText` (whose
   * `toJSON` gives the value back).
   */
  readonly body: unknown
}

/** How the transport behaves; every field has a default. */
export interface TransportOptions {
  /** Default `globalThis.fetch`. */
  readonly fetch?: typeof globalThis.fetch
  /** Time allowed until the response headers arrive (default 60,000 ms). */
  readonly connectTimeoutMs?: number
  /**
   * Longest silence allowed between two body chunks (default 120,000 ms).
   * Any bytes count, keep-alive pings included: this catches a dead
   * connection; a server that pings forever is ended by `totalTimeoutMs`.
   */
  readonly idleTimeoutMs?: number
  /**
   * Time allowed for the whole call, from sending the request to the end of
   * the body (default 1,800,000 ms: 30 minutes, since a long answer at a slow
   * model's pace legitimately takes more than 10). When it fires, the call
   * fails with a `timeout` error that is not retried. `Infinity` turns it off.
   */
  readonly totalTimeoutMs?: number
  /**
   * The largest server-sent event accepted, in characters of the decoded text
   * (≈ bytes for the ASCII JSON providers send; default 16 MiB). A larger
   * one — or an endless line — fails the call with a `protocol` error, and
   * the body is not read further.
   */
  readonly maxEventSize?: number
  /** Where the timeouts run (default `asyncScheduler`). */
  readonly scheduler?: SchedulerLike
}

/** The defaults of {@link TransportOptions}. */
export const transportDefaults = {
  connectTimeoutMs: 60_000,
  idleTimeoutMs: 120_000,
  totalTimeoutMs: 1_800_000,
  maxEventSize: defaultMaxEventSize,
} as const

/** Turns a non-2xx response into a classified error. */
export type HttpErrorClassifier = (status: number, headers: Headers, body: string) => ProviderError

/** The most of an error body read to classify it; the rest is not read. */
const maxErrorBodyChars = 256 * 1024
/** How much of a body that is not an event stream an error quotes. */
const quotedChars = 200

/** A network failure in words, without the request (its URL or headers may hold a key). */
export function networkError(provider: string, error: unknown, phase: string): ProviderError {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause
  const code = typeof cause?.code === 'string' ? cause.code : undefined
  const detail = code ?? (typeof cause?.message === 'string' ? cause.message : error instanceof Error ? error.message : String(error))
  return ProviderError.of('network', provider, `${provider}: the connection failed ${phase} (${detail})`, code === undefined ? {} : { code })
}

/**
 * The `invalidRequest` error of a request that could not be built or
 * serialized (a value nested deeper than the stack, a cycle, a `BigInt`).
 * Never retried: the same transcript fails the same way.
 */
export function unserializableError(provider: string, error: unknown): ProviderError {
  const message = error instanceof Error ? error.message : String(error)
  const why = error instanceof RangeError ? `a value is nested too deep (${message})` : message
  return ProviderError.of('invalidRequest', provider, `${provider}: the request body could not be serialized: ${why}`, { retryable: false })
}

/** Whether a `content-type` names an event stream (a missing one is given the benefit of the doubt). */
const isEventStream = (type: string | null): boolean => type === null || type.split(';')[0]!.trim().toLowerCase() === 'text/event-stream'

/**
 * Up to `max` characters of a body, then stops reading (the rest may never
 * end). A read that fails ends it with what was read so far: the caller only
 * quotes the body, and its status already says what went wrong.
 */
async function readStart(body: ReadableStream<Uint8Array>, max: number): Promise<string> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let text = ''
  try {
    while (text.length < max) {
      const { done, value } = await reader.read()
      if (done) return text + decoder.decode()
      text += decoder.decode(value, { stream: true })
    }
    return text.slice(0, max)
  } catch {
    return text.slice(0, max)
  } finally {
    void reader.cancel().catch(() => undefined)
  }
}

/**
 * POSTs `request` (its body already JSON text) and emits the response body's
 * chunks. A non-2xx status errors with `classify`'s error; a `200` that is
 * not an event stream, network failures and timeouts error with a
 * `ProviderError` of kind `protocol`, `network` or `timeout`.
 */
export function httpBody(provider: string, request: HttpRequest & { readonly body: string }, classify: HttpErrorClassifier, options: TransportOptions = {}): Observable<Uint8Array> {
  const limits: Limits = {
    fetch: options.fetch ?? globalThis.fetch,
    scheduler: options.scheduler ?? asyncScheduler,
    connectMs: options.connectTimeoutMs ?? transportDefaults.connectTimeoutMs,
    idleMs: options.idleTimeoutMs ?? transportDefaults.idleTimeoutMs,
    totalMs: options.totalTimeoutMs ?? transportDefaults.totalTimeoutMs,
  }
  return new Observable<Uint8Array>((subscriber) => {
    const call = new HttpCall(provider, request, classify, limits, subscriber)
    call.startTimer()
    void call.run()
    return () => call.cancel()
  })
}

/** The transport options of one `httpBody`, defaults applied. */
interface Limits {
  readonly fetch: typeof globalThis.fetch
  readonly scheduler: SchedulerLike
  readonly connectMs: number
  readonly idleMs: number
  readonly totalMs: number
}

/** The timer's work: the call it watches is its state. */
function watchCall(this: unknown, call?: HttpCall): void {
  call!.watch()
}

/**
 * One request and its body. A class, not closures made per request: the
 * per-chunk loop (`run`) is then one function for the life of the process,
 * and its optimized code is not lost when a full GC frees the last
 * response's closures (see sse.ts).
 */
class HttpCall {
  private readonly controller = new AbortController()
  private done = false
  private start = 0
  private streaming = false
  private lastData = 0
  private timer: Subscription | undefined = undefined
  private due = Number.POSITIVE_INFINITY

  constructor(
    private readonly provider: string,
    private readonly request: HttpRequest & { readonly body: string },
    private readonly classify: HttpErrorClassifier,
    private readonly limits: Limits,
    private readonly subscriber: Subscriber<Uint8Array>,
  ) {}

  /** Starts the clock of the call's limits. */
  startTimer(): void {
    // One timer for the three limits: set for the earliest, it fails the call for the limit that
    // passed when it fires, or sets itself for the next one. A body chunk only notes the time (the
    // per-chunk clearTimeout/setInterval pair of a re-armed idle timer was ~3% of the adapter's CPU
    // on the WIRE 20k-delta stream). Before: a timer per limit, three set and three cancelled per
    // request. CPU of the adapter alone, 51 requests answered by a `fetch` in process with the WIRE
    // final answer (bench/wire/streams.mjs; a scratch probe, medians of 4 alternating processes of 40
    // rounds), with the secrets found only on error (protocol.ts): 8.7 → 6.7 ms, ~38 µs a request.
    this.start = this.limits.scheduler.now()
    this.lastData = this.start
    this.setTimer(this.nextDue(), this.start)
  }

  private stopTimers(): void {
    this.timer?.unsubscribe()
    this.timer = undefined
  }

  private fail(error: ProviderError): void {
    if (this.done) return
    this.done = true
    this.stopTimers()
    this.controller.abort()
    this.subscriber.error(error)
  }

  /** The earliest limit still ahead: the whole call's, and the connect limit until the body streams, the idle one after. */
  private nextDue(): number {
    const { connectMs, idleMs, totalMs } = this.limits
    return Math.min(this.start + totalMs, this.streaming ? this.lastData + idleMs : this.start + connectMs)
  }

  private setTimer(at: number, now: number): void {
    this.stopTimers()
    this.due = at
    if (Number.isFinite(at)) this.timer = this.limits.scheduler.schedule(watchCall, Math.max(0, at - now), this)
  }

  /** The timer fired. */
  watch(): void {
    this.timer = undefined
    const { provider, limits } = this
    const { connectMs, idleMs, totalMs } = limits
    const now = limits.scheduler.now()
    if (now >= this.start + totalMs) {
      this.fail(ProviderError.of('timeout', provider, `${provider}: the response did not finish within ${totalMs} ms (totalTimeoutMs)`, { retryable: false }))
    } else if (!this.streaming && now >= this.start + connectMs) this.fail(ProviderError.of('timeout', provider, `${provider}: no response within ${connectMs} ms`))
    else if (this.streaming && now >= this.lastData + idleMs) this.fail(ProviderError.of('timeout', provider, `${provider}: no data arrived within ${idleMs} ms`))
    else this.setTimer(this.nextDue(), now)
  }

  /** Unsubscribed: aborts the request, whatever it is doing. */
  cancel(): void {
    if (this.done) return
    this.done = true
    this.stopTimers()
    this.controller.abort()
  }

  async run(): Promise<void> {
    const { provider, request, controller } = this
    let response: Response
    try {
      response = await this.limits.fetch(request.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...request.headers },
        body: request.body,
        signal: controller.signal,
      })
    } catch (error) {
      this.fail(networkError(provider, error, 'before the response'))
      return
    }
    if (this.done) return
    if (!response.ok || response.body === null) {
      const text = response.body === null ? '' : await readStart(response.body, maxErrorBodyChars)
      this.fail(this.classify(response.status, response.headers, text))
      return
    }
    const type = response.headers.get('content-type')
    if (!isEventStream(type)) {
      const text = await readStart(response.body, quotedChars + 1)
      const quote = excerpt(text, quotedChars)
      this.fail(
        ProviderError.of('protocol', provider, `${provider}: expected an event stream (text/event-stream), got HTTP ${response.status} ${type}${quote === '' ? '' : `: ${quote}`}`, {
          status: response.status,
          retryable: false,
        }),
      )
      return
    }
    const reader = response.body.getReader()
    // Releases the socket whichever way reading stops.
    controller.signal.addEventListener('abort', () => void reader.cancel().catch(() => undefined), { once: true })
    this.streaming = true
    const scheduler = this.limits.scheduler
    this.lastData = scheduler.now()
    // The idle limit may come before the timer set for the connect limit.
    if (this.lastData + this.limits.idleMs < this.due) this.setTimer(this.nextDue(), this.lastData)
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>
      try {
        chunk = await reader.read()
      } catch (error) {
        this.fail(networkError(provider, error, 'while the response was streaming'))
        return
      }
      if (this.done) return
      if (chunk.done) {
        this.done = true
        this.stopTimers()
        this.subscriber.complete()
        return
      }
      this.lastData = scheduler.now()
      this.subscriber.next(chunk.value)
    }
  }
}

// Its hidden class outlives a call (see `resident`): the per-chunk loop embeds it.
resident(new HttpCall(unused, unused, unused, unused, unused))
