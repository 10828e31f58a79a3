/**
 * The options of the SSE helper (`sse.ts`), their defaults, and what a
 * request asks for: which session (`sessionIdOf`), from which position
 * (`Last-Event-ID`, `?from=`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import * as t from 'io-ts'
import { asyncScheduler, type SchedulerLike } from 'rxjs'
import type { SessionStore } from '../agent/session-store.js'
import { NonNegativeInteger, describeValue, struct } from '../types/codec.js'
import { decodeInput, invalidInput } from '../types/input.js'
import { FunctionValue } from '../types/tool.js'

/** Why a response ended. */
export type SessionStreamEnd =
  /** The client went away (or the server closed its connection). */
  | 'client'
  /** The client read slower than records arrived: `maxBufferedBytes` was reached (it reconnects and resumes). */
  | 'overflow'
  /** The store was closed: its tail completed. */
  | 'storeClosed'
  /** The session was deleted (its tail ended with `SessionDeletedError`, the `error`); a reconnection gets 404 while the id is not reused. */
  | 'deleted'
  /** The store failed (`error` says how). */
  | 'error'

/** What `onStreamEnd` is told when a response that had started streaming ends. */
export interface SessionStreamEndInfo {
  readonly sessionId: string
  readonly reason: SessionStreamEnd
  /** The position of the last record written (the `from` asked for when none was). */
  readonly lastPosition: number
  /** The records written by this response. */
  readonly records: number
  readonly error?: unknown
}

/** Options of {@link sessionEventsHandler}. */
export interface SessionEventsOptions {
  /**
   * The session a request asks for, or `undefined` when the request is not
   * one this handler serves (404). Default: the `:id` of `/sessions/:id/events`
   * (URL-decoded) in `req.url`; behind a router that strips a mount path, or
   * with route parameters, pass e.g. `(req) => req.params.id`.
   */
  readonly sessionIdOf?: (req: IncomingMessage) => string | undefined
  /** A comment line (`: keep-alive`) this often, in ms, so that proxies keep the connection open (default 15,000; 0: none). */
  readonly heartbeatMs?: number
  /** Where the heartbeat's time comes from (default `asyncScheduler`). */
  readonly scheduler?: SchedulerLike
  /** The `retry:` hint: how long a client waits before reconnecting, in ms (default 1,000). */
  readonly retryMs?: number
  /**
   * The most bytes the response may hold that the client has not taken yet
   * (Node's `writableLength`). Past it, the response ends after the events
   * written so far and the client reconnects from the last one (default 1 MiB).
   * It is checked once Node has handed a tick's writes to the socket, so a
   * burst written at once (records appended in one batch) may pass it by its
   * own size; a response always writes what it was given before it ends, so a
   * client always makes progress.
   */
  readonly maxBufferedBytes?: number
  /** Records read per page of the replay (default 500). */
  readonly replayPageSize?: number
  /**
   * `type` (default): each event is named after its record's type (`event: messageEnd`,
   * `event: stream`…), so an `EventSource` listens with `addEventListener(type, …)`.
   * `message`: no `event:` field, so every record reaches `onmessage`.
   */
  readonly eventNames?: 'type' | 'message'
  /** More response headers (CORS, for example). */
  readonly headers?: Readonly<Record<string, string>>
  /** Told when a streaming response ends, and why (for logs and metrics). An exception it throws becomes a process warning. */
  readonly onStreamEnd?: (info: SessionStreamEndInfo) => void
}

/** A `node:http` request listener (Express and similar frameworks take it as a route handler too). */
export type SessionEventsHandler = (req: IncomingMessage, res: ServerResponse) => void

const PositiveInteger = new t.Type<number, number, unknown>(
  'PositiveInteger',
  (u): u is number => typeof u === 'number' && Number.isInteger(u) && u > 0,
  (u, c) => (typeof u === 'number' && Number.isInteger(u) && u > 0 ? t.success(u) : t.failure(u, c)),
  t.identity,
)

const isScheduler = (u: unknown): u is SchedulerLike =>
  typeof u === 'object' && u !== null && typeof (u as SchedulerLike).schedule === 'function' && typeof (u as SchedulerLike).now === 'function'

const SchedulerShape = new t.Type<SchedulerLike, SchedulerLike, unknown>('SchedulerLike', isScheduler, (u, c) => (isScheduler(u) ? t.success(u) : t.failure(u, c)), t.identity)

const Options = struct(
  'SessionEventsOptions',
  {},
  {
    sessionIdOf: FunctionValue,
    heartbeatMs: NonNegativeInteger,
    scheduler: SchedulerShape,
    retryMs: NonNegativeInteger,
    maxBufferedBytes: PositiveInteger,
    replayPageSize: PositiveInteger,
    eventNames: t.keyof({ type: null, message: null }),
    headers: t.record(t.string, t.string),
    onStreamEnd: FunctionValue,
  },
)

const DEFAULT_PATH = /^\/sessions\/([^/?#]+)\/events\/?(?:[?#]|$)/

/** The default `sessionIdOf`: the `:id` of `/sessions/:id/events`. */
export function sessionIdFromPath(req: IncomingMessage): string | undefined {
  const match = DEFAULT_PATH.exec(req.url ?? '')
  if (match === null) return undefined
  try {
    return decodeURIComponent(match[1]!)
  } catch {
    return undefined
  }
}

/** Checks that `store` has what the handler calls. @throws InvalidInputError naming the missing method. */
export function checkStore(store: unknown, entry: string): asserts store is SessionStore {
  if (typeof store !== 'object' || store === null) throw invalidInput(entry, 'store', '', `expected a SessionStore, got ${describeValue(store)}`, store)
  for (const method of ['read', 'events$', 'info'] as const) {
    const value = (store as Record<string, unknown>)[method]
    if (typeof value !== 'function') throw invalidInput(entry, 'store', `.${method}`, `expected a function (a SessionStore), got ${describeValue(value)}`, value)
  }
}

/** A position as a client sends it: digits only, a safe integer. */
function parsePosition(raw: string): number | undefined {
  if (!/^\d{1,16}$/.test(raw)) return undefined
  const n = Number(raw)
  return Number.isSafeInteger(n) ? n : undefined
}

/** Where a request wants to resume: after `from`, or a reason it cannot be read. */
export function requestedFrom(req: IncomingMessage): { readonly from: number } | { readonly problem: string } {
  const header = req.headers['last-event-id']
  const lastEventId = Array.isArray(header) ? header[0] : header
  if (lastEventId !== undefined && lastEventId.trim() !== '') {
    const from = parsePosition(lastEventId.trim())
    return from === undefined ? { problem: `Last-Event-ID must be a record position (a whole number ≥ 0), got ${JSON.stringify(lastEventId)}` } : { from }
  }
  const query = new URL(req.url ?? '/', 'http://localhost').searchParams.get('from')
  if (query === null) return { from: 0 }
  const from = parsePosition(query)
  return from === undefined ? { problem: `?from= must be a record position (a whole number ≥ 0), got ${JSON.stringify(query)}` } : { from }
}

/** The options with their defaults, checked. */
export interface Settings {
  readonly sessionIdOf: (req: IncomingMessage) => string | undefined
  readonly heartbeatMs: number
  readonly scheduler: SchedulerLike
  readonly retryMs: number
  readonly maxBufferedBytes: number
  readonly replayPageSize: number
  readonly eventNames: 'type' | 'message'
  readonly headers: Readonly<Record<string, string>>
  readonly onStreamEnd: SessionEventsOptions['onStreamEnd']
}

/** `options` decoded, with the defaults filled in. @throws InvalidInputError naming the option (`heartbeatMs`). */
export function resolveOptions(options: SessionEventsOptions, entry: string): Settings {
  const o = decodeInput(Options, options, entry, 'options')
  return {
    sessionIdOf: (o.sessionIdOf as SessionEventsOptions['sessionIdOf']) ?? sessionIdFromPath,
    heartbeatMs: o.heartbeatMs ?? 15_000,
    scheduler: o.scheduler ?? asyncScheduler,
    retryMs: o.retryMs ?? 1_000,
    maxBufferedBytes: o.maxBufferedBytes ?? 1024 * 1024,
    replayPageSize: o.replayPageSize ?? 500,
    eventNames: o.eventNames ?? 'type',
    headers: o.headers ?? {},
    onStreamEnd: o.onStreamEnd as SessionEventsOptions['onStreamEnd'],
  }
}
