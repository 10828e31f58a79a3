/**
 * The transport every adapter shares: one POST, its body as a stream of byte
 * chunks, over `node:http` or a `fetch` (transport.ts chooses; the limits,
 * checks and errors below are the same on both). The request starts on
 * subscribe; unsubscribing aborts it at any moment (before the response, or
 * while the body is read). Timeouts run on an injected scheduler, so tests
 * can make them virtual.
 *
 * Nothing a server sends is trusted: the whole call has a deadline, an error
 * body is read only up to a bound, and a `200` that is not an event stream is
 * an error. The body arrives serialized (by `streamFnOf`, which classifies a
 * body that cannot be: the request's fault, not the network's).
 */
import type { ClientRequest, IncomingMessage } from 'node:http'
import { asyncScheduler, Observable, type SchedulerLike, type Subscriber, type Subscription } from 'rxjs'
import { ProviderError } from '../types/provider-error.js'
import { networkError, notEventStreamError } from './errors.js'
import { headersOf, postOverNode, readNodeStart } from './node-http.js'
import { fetchFor, transportDefaults, type HttpErrorClassifier, type HttpRequest, type TransportOptions } from './transport.js'
import { readStart } from './fetch-read.js'
import { resident, unused } from '../rx/resident.js'

/** The most of an error body read to classify it; the rest is not read. */
const maxErrorBodyChars = 256 * 1024
/** How much of a body that is not an event stream an error quotes. */
const quotedChars = 200

/** Whether a `content-type` names an event stream (a missing one is given the benefit of the doubt). */
const isEventStream = (type: string | null): boolean => type === null || type.split(';')[0]!.trim().toLowerCase() === 'text/event-stream'

/**
 * POSTs `request` (its body already JSON text) and emits the response body's
 * chunks. A non-2xx status errors with `classify`'s error; a `200` that is
 * not an event stream, network failures and timeouts error with a
 * `ProviderError` of kind `protocol`, `network` or `timeout`.
 */
export function httpBody(provider: string, request: HttpRequest & { readonly body: string }, classify: HttpErrorClassifier, options: TransportOptions = {}): Observable<Uint8Array> {
  const limits: Limits = {
    fetch: fetchFor(options.fetch),
    scheduler: options.scheduler ?? asyncScheduler,
    connectMs: options.connectTimeoutMs ?? transportDefaults.connectTimeoutMs,
    idleMs: options.idleTimeoutMs ?? transportDefaults.idleTimeoutMs,
    totalMs: options.totalTimeoutMs ?? transportDefaults.totalTimeoutMs,
  }
  return new Observable<Uint8Array>((subscriber) => {
    const call = new HttpCall(provider, request, classify, limits, subscriber)
    call.startTimer()
    call.run()
    return () => call.cancel()
  })
}

/** The transport options of one `httpBody`, defaults applied. */
interface Limits {
  /** `undefined`: over `node:http` (transport.ts). */
  readonly fetch: typeof globalThis.fetch | undefined
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
  /** The `fetch` path's; `undefined` over `node:http`. */
  private controller: AbortController | undefined = undefined
  /** The `node:http` path's request; `undefined` over `fetch`. */
  private outgoing: ClientRequest | undefined = undefined
  private answered = false
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

  /** Stops the request whatever it is doing; over `node:http`, closes its socket. */
  private abort(): void {
    this.controller?.abort()
    this.outgoing?.destroy()
  }

  private fail(error: ProviderError): void {
    if (this.done) return
    this.done = true
    this.stopTimers()
    this.abort()
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
    this.abort()
  }

  /** Sends the request, over the transport `fetchFor` chose. */
  run(): void {
    const fetch = this.limits.fetch
    if (fetch === undefined) this.runNode()
    else void this.runFetch(fetch)
  }

  /** The body streams from now on: the idle limit replaces the connect limit. */
  private streamStarts(): void {
    this.streaming = true
    this.lastData = this.limits.scheduler.now()
    // The idle limit may come before the timer set for the connect limit.
    if (this.lastData + this.limits.idleMs < this.due) this.setTimer(this.nextDue(), this.lastData)
  }

  /** A body chunk. */
  data(chunk: Uint8Array): void {
    if (this.done) return
    this.lastData = this.limits.scheduler.now()
    this.subscriber.next(chunk)
  }

  /** The body ended. */
  end(): void {
    if (this.done) return
    this.done = true
    this.stopTimers()
    this.subscriber.complete()
  }

  private runNode(): void {
    const { provider, request } = this
    try {
      this.outgoing = postOverNode(request.url, { 'content-type': 'application/json', accept: 'text/event-stream', ...request.headers }, request.body)
    } catch (error) {
      this.fail(networkError(provider, error, 'before the response'))
      return
    }
    this.outgoing.on('response', (response: IncomingMessage) => this.response(response))
    // After the response, its own events report a failure (a reset mid-body included).
    this.outgoing.on('error', (error) => this.answered || this.fail(networkError(provider, error, 'before the response')))
  }

  /** The status and headers over `node:http`: the same checks as `runFetch`'s. */
  private response(response: IncomingMessage): void {
    this.answered = true
    if (this.done) return
    const { provider } = this
    const status = response.statusCode ?? 0
    if (status < 200 || status > 299) {
      void readNodeStart(response, maxErrorBodyChars).then((text) => this.fail(this.classify(status, headersOf(response), text)))
      return
    }
    const type = response.headers['content-type'] ?? null
    if (!isEventStream(type)) {
      void readNodeStart(response, quotedChars + 1).then((text) => this.fail(notEventStreamError(provider, status, type, text, quotedChars)))
      return
    }
    this.streamStarts()
    // Paused mode: `read()` hands over, as one chunk, all the body buffered since the last read
    // (several HTTP chunks when the client is busy), as undici's body stream does. WIRE Anthropic
    // text (20k deltas, the server writing 8 events at a time): 48 chunks a run down the SSE decoder
    // against 2,533 with a 'data' event per HTTP chunk, the transport's self time in `--cpu-prof`
    // ~0.65-0.95 of module loading's against ~0.8 (3 alternating processes of 22 runs, shared host).
    response.on('readable', () => this.readBody(response))
    response.on('end', () => this.end())
    response.on('error', (error) => this.fail(networkError(provider, error, 'while the response was streaming')))
    // Closed without 'end' or 'error' (not seen on Node 20, where a reset is an 'aborted' error): still a reset.
    response.on('close', () => this.closed())
  }

  /**
   * The response closed: a reset unless it ended (or failed) before. Every response closes, so the
   * two errors are made only when needed: made first, they were the largest self time of the
   * adapter in `--cpu-prof` of WIRE Anthropic tools (an `Error`'s stack captured twice a request).
   */
  private closed(): void {
    if (this.done) return
    this.fail(networkError(this.provider, Object.assign(new Error('aborted'), { code: 'ECONNRESET' }), 'while the response was streaming'))
  }

  /** Reads what the body has buffered. */
  private readBody(response: IncomingMessage): void {
    let chunk: Buffer | null
    while (!this.done && (chunk = response.read() as Buffer | null) !== null) this.data(chunk)
  }

  private async runFetch(fetch: typeof globalThis.fetch): Promise<void> {
    const { provider, request } = this
    const controller = (this.controller = new AbortController())
    let response: Response
    try {
      response = await fetch(request.url, {
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
      this.fail(notEventStreamError(provider, response.status, type, await readStart(response.body, quotedChars + 1), quotedChars))
      return
    }
    const reader = response.body.getReader()
    // Releases the socket whichever way reading stops.
    controller.signal.addEventListener('abort', () => void reader.cancel().catch(() => undefined), { once: true })
    this.streamStarts()
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>
      try {
        chunk = await reader.read()
      } catch (error) {
        this.fail(networkError(provider, error, 'while the response was streaming'))
        return
      }
      if (this.done) return
      if (chunk.done) return this.end()
      this.data(chunk.value)
    }
  }
}

// Its hidden class outlives a call (see `resident`): the per-chunk loop embeds it.
resident(new HttpCall(unused, unused, unused, unused, unused))
