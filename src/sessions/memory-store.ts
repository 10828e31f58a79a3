/**
 * The session store in memory: for tests and scripts. Records are kept as
 * decoded, frozen values, each a JSON round trip of what was appended (what
 * comes back is what a database would return, and the caller's objects stay
 * theirs). A live tail is one subscription to the session's Subject, which
 * exists only while someone tails the session; `close()` completes them,
 * deleting the session errors them (`SessionDeletedError`).
 *
 * Appends are checked and applied synchronously when called, so two appends
 * at one position settle in call order: the first wins, the second is a
 * `SessionConflictError`.
 */
import { Observable, Subject, asyncScheduler, type SchedulerLike } from 'rxjs'
import {
  SessionConflictError,
  SessionDeletedError,
  type LeaseOutcome,
  type SessionAppend,
  type SessionAppended,
  type SessionInfo,
  type SessionLease,
  type SessionListOptions,
  type SessionRecord,
  type SessionStore,
} from '../agent/session-store.js'
import { SessionStoreClosedError, deletedBefore, fenceError } from './errors.js'
import { checkId, checkListOptions, checkReadOptions, checkTtl, decodeStored, planAppend } from './validate.js'

/** Options of {@link memorySessionStore}. */
export interface MemorySessionStoreOptions {
  /** The clock of lease expiry and of `createdAt` / `updatedAt` (default: `asyncScheduler`, the system clock). */
  readonly scheduler?: SchedulerLike
}

/** A {@link SessionStore} in memory. */
export interface MemorySessionStore extends SessionStore {
  readonly kind: 'memory'
  /** How many live tails (`events$` subscriptions) are open now. */
  readonly tails: number
}

interface Session {
  readonly agentId: string
  readonly createdAt: number
  updatedAt: number
  length: number
  lastPosition: number
  /** Oldest first; replaced (not mutated) by a compaction, so a replay in progress keeps its array. */
  records: SessionRecord[]
  /** How many of `records` are stream records (a compaction without any copies nothing). */
  streams: number
}

/** A new, empty store in memory (see the module comment). */
export function memorySessionStore(options: MemorySessionStoreOptions = {}): MemorySessionStore {
  return new MemoryStore(options.scheduler ?? asyncScheduler)
}

const NAME = 'memorySessionStore'

/** The index of the first record after `from` (records are in position order). */
function firstAfter(records: readonly SessionRecord[], from: number): number {
  let lo = 0
  let hi = records.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (records[mid]!.position <= from) lo = mid + 1
    else hi = mid
  }
  return lo
}

class MemoryStore implements MemorySessionStore {
  readonly kind = 'memory'
  private readonly sessions = new Map<string, Session>()
  private readonly leases = new Map<string, SessionLease>()
  /** One Subject per tailed session, while it is tailed. */
  private readonly live = new Map<string, Subject<SessionRecord>>()
  private open = 0
  private closed = false

  constructor(private readonly scheduler: SchedulerLike) {}

  get tails(): number {
    return this.open
  }

  private check(method: string): string {
    const entry = `${NAME}.${method}`
    if (this.closed) throw new SessionStoreClosedError(entry)
    return entry
  }

  async append(sessionId: string, append: SessionAppend): Promise<SessionAppended> {
    const entry = this.check('append')
    checkId(entry, 'sessionId', sessionId)
    const plan = planAppend(entry, append)
    const session = this.sessions.get(sessionId)
    const actual = session?.length ?? 0
    if (actual !== plan.expectedSeq) throw new SessionConflictError(sessionId, plan.expectedSeq, actual)
    const now = this.scheduler.now()
    if (plan.leaseHolder !== undefined) {
      const refused = fenceError(sessionId, plan.leaseHolder, this.leases.get(sessionId), now)
      if (refused !== undefined) throw refused
    }
    if (plan.records.length === 0) return { lastPosition: session?.lastPosition ?? 0, length: actual }
    const target: Session = session ?? { agentId: plan.agentId!, createdAt: now, updatedAt: now, length: 0, lastPosition: 0, records: [], streams: 0 }
    // Decoded above; stored as a database would return it.
    const added = plan.records.map((record) => {
      const { at, body } = JSON.parse(JSON.stringify(record)) as { at: unknown; body: unknown }
      return decodeStored(entry, sessionId, ++target.lastPosition, at, body)
    })
    if (plan.compact && target.streams > 0) {
      target.records = target.records.filter((r) => r.body.type !== 'stream')
      target.streams = 0
    }
    for (const record of added) {
      target.records.push(record)
      if (record.body.type === 'stream') target.streams++
    }
    target.length = plan.length
    target.updatedAt = now
    if (session === undefined) this.sessions.set(sessionId, target)
    const subject = this.live.get(sessionId)
    if (subject !== undefined) for (const record of added) subject.next(record)
    return { lastPosition: target.lastPosition, length: target.length }
  }

  async read(sessionId: string, options?: { readonly from?: number; readonly limit?: number }): Promise<readonly SessionRecord[]> {
    const entry = this.check('read')
    checkId(entry, 'sessionId', sessionId)
    const { from, limit } = checkReadOptions(entry, options)
    const records = this.sessions.get(sessionId)?.records ?? []
    const start = firstAfter(records, from)
    return records.slice(start, limit === undefined ? undefined : start + limit)
  }

  events$(sessionId: string, options?: { readonly from?: number }): Observable<SessionRecord> {
    return new Observable<SessionRecord>((subscriber) => {
      const entry = `${NAME}.events$`
      let from: number
      try {
        this.check('events$')
        checkId(entry, 'sessionId', sessionId)
        from = checkReadOptions(entry, options).from
      } catch (error) {
        subscriber.error(error)
        return
      }
      const lastPosition = this.sessions.get(sessionId)?.lastPosition ?? 0
      if (from > lastPosition) {
        subscriber.error(deletedBefore(sessionId, from, lastPosition))
        return
      }
      let last = from
      let replaying = true
      const early: SessionRecord[] = []
      const emit = (record: SessionRecord) => {
        if (record.position <= last) return
        last = record.position
        subscriber.next(record)
      }
      let subject = this.live.get(sessionId)
      if (subject === undefined) this.live.set(sessionId, (subject = new Subject()))
      const tail = subject.subscribe({
        next: (record) => (replaying ? early.push(record) : emit(record)),
        error: (error: unknown) => subscriber.error(error),
        complete: () => subscriber.complete(),
      })
      this.open++
      // The records there now, then what was appended while they were emitted (a subscriber may append), then live.
      const records = this.sessions.get(sessionId)?.records ?? []
      for (let i = firstAfter(records, from); i < records.length && !subscriber.closed; i++) emit(records[i]!)
      replaying = false
      for (const record of early) if (!subscriber.closed) emit(record)
      early.length = 0
      return () => {
        this.open--
        tail.unsubscribe()
        if (subject.observed === false && this.live.get(sessionId) === subject) this.live.delete(sessionId)
      }
    })
  }

  async info(sessionId: string): Promise<SessionInfo | undefined> {
    checkId(this.check('info'), 'sessionId', sessionId)
    const session = this.sessions.get(sessionId)
    return session === undefined ? undefined : infoOf(sessionId, session)
  }

  async list(options?: SessionListOptions): Promise<readonly SessionInfo[]> {
    const { prefix, updatedBefore, limit } = checkListOptions(this.check('list'), options)
    const out: SessionInfo[] = []
    for (const [id, session] of this.sessions) {
      if (prefix !== undefined && !id.startsWith(prefix)) continue
      if (updatedBefore !== undefined && !(session.updatedAt < updatedBefore)) continue
      out.push(infoOf(id, session))
    }
    out.sort((a, b) => b.updatedAt - a.updatedAt || (a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0))
    return out.slice(0, limit)
  }

  async delete(sessionId: string): Promise<boolean> {
    checkId(this.check('delete'), 'sessionId', sessionId)
    this.leases.delete(sessionId)
    if (!this.sessions.delete(sessionId)) return false
    // Its tails end: a session created again under the id starts over at position 1.
    const subject = this.live.get(sessionId)
    this.live.delete(sessionId)
    subject?.error(new SessionDeletedError(sessionId))
    return true
  }

  async acquireLease(sessionId: string, holder: string, ttlMs: number): Promise<LeaseOutcome> {
    const entry = this.check('acquireLease')
    checkId(entry, 'sessionId', sessionId)
    checkId(entry, 'holder', holder)
    checkTtl(entry, ttlMs)
    const now = this.scheduler.now()
    const lease = this.leases.get(sessionId)
    if (lease !== undefined && lease.holder !== holder && lease.expiresAt > now) return { acquired: false, heldBy: lease }
    const taken: SessionLease = Object.freeze({ sessionId, holder, expiresAt: now + ttlMs })
    this.leases.set(sessionId, taken)
    return { acquired: true, lease: taken }
  }

  async releaseLease(sessionId: string, holder: string): Promise<boolean> {
    const entry = this.check('releaseLease')
    checkId(entry, 'sessionId', sessionId)
    checkId(entry, 'holder', holder)
    if (this.leases.get(sessionId)?.holder !== holder) return false
    return this.leases.delete(sessionId)
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    const subjects = [...this.live.values()]
    this.live.clear()
    for (const subject of subjects) subject.complete()
  }
}

const infoOf = (sessionId: string, s: Session): SessionInfo =>
  Object.freeze({ sessionId, agentId: s.agentId, length: s.length, lastPosition: s.lastPosition, createdAt: s.createdAt, updatedAt: s.updatedAt })
