/**
 * An AG-UI HTTP endpoint on `node:http`: `POST` a `RunAgentInput` (JSON),
 * get the run's AG-UI events as Server-Sent Events (`data: {json}\n\n`, the
 * encoding `@ag-ui/client`'s `HttpAgent` reads). The client going away
 * (an abort, a closed tab) unsubscribes the run, which aborts it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AGUIEvent } from '@ag-ui/core'
import type { Subscription } from 'rxjs'
import { InvalidInputError } from '../types/input.js'
import { decodeRunAgentInput } from './input.js'
import { runDecoded, type AgUiRunFactory } from './run.js'

/** Options of {@link agUiHandler}. */
export interface AgUiHandlerOptions {
  /** Largest request body accepted, in bytes (default 10 MiB); a larger one gets 413. */
  readonly maxBodyBytes?: number
  /** Milliseconds since the epoch, for message timestamps and event `timestamp`s (default `Date.now`). */
  readonly now?: () => number
  /** Extra response headers (CORS, for instance). */
  readonly headers?: Readonly<Record<string, string>>
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
  return (req, res) => {
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST')
      sendError(res, new HttpError(405, `method ${req.method ?? '?'} not allowed: POST a RunAgentInput`), headers)
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
