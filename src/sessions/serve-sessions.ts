/**
 * A small `node:http` server for a store's sessions as Server-Sent Events
 * (`GET /sessions/:id/events`): for a demo, a test, a sidecar process. An
 * application with its own server mounts {@link sessionEventsHandler} instead.
 */
import type { Server } from 'node:http'
import * as t from 'io-ts'
import type { SessionStore } from '../agent/session-store.js'
import { NonNegativeInteger, struct } from '../types/codec.js'
import { listen } from '../node/listen.js'
import { decodeInput } from '../types/input.js'
import { checkStore } from './sse-options.js'
import { sessionEventsHandler, type SessionEventsOptions } from './sse.js'

/** Options of {@link serveSessions}: where to listen, and the handler's options. */
export interface ServeSessionsOptions extends SessionEventsOptions {
  /** The port (default 0: any free port; `url` says which). */
  readonly port?: number
  /** The interface (default `127.0.0.1`: this machine only). */
  readonly host?: string
}

/** A listening server. */
export interface SessionServer {
  /** `http://host:port`; a session's events are at `${url}/sessions/${encodeURIComponent(id)}/events`. */
  readonly url: string
  readonly server: Server
  /** Stops listening and closes every open connection (readers see the stream end). Idempotent; the store stays open. */
  close(): Promise<void>
}

const Listen = struct('ServeSessionsOptions', {}, { port: NonNegativeInteger, host: t.string })

/**
 * Serves `store`'s sessions over HTTP until `close()`.
 *
 * @throws InvalidInputError for a bad store or option (before listening); rejects when the port cannot be listened on.
 */
export async function serveSessions(store: SessionStore, options: ServeSessionsOptions = {}): Promise<SessionServer> {
  checkStore(store, 'serveSessions')
  const { port = 0, host = '127.0.0.1', ...handlerOptions } = options
  decodeInput(Listen, { port, host }, 'serveSessions', 'options')
  const handler = sessionEventsHandler(store, handlerOptions)
  // Loaded here, so that importing rxagent/sessions (the memory store) loads no Node-only module.
  const { createServer } = await import('node:http')
  const server = createServer(handler)
  const url = await listen(server, port, host)
  let closed: Promise<void> | undefined
  return {
    url,
    server,
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })),
  }
}
