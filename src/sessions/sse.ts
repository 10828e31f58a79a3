/**
 * A session served as Server-Sent Events, for a reader that must be able to
 * reload: a browser's `EventSource`, a dashboard, another process.
 *
 * Every record of the session is one event:
 *
 *     id: <position>
 *     event: <the record's type: 'init', 'messageEnd', …, or 'stream'>
 *     data: <the SessionRecord as JSON: { position, at, body }>
 *
 * The `id:` is the record's position, so a client that reconnects sends it
 * back as `Last-Event-ID` and the handler replays from there: no duplicate,
 * no gap (stream records compacted in the meantime are skipped; the
 * `messageEnd` after them carries the whole message). A first connection
 * may ask for `?from=<position>` (the records after it); `Last-Event-ID`,
 * sent on every reconnection, wins over it.
 *
 * The replay is read in pages (`store.read`), each written when the client
 * has taken the one before; then the live tail (`store.events$`) is written
 * as records arrive. A client that reads slower than records arrive does not
 * make the server buffer without bound: past `maxBufferedBytes` the response
 * is ended, after whole events only, and the client's reconnection resumes
 * from the last one it got. A session deleted while it is served ends its
 * response (a comment line says so; `onStreamEnd` is told `deleted`); the
 * reconnection is answered 404 while the id is not reused, which stops an
 * `EventSource`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { interval, type Subscription } from 'rxjs'
import { SessionDeletedError, type SessionRecord, type SessionStore } from '../agent/session-store.js'
import { errorText } from '../types/codec.js'
import { checkStore, requestedFrom, resolveOptions, type SessionEventsHandler, type SessionEventsOptions, type SessionStreamEnd, type Settings } from './sse-options.js'

export { sessionIdFromPath, type SessionEventsHandler, type SessionEventsOptions, type SessionStreamEnd, type SessionStreamEndInfo } from './sse-options.js'

/** A plain-text answer (an error), or the end of a response that has started. */
function plain(res: ServerResponse, status: number, message: string, headers: Readonly<Record<string, string>> = {}): void {
  if (res.headersSent) return void res.end()
  res.writeHead(status, { ...headers, 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' })
  res.end(`${message}\n`)
}

/** A throwing `onStreamEnd` has no caller to throw to. */
function warn(error: unknown): void {
  process.emitWarning(`sessionEventsHandler: onStreamEnd threw: ${errorText(error)}`, 'SessionEventsWarning')
}

/**
 * A `node:http` handler that serves one session per request as Server-Sent
 * Events (see the module comment): the records after `Last-Event-ID` (or
 * `?from=`, or all), then the live tail, until the client goes away.
 *
 * Answers: 404 with a plain message for a URL that names no session or a
 * session the store does not have; 400 for a `Last-Event-ID` / `from` that is
 * not a position, or is past the session's last record (a client of another
 * session or database); 405 for a method other than GET and HEAD; 500 when
 * the store fails before streaming starts.
 *
 * @throws InvalidInputError when `store` is not a SessionStore or an option is invalid (the path names it: `heartbeatMs`).
 */
export function sessionEventsHandler(store: SessionStore, options: SessionEventsOptions = {}): SessionEventsHandler {
  checkStore(store, 'sessionEventsHandler')
  const settings = resolveOptions(options, 'sessionEventsHandler')
  return (req, res) => {
    serve(store, settings, req, res).catch((error: unknown) => plain(res, 500, `could not read the session: ${errorText(error)}`, settings.headers))
  }
}

async function serve(store: SessionStore, s: Settings, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') return plain(res, 405, `method ${req.method ?? '?'} not allowed: GET a session's events`, { ...s.headers, allow: 'GET, HEAD' })
  let sessionId: string | undefined
  try {
    sessionId = s.sessionIdOf(req)
  } catch (error) {
    return plain(res, 500, `sessionIdOf threw: ${errorText(error)}`, s.headers)
  }
  if (sessionId === undefined || sessionId === '') return plain(res, 404, `not found: ${req.url ?? ''} names no session (expected /sessions/<id>/events)`, s.headers)
  const asked = requestedFrom(req)
  if ('problem' in asked) return plain(res, 400, asked.problem, s.headers)
  const info = await store.info(sessionId)
  if (info === undefined) return plain(res, 404, `session '${sessionId}' not found`, s.headers)
  if (asked.from > info.lastPosition) {
    return plain(res, 400, `position ${asked.from} is past the last record of session '${sessionId}' (${info.lastPosition}): was it deleted and created again?`, s.headers)
  }
  // The client may have gone while the store answered: nothing would end the tail then.
  if (res.destroyed) return
  res.writeHead(200, {
    ...s.headers,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    'x-accel-buffering': 'no',
  })
  if (req.method === 'HEAD') return void res.end()
  res.write(`retry: ${s.retryMs}\n\n`)
  await new SessionEventStream(store, s, sessionId, asked.from, res).run()
}

/** One streaming response: the paged replay, then the tail, until it ends (once). */
class SessionEventStream {
  private last: number
  private records = 0
  private ended = false
  private checking = false
  private readonly subscriptions: Subscription[] = []
  private wake: (() => void) | undefined

  constructor(
    private readonly store: SessionStore,
    private readonly s: Settings,
    private readonly sessionId: string,
    from: number,
    private readonly res: ServerResponse,
  ) {
    this.last = from
    res.on('close', () => this.end('client'))
    res.on('drain', () => this.resume())
  }

  async run(): Promise<void> {
    try {
      await this.stream()
    } catch (error) {
      this.end('error', error)
    }
  }

  private async stream(): Promise<void> {
    if (this.s.heartbeatMs > 0) this.subscriptions.push(interval(this.s.heartbeatMs, this.s.scheduler).subscribe(() => this.write(': keep-alive\n\n')))
    // The replay, a page at a time, each when the client has taken the one before.
    for (;;) {
      let page: readonly SessionRecord[]
      try {
        page = await this.store.read(this.sessionId, { from: this.last, limit: this.s.replayPageSize })
      } catch (error) {
        return this.end('error', error)
      }
      for (const record of page) if (!this.ended) this.send(record)
      if (this.ended || page.length < this.s.replayPageSize) break
      if (this.res.writableNeedDrain) await new Promise<void>((resolve) => (this.wake = resolve))
      if (this.ended) return
    }
    if (this.ended) return
    // The tail: what was appended during the replay, then every new record.
    this.subscriptions.push(
      this.store.events$(this.sessionId, { from: this.last }).subscribe({
        next: (record) => this.send(record),
        error: (error: unknown) => this.end(error instanceof SessionDeletedError ? 'deleted' : 'error', error),
        complete: () => this.end('storeClosed'),
      }),
    )
  }

  /** Writes a record as one event; one at or before the last one sent is not sent again. */
  private send(record: SessionRecord): void {
    if (this.ended || record.position <= this.last) return
    const event = this.s.eventNames === 'type' ? `event: ${record.body.type}\n` : ''
    this.last = record.position
    this.records++
    this.write(`id: ${record.position}\n${event}data: ${JSON.stringify(record)}\n\n`)
  }

  private write(text: string): void {
    if (this.ended) return
    this.res.write(text)
    // Node holds a tick's writes until the next tick (it corks the socket): what the client has not
    // taken is what is still held after the socket was given the chance to take it.
    if (this.res.writableLength > this.s.maxBufferedBytes && !this.checking) {
      this.checking = true
      setImmediate(() => {
        this.checking = false
        if (this.res.writableLength > this.s.maxBufferedBytes) this.end('overflow')
      })
    }
  }

  private resume(): void {
    const wake = this.wake
    this.wake = undefined
    wake?.()
  }

  private end(reason: SessionStreamEnd, error?: unknown): void {
    if (this.ended) return
    this.ended = true
    for (const subscription of this.subscriptions) subscription.unsubscribe()
    this.resume()
    if (reason === 'error' && !this.res.destroyed) this.res.write(`: the session's store failed: ${errorText(error).replace(/\s+/g, ' ')}\n\n`)
    if (reason === 'deleted' && !this.res.destroyed) this.res.write(`: ${errorText(error).replace(/\s+/g, ' ')}\n\n`)
    if (!this.res.writableEnded) this.res.end()
    if (this.s.onStreamEnd === undefined) return
    try {
      this.s.onStreamEnd({ sessionId: this.sessionId, reason, lastPosition: this.last, records: this.records, ...(error === undefined ? {} : { error }) })
    } catch (thrown) {
      warn(thrown)
    }
  }
}
