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
import { asyncScheduler, Observable, type SchedulerLike, type Subscription } from 'rxjs'
import { ProviderError } from '../types/provider-error.js'
import { excerpt } from './errors.js'
import { defaultMaxEventSize } from './sse.js'

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
  const fetchFn = options.fetch ?? globalThis.fetch
  const scheduler = options.scheduler ?? asyncScheduler
  const connectMs = options.connectTimeoutMs ?? transportDefaults.connectTimeoutMs
  const idleMs = options.idleTimeoutMs ?? transportDefaults.idleTimeoutMs
  const totalMs = options.totalTimeoutMs ?? transportDefaults.totalTimeoutMs
  return new Observable<Uint8Array>((subscriber) => {
    const controller = new AbortController()
    let done = false
    // One timer for the three limits: set for the earliest, it fails the call for the limit that
    // passed when it fires, or sets itself for the next one. A body chunk only notes the time (the
    // per-chunk clearTimeout/setInterval pair of a re-armed idle timer was ~3% of the adapter's CPU
    // on the WIRE 20k-delta stream). Before: a timer per limit, three set and three cancelled per
    // request. CPU of the adapter alone, 51 requests answered by a `fetch` in process with the WIRE
    // final answer (bench/wire/streams.mjs; a scratch probe, medians of 4 alternating processes of 40
    // rounds), with the secrets found only on error (protocol.ts): 8.7 → 6.7 ms, ~38 µs a request.
    const start = scheduler.now()
    let streaming = false
    let lastData = start
    let timer: Subscription | undefined
    let due = Number.POSITIVE_INFINITY
    const stopTimers = (): void => {
      timer?.unsubscribe()
      timer = undefined
    }
    const fail = (error: ProviderError): void => {
      if (done) return
      done = true
      stopTimers()
      controller.abort()
      subscriber.error(error)
    }
    /** The earliest limit still ahead: the whole call's, and the connect limit until the body streams, the idle one after. */
    const nextDue = (): number => Math.min(start + totalMs, streaming ? lastData + idleMs : start + connectMs)
    const setTimer = (at: number, now: number): void => {
      stopTimers()
      due = at
      if (Number.isFinite(at)) timer = scheduler.schedule(watch, Math.max(0, at - now))
    }
    const watch = (): void => {
      timer = undefined
      const now = scheduler.now()
      if (now >= start + totalMs) {
        fail(ProviderError.of('timeout', provider, `${provider}: the response did not finish within ${totalMs} ms (totalTimeoutMs)`, { retryable: false }))
      } else if (!streaming && now >= start + connectMs) fail(ProviderError.of('timeout', provider, `${provider}: no response within ${connectMs} ms`))
      else if (streaming && now >= lastData + idleMs) fail(ProviderError.of('timeout', provider, `${provider}: no data arrived within ${idleMs} ms`))
      else setTimer(nextDue(), now)
    }
    setTimer(nextDue(), start)

    const run = async (): Promise<void> => {
      let response: Response
      try {
        response = await fetchFn(request.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...request.headers },
          body: request.body,
          signal: controller.signal,
        })
      } catch (error) {
        fail(networkError(provider, error, 'before the response'))
        return
      }
      if (done) return
      if (!response.ok || response.body === null) {
        const text = response.body === null ? '' : await readStart(response.body, maxErrorBodyChars)
        fail(classify(response.status, response.headers, text))
        return
      }
      const type = response.headers.get('content-type')
      if (!isEventStream(type)) {
        const text = await readStart(response.body, quotedChars + 1)
        const quote = excerpt(text, quotedChars)
        fail(
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
      streaming = true
      lastData = scheduler.now()
      // The idle limit may come before the timer set for the connect limit.
      if (lastData + idleMs < due) setTimer(nextDue(), lastData)
      for (;;) {
        let chunk: ReadableStreamReadResult<Uint8Array>
        try {
          chunk = await reader.read()
        } catch (error) {
          fail(networkError(provider, error, 'while the response was streaming'))
          return
        }
        if (done) return
        if (chunk.done) {
          done = true
          stopTimers()
          subscriber.complete()
          return
        }
        lastData = scheduler.now()
        subscriber.next(chunk.value)
      }
    }
    void run()

    return () => {
      if (done) return
      done = true
      stopTimers()
      controller.abort()
    }
  })
}
