/**
 * An AG-UI HTTP endpoint on `node:http`: `POST` a `RunAgentInput` (JSON),
 * get the run's AG-UI events as Server-Sent Events (`data: {json}\n\n`, the
 * encoding `@ag-ui/client`'s `HttpAgent` reads). The client going away
 * (an abort, a closed tab) unsubscribes the run, which aborts it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AGUIEvent } from '@ag-ui/core'
import type { Subscription } from 'rxjs'
import type { SessionStore } from '../agent/session-store.js'
import { InvalidInputError } from '../types/input.js'
import { decodeRunAgentInput } from './input.js'
import { runDecoded, type AgUiRunFactory } from './run.js'
import { sessionRunToAgUi } from './session-replay.js'

/** Options of {@link agUiHandler}. */
export interface AgUiHandlerOptions {
  /** Largest request body accepted, in bytes (default 10 MiB); a larger one gets 413. */
  readonly maxBodyBytes?: number
  /** Milliseconds since the epoch, for message timestamps and event `timestamp`s (default `Date.now`). */
  readonly now?: () => number
  /** Extra response headers (CORS, for instance). */
  readonly headers?: Readonly<Record<string, string>>
  /**
   * The store durable sessions are kept in (the session id is the thread id).
   * With it, `GET ?threadId=…` resumes: the thread's latest run, replayed from
   * its start then live until it ends, each frame with `id:` its session
   * position; `Last-Event-ID` (or `?from=`) skips the frames up to it.
   */
  readonly sessionStore?: SessionStore
}

/** One SSE frame (AG-UI's text encoding). */
export const sseFrame = (event: AGUIEvent, id?: string | number): string =>
  `${id === undefined ? '' : `id: ${id}\n`}data: ${JSON.stringify(event)}\n\n`

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details?: unknown,
  ) {
    super(message)
  }
}

function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) {
        reject(new HttpError(413, `request body larger than ${limit} bytes`))
        req.destroy()
      } else chunks.push(chunk)
    })
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('error', reject)
  })
}

function sendError(res: ServerResponse, error: HttpError, headers: Readonly<Record<string, string>>): void {
  if (res.headersSent) return
  res.writeHead(error.status, { ...headers, 'Content-Type': 'application/json' })
  res.end(JSON.stringify({ error: error.message, ...(error.details === undefined ? {} : { errors: error.details }) }))
}

/**
 * A `node:http` request listener serving AG-UI runs made by `factory`
 * (`loopRunner`, `agentRunner`, or your own):
 *
 * - `POST` with a JSON `RunAgentInput` → `200 text/event-stream`, one frame per event, closed after RUN_FINISHED / RUN_ERROR;
 * - a body that is not JSON, or not a `RunAgentInput` → `400` with `{ error, errors: [{ path, expected, actual }] }`;
 * - another method → `405`; a body over `maxBodyBytes` → `413`.
 *
 * @example
 * http.createServer(agUiHandler(loopRunner({ model, streamFn, tools }))).listen(8000)
 * // browser: new HttpAgent({ url: 'http://localhost:8000' }).runAgent()
 */
export function agUiHandler(factory: AgUiRunFactory, options: AgUiHandlerOptions = {}): (req: IncomingMessage, res: ServerResponse) => void {
  if (typeof factory !== 'function') throw new TypeError(`agUiHandler: expected a run factory function, got ${factory === null ? 'null' : typeof factory}`)
  const limit = options.maxBodyBytes ?? 10 * 1024 * 1024
  const now = options.now ?? Date.now
  const headers = options.headers ?? {}
  const store = options.sessionStore
  return (req, res) => {
    if (req.method === 'GET' && store !== undefined) {
      resume(store, req, res, headers, now)
      return
    }
    if (req.method !== 'POST') {
      res.setHeader('Allow', store === undefined ? 'POST' : 'POST, GET')
      sendError(res, new HttpError(405, `method ${req.method ?? '?'} not allowed: POST a RunAgentInput${store === undefined ? '' : ', or GET ?threadId= to resume'}`), headers)
      return
    }
    void readBody(req, limit)
      .then((body) => {
        let parsed: unknown
        try {
          parsed = JSON.parse(body)
        } catch (error) {
          throw new HttpError(400, `the request body is not JSON: ${error instanceof Error ? error.message : String(error)}`)
        }
        try {
          return decodeRunAgentInput(parsed, 'agUiHandler', now())
        } catch (error) {
          if (error instanceof InvalidInputError) throw new HttpError(400, error.message, error.errors)
          throw error
        }
      })
      .then((input) => {
        res.writeHead(200, { ...headers, 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' })
        res.flushHeaders()
        let subscription: Subscription | undefined
        res.on('close', () => subscription?.unsubscribe())
        subscription = runDecoded(input, factory, now).subscribe({
          next: (event) => void res.write(sseFrame(event)),
          error: () => res.end(),
          complete: () => res.end(),
        })
        if (res.destroyed) subscription.unsubscribe()
      })
      .catch((error: unknown) => {
        sendError(res, error instanceof HttpError ? error : new HttpError(500, error instanceof Error ? error.message : String(error)), headers)
      })
  }
}

/** `GET ?threadId=…[&from=p]` (or `Last-Event-ID: p`): the thread's latest run from the session log. */
function resume(store: SessionStore, req: IncomingMessage, res: ServerResponse, headers: Readonly<Record<string, string>>, now: () => number): void {
  const query = new URL(req.url ?? '/', 'http://localhost').searchParams
  const threadId = query.get('threadId')
  if (threadId === null || threadId === '') {
    sendError(res, new HttpError(400, 'resuming needs ?threadId= (the session id)'), headers)
    return
  }
  const after = req.headers['last-event-id'] ?? query.get('from') ?? '0'
  const skip = Number(after)
  if (!Number.isInteger(skip) || skip < 0) {
    sendError(res, new HttpError(400, `Last-Event-ID / from must be a session position (a non-negative integer), got ${JSON.stringify(after)}`), headers)
    return
  }
  void store.info(threadId).then(
    (info) => {
      if (info === undefined) {
        sendError(res, new HttpError(404, `no session '${threadId}'`), headers)
        return
      }
      res.writeHead(200, { ...headers, 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' })
      res.flushHeaders()
      const subscription = sessionRunToAgUi(store, threadId, { now }).subscribe({
        next: ({ position, event }) => {
          if (position > skip) res.write(sseFrame(event, position))
        },
        error: () => res.end(),
        complete: () => res.end(),
      })
      res.on('close', () => subscription.unsubscribe())
    },
    (error: unknown) => sendError(res, new HttpError(500, error instanceof Error ? error.message : String(error)), headers),
  )
}
