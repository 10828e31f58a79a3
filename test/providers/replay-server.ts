/**
 * A local HTTP server (127.0.0.1, a free port) that replays scripted
 * responses: recorded SSE bodies split into network chunks, error statuses,
 * stalls and connection resets. It records every request it receives, so
 * tests can check what an adapter sent. Never reaches the internet.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { afterEach } from 'vitest'

/** One scripted response. */
export interface ScriptedHttpResponse {
  readonly status?: number
  readonly headers?: Readonly<Record<string, string>>
  /** The body, written chunk by chunk (each a separate `write`). */
  readonly chunks?: readonly (string | Uint8Array)[]
  /** Pause between chunks, in ms (default 0: written back to back). */
  readonly gapMs?: number
  /** After writing this many chunks, stop writing and keep the connection open (a stalled stream). */
  readonly stallAfter?: number
  /** After writing this many chunks, destroy the socket (a connection reset). */
  readonly resetAfter?: number
  /** Delay before the status line is sent, in ms. */
  readonly headerDelayMs?: number
  /**
   * After the chunks, write this forever (`gapMs` apart, waiting for the
   * client to drain) until the client closes: keep-alive pings that never end.
   */
  readonly endless?: string | Uint8Array
}

export interface RecordedRequest {
  readonly method: string
  readonly url: string
  readonly headers: IncomingMessage['headers']
  readonly body: unknown
}

export interface ReplayServer {
  readonly url: string
  readonly requests: RecordedRequest[]
  /** Sockets still open (the client's keep-alive pool may hold idle ones). */
  openSockets(): number
  /** Requests whose response has neither ended nor been closed: what would hang. */
  inFlight(): number
  /** Whether a request's socket was closed by the client before the body ended. */
  readonly clientAborts: number
  /** Body writes made so far, over all responses. */
  writes(): number
  close(): Promise<void>
}

/**
 * Starts a server answering request number k with `responses[k]` (the last
 * one repeats), or with `responses(request, k)`.
 */
export async function startReplayServer(
  responses: readonly ScriptedHttpResponse[] | ((request: RecordedRequest, k: number) => ScriptedHttpResponse),
): Promise<ReplayServer> {
  const requests: RecordedRequest[] = []
  const sockets = new Set<Socket>()
  let clientAborts = 0
  let inFlight = 0
  let writes = 0
  const timers = new Set<NodeJS.Timeout>()
  const later = (ms: number, f: () => void): void => {
    const t = setTimeout(() => {
      timers.delete(t)
      f()
    }, ms)
    timers.add(t)
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = []
    req.on('data', (b: Buffer) => parts.push(b))
    req.on('end', () => {
      const raw = Buffer.concat(parts).toString('utf8')
      let body: unknown = raw
      try {
        body = JSON.parse(raw)
      } catch {
        // Kept as text.
      }
      const recorded: RecordedRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body }
      const k = requests.length
      requests.push(recorded)
      const script = typeof responses === 'function' ? responses(recorded, k) : (responses[Math.min(k, responses.length - 1)] ?? { status: 500 })
      let finished = false
      inFlight++
      res.on('close', () => {
        inFlight--
        if (!finished) clientAborts++
      })
      const chunks = script.chunks ?? []
      const send = (): void => {
        res.writeHead(script.status ?? 200, { 'content-type': 'text/event-stream', ...script.headers })
        res.flushHeaders()
        let i = 0
        const step = (): void => {
          if (res.destroyed) return
          if (script.resetAfter !== undefined && i >= script.resetAfter) {
            req.socket.destroy()
            return
          }
          if (script.stallAfter !== undefined && i >= script.stallAfter) return
          if (i >= chunks.length && script.endless !== undefined) {
            writes++
            const next = (): void => {
              if ((script.gapMs ?? 0) > 0) later(script.gapMs!, step)
              else setImmediate(step)
            }
            if (res.write(script.endless)) next()
            else res.once('drain', next)
            return
          }
          if (i >= chunks.length) {
            finished = true
            res.end()
            return
          }
          writes++
          res.write(chunks[i++])
          if ((script.gapMs ?? 0) > 0) later(script.gapMs!, step)
          else setImmediate(step)
        }
        step()
      }
      if ((script.headerDelayMs ?? 0) > 0) later(script.headerDelayMs!, send)
      else send()
    })
  })
  server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    openSockets: () => [...sockets].filter((s) => !s.destroyed).length,
    inFlight: () => inFlight,
    writes: () => writes,
    get clientAborts() {
      return clientAborts
    },
    close: async () => {
      for (const t of timers) clearTimeout(t)
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** An SSE body from `(event?, data)` pairs, in wire format. */
export function sseBody(events: readonly { event?: string; data: unknown }[]): string {
  return events
    .map((e) => `${e.event === undefined ? '' : `event: ${e.event}\n`}data: ${typeof e.data === 'string' ? e.data : JSON.stringify(e.data)}\n\n`)
    .join('')
}

export { splitBytes } from '../../marbles/fold-chunks.js'

/** The replay server of the running test: started by `serve`, closed after the test (or at `close`). */
export interface ReplayServerSlot {
  /** The server `serve` started last, while it is open. */
  readonly current: ReplayServer | undefined
  /** Closes the current server (if any), then starts one answering `responses`. */
  serve(responses: Parameters<typeof startReplayServer>[0]): Promise<ReplayServer>
  /** Closes the current server now (nothing to do when there is none). */
  close(): Promise<void>
}

/**
 * One replay server per test: registers an `afterEach` (call it at module or
 * `describe` level) that closes whatever the test left open.
 */
export function replayServerPerTest(): ReplayServerSlot {
  let current: ReplayServer | undefined
  const close = async (): Promise<void> => {
    const open = current
    current = undefined
    await open?.close()
  }
  afterEach(close)
  return {
    get current() {
      return current
    },
    async serve(responses) {
      await close()
      current = await startReplayServer(responses)
      return current
    },
    close,
  }
}
