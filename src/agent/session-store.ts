/**
 * The port a durable session is kept through: a `SessionStore` holds, per
 * session id, the agent's log (`agent-log.ts`) and, between its entries, the
 * chunks of the message streaming now, so that a reader can resume a stream
 * and a crashed run can keep its partial answer.
 *
 * The Agent layer defines this port; the stores (in memory, PGlite,
 * PostgreSQL) live in `src/sessions/` and implement it, each passing the one
 * contract suite (`test/sessions/store-contract.ts`).
 *
 * Records and positions:
 * - Every record of a session has a `position`: 1, 2, 3… in append order,
 *   shared by log entries and stream records, never reused. A reader resumes
 *   "after position p" (the SSE `id:`).
 * - A log entry's `seq` is its place in the agent log (0, 1, 2…, no gaps);
 *   appends are checked against it (optimistic concurrency).
 * - A `stream` record holds chunks of the assistant message streaming now
 *   (adjacent text / thinking / argument deltas merged), so that deltas are
 *   not one row each. Stream records are compacted: appending a log entry
 *   that ends a message or a run (`messageEnd`, `agentEnd`, `runFailed`,
 *   `reset`) deletes the session's stream records before it, in the same
 *   transaction. Positions then have gaps; a reader that asks for a deleted
 *   position gets the records after it (the `messageEnd` carries the whole
 *   message), so it never sees a gap in meaning nor a duplicate.
 */
import * as t from 'io-ts'
import type { Observable } from 'rxjs'
import { NonNegativeInteger, taggedUnion } from '../types/codec.js'
import { ProviderChunk } from '../types/chunk.js'
import { AgentLogEntry } from './agent-log.js'

/** Chunks of the assistant message streaming now, in arrival order (see the module comment). */
export const StreamRecord = t.type(
  {
    type: t.literal('stream'),
    /** The log's length when these chunks streamed: they belong after entry `afterSeq - 1`. */
    afterSeq: NonNegativeInteger,
    chunks: t.readonlyArray(ProviderChunk),
  },
  'StreamRecord',
)
export type StreamRecord = t.TypeOf<typeof StreamRecord>

/** What a session holds at a position: a log entry or a stream record (tagged by `type`: a bad record reports its own member's fields). */
export const SessionRecordBody = taggedUnion('type', [...AgentLogEntry.types, StreamRecord], 'SessionRecordBody')
export type SessionRecordBody = t.TypeOf<typeof SessionRecordBody>

/** A record to append: what it holds and when it happened (ms since the epoch, from the writer's scheduler: timelines are drawn from it). */
export const TimedRecord = t.type({ at: t.number, body: SessionRecordBody }, 'TimedRecord')
export type TimedRecord = t.TypeOf<typeof TimedRecord>

/** One record of a session, as read back. */
export const SessionRecord = t.type({ position: NonNegativeInteger, at: t.number, body: SessionRecordBody }, 'SessionRecord')
export type SessionRecord = t.TypeOf<typeof SessionRecord>

/**
 * One atomic append: `records` in order (log entries with contiguous `seq`,
 * stream records between them), each with its time. `expectedSeq` is the session's log length
 * before the append: the `seq` of the first log entry in `records`, or the
 * `afterSeq` of stream records appended alone. `expectedSeq: 0` with an
 * `init` entry first creates the session.
 */
export interface SessionAppend {
  readonly expectedSeq: number
  readonly records: readonly TimedRecord[]
  /** When set, the append is refused unless this holder holds the session's lease now (a fence against a writer whose lease was taken over). */
  readonly leaseHolder?: string
}

/** What an append committed. */
export interface SessionAppended {
  /** The position of the last record appended (of the session's last record when `records` was empty). */
  readonly lastPosition: number
  /** The session's log length after the append. */
  readonly length: number
}

/** A session as listed. Times are milliseconds since the epoch. */
export interface SessionInfo {
  readonly sessionId: string
  /** From the `init` entry. */
  readonly agentId: string
  /** The log's length (entries, not stream records). */
  readonly length: number
  readonly lastPosition: number
  readonly createdAt: number
  readonly updatedAt: number
}

/** Which sessions to list, newest update first. */
export interface SessionListOptions {
  /** Only ids starting with this. */
  readonly prefix?: string
  /** Only sessions last updated before this time. */
  readonly updatedBefore?: number
  /** At most this many (default 100). */
  readonly limit?: number
}

/** Who holds a session's lease, until when. */
export interface SessionLease {
  readonly sessionId: string
  readonly holder: string
  readonly expiresAt: number
}

/** The outcome of asking for a lease: held by the asker now, or by someone else until `expiresAt`. */
export type LeaseOutcome = { readonly acquired: true; readonly lease: SessionLease } | { readonly acquired: false; readonly heldBy: SessionLease }

/**
 * A session's durable log. Every method validates its arguments and rejects
 * with an error that names the session and says what was wrong; a database
 * failure rejects with the driver's error as `cause`.
 */
export interface SessionStore {
  /** `memory`, `pglite`, `postgres`… (for messages and devtools). */
  readonly kind: string
  /**
   * Appends `append.records` atomically: all or none.
   * @throws SessionConflictError when the log's length is not `append.expectedSeq` (another writer appended first) or the session does not exist / already exists; SessionLeaseError when `leaseHolder` does not hold the lease.
   */
  append(sessionId: string, append: SessionAppend): Promise<SessionAppended>
  /** The records after position `from` (default 0: all), oldest first, at most `limit`. An unknown session reads as empty. */
  read(sessionId: string, options?: { readonly from?: number; readonly limit?: number }): Promise<readonly SessionRecord[]>
  /**
   * Cold: on subscribe, the records after `from` (default 0), then every record appended later, in position order, without gaps or duplicates (compacted stream records excepted).
   * A tail of a session that does not exist yet (from position 0) waits for its creation.
   * It ends only with the session or the store: the session's deletion ends it with a {@link SessionDeletedError} (see `delete`),
   * and so does a `from` past the session's last position (positions it never had: it was deleted, perhaps created again since);
   * `close()` completes it. Unsubscribing releases what it holds (a listener, a connection).
   */
  events$(sessionId: string, options?: { readonly from?: number }): Observable<SessionRecord>
  /** One session, or `undefined`. */
  info(sessionId: string): Promise<SessionInfo | undefined>
  list(options?: SessionListOptions): Promise<readonly SessionInfo[]>
  /**
   * Deletes a session (its records and lease); `false` when there was none.
   * Its live tails (`events$`) end with a {@link SessionDeletedError} naming
   * it rather than stay open: a session created again under the id starts
   * over at position 1, which they would not see. A tail ends when it next
   * reads: at once in this process, on the store's notification in another
   * (PostgreSQL). A session created again is told from the deleted one by
   * its creation time.
   */
  delete(sessionId: string): Promise<boolean>
  /** Takes the lease for `ttlMs` if it is free, expired, or already `holder`'s (then renewed). */
  acquireLease(sessionId: string, holder: string, ttlMs: number): Promise<LeaseOutcome>
  /** Gives the lease up if `holder` holds it; `false` otherwise. */
  releaseLease(sessionId: string, holder: string): Promise<boolean>
  /** Closes connections and stops live tails (they complete). Idempotent. */
  close(): Promise<void>
}

/** Another writer appended first, or the session is not where the append expected it. */
export class SessionConflictError extends Error {
  override readonly name = 'SessionConflictError'
  constructor(
    readonly sessionId: string,
    readonly expectedSeq: number,
    /** The log's real length (0 when the session does not exist). */
    readonly actualSeq: number,
    message?: string,
  ) {
    super(message ?? `session '${sessionId}': append expected the log at length ${expectedSeq}, but it is at ${actualSeq} (another writer appended first)`)
  }
}

/** The session a live tail (`events$`) followed was deleted: the tail ends (its id may be reused, and positions start over). */
export class SessionDeletedError extends Error {
  override readonly name = 'SessionDeletedError'
  constructor(
    readonly sessionId: string,
    message?: string,
  ) {
    super(message ?? `session '${sessionId}' was deleted: its tail ends (a session created again under the id starts over at position 1)`)
  }
}

/** The session's lease is held by someone else, or (`heldBy` undefined, or expired) by no one. */
export class SessionLeaseError extends Error {
  override readonly name = 'SessionLeaseError'
  constructor(
    readonly sessionId: string,
    /** The lease as it is now: someone else's, an expired one, or `undefined` when there is none. */
    readonly heldBy: SessionLease | undefined,
    message?: string,
  ) {
    super(message ?? SessionLeaseError.describe(sessionId, heldBy))
  }

  private static describe(sessionId: string, heldBy: SessionLease | undefined): string {
    if (heldBy === undefined) return `session '${sessionId}' is not leased by anyone`
    return `session '${sessionId}' is leased by '${heldBy.holder}' until ${new Date(heldBy.expiresAt).toISOString()}`
  }
}
