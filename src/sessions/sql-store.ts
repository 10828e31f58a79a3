/**
 * The session store over SQL: one implementation of the port for PGlite and
 * PostgreSQL, over the small driver interface of `sql/driver.ts`, with the
 * schema of `sql/migrations.ts`.
 *
 * An append is one statement (one round trip), a call of the schema's
 * append function: lock the session's row (`FOR UPDATE`; a new session's
 * row is inserted, and a concurrent creator waits on its key), check the
 * log's length against `expectedSeq` (else `SessionConflictError`), check the
 * lease fence (the lease row read `FOR SHARE`, so a takeover waits for the
 * append in flight), delete the stream records a message end compacts,
 * insert the records (one INSERT over the batch as a JSON array), update the
 * session row, and NOTIFY the store's channel with the session id. The database's clock stamps
 * `createdAt`, `updatedAt` and lease expiry (one clock for every process).
 */
import { Observable } from 'rxjs'
import {
  SessionConflictError,
  type LeaseOutcome,
  type SessionAppend,
  type SessionAppended,
  type SessionInfo,
  type SessionLease,
  type SessionListOptions,
  type SessionRecord,
  type SessionStore,
} from '../agent/session-store.js'
import { SessionStoreClosedError, fenceError } from './errors.js'
import type { SqlDriver, SqlNames, SqlResult } from './sql/driver.js'
import { CLOCK } from './sql/migrations.js'
import { readPage, readTailPage } from './sql/pages.js'
import { SqlTails } from './sql/tails.js'
import { checkId, checkListOptions, checkReadOptions, checkTtl, planAppend } from './validate.js'

/** A SQL session store, with what its tails hold. */
export interface SqlSessionStore extends SessionStore {
  /** How many live tails are open now. */
  readonly tails: number
  /** Whether the store holds a listening connection now (while at least one tail is open). */
  readonly listening: boolean
}

/** What the append function returns (see `sql/migrations.ts`). */
interface AppendRow {
  readonly outcome: 'ok' | 'conflict' | 'lease'
  readonly length: number
  readonly last_position: number
  readonly holder: string | null
  readonly expires_at: number | null
  readonly now: number
}

interface SessionRow {
  readonly session_id: string
  readonly agent_id: string
  readonly length: number
  readonly last_position: number
  readonly created_at: number
  readonly updated_at: number
}

const SESSION_COLUMNS = `session_id, agent_id, length::float8 AS length, last_position::float8 AS last_position, created_at, updated_at`

/**
 * The store over `driver`, its tables named by `names` (migrated already).
 * `onClose` runs once at `close()`, after the tails are completed (it closes what the caller owns).
 */
export function sqlSessionStore(driver: SqlDriver, names: SqlNames, onClose: () => Promise<void>): SqlSessionStore {
  return new SqlStore(driver, names, onClose)
}

class SqlStore implements SqlSessionStore {
  readonly kind: string
  private readonly name: string
  private readonly live: SqlTails
  private closed = false
  private closing: Promise<void> | undefined
  /** Calls under way: `close()` lets them settle before it closes the database. */
  private readonly inflight = new Set<Promise<unknown>>()

  constructor(
    private readonly driver: SqlDriver,
    private readonly n: SqlNames,
    private readonly onClose: () => Promise<void>,
  ) {
    this.kind = driver.kind
    this.name = `${driver.kind}SessionStore`
    this.live = new SqlTails(driver, n.channel, (sessionId, from, limit) => {
      const entry = `${this.name}.events$`
      if (this.closed) throw new SessionStoreClosedError(entry)
      return readTailPage(this.tracked, n, entry, sessionId, from, limit)
    })
  }

  get tails(): number {
    return this.live.size
  }

  get listening(): boolean {
    return this.live.listening
  }

  private check(method: string): string {
    const entry = `${this.name}.${method}`
    if (this.closed) throw new SessionStoreClosedError(entry)
    return entry
  }

  /** A query, tracked (see `inflight`). */
  private query<R>(text: string, params: readonly unknown[]): Promise<SqlResult<R>> {
    return this.track(this.driver.query<R>(text, params))
  }

  private readonly tracked = <R>(text: string, params: readonly unknown[]): Promise<SqlResult<R>> => this.query<R>(text, params)

  /** `work`, tracked until it settles (see `inflight`). */
  private track<T>(work: Promise<T>): Promise<T> {
    this.inflight.add(work)
    const done = () => this.inflight.delete(work)
    work.then(done, done)
    return work
  }

  async append(sessionId: string, append: SessionAppend): Promise<SessionAppended> {
    const entry = this.check('append')
    checkId(entry, 'sessionId', sessionId)
    const plan = planAppend(entry, append)
    // Array literals of numbers only (no quoting to get wrong): every driver passes them as text.
    const seqs = `{${plan.records.map((r) => (r.body.type === 'stream' ? 'NULL' : r.body.seq)).join(',')}}`
    const ats = `{${plan.records.map((r) => r.at).join(',')}}`
    const bodies = JSON.stringify(plan.records.map((r) => r.body))
    const { rows } = await this.track(
      this.driver.query<AppendRow>(`SELECT * FROM ${this.n.appendFunction}($1, $2, $3, $4, $5, $6, $7::bigint[], $8::float8[], $9::json, $10)`, [
        sessionId,
        plan.expectedSeq,
        plan.agentId ?? null,
        plan.leaseHolder ?? null,
        plan.compact,
        plan.length,
        seqs,
        ats,
        bodies,
        this.n.channel,
      ]),
    )
    const row = rows[0]
    if (row === undefined) throw new Error(`${entry}: the append function returned no row`)
    if (row.outcome === 'conflict') throw new SessionConflictError(sessionId, plan.expectedSeq, row.length)
    if (row.outcome === 'lease') {
      const lease = row.holder === null || row.expires_at === null ? undefined : { sessionId, holder: row.holder, expiresAt: row.expires_at }
      throw fenceError(sessionId, plan.leaseHolder!, lease, row.now) ?? new Error(`${entry}: the lease fence refused the append`)
    }
    if (plan.records.length > 0) this.live.wake(sessionId)
    return { lastPosition: row.last_position, length: row.length }
  }

  async read(sessionId: string, options?: { readonly from?: number; readonly limit?: number }): Promise<readonly SessionRecord[]> {
    const entry = this.check('read')
    checkId(entry, 'sessionId', sessionId)
    const { from, limit } = checkReadOptions(entry, options)
    return readPage(this.tracked, this.n, entry, sessionId, from, limit)
  }

  events$(sessionId: string, options?: { readonly from?: number }): Observable<SessionRecord> {
    return new Observable<SessionRecord>((subscriber) => {
      const entry = `${this.name}.events$`
      let from: number
      try {
        this.check('events$')
        checkId(entry, 'sessionId', sessionId)
        from = checkReadOptions(entry, options).from
      } catch (error) {
        subscriber.error(error)
        return
      }
      return this.live.open(sessionId, from).subscribe(subscriber)
    })
  }

  async info(sessionId: string): Promise<SessionInfo | undefined> {
    checkId(this.check('info'), 'sessionId', sessionId)
    const { rows } = await this.query<SessionRow>(`SELECT ${SESSION_COLUMNS} FROM ${this.n.sessions} WHERE session_id = $1`, [sessionId])
    return rows[0] === undefined ? undefined : infoOf(rows[0])
  }

  async list(options?: SessionListOptions): Promise<readonly SessionInfo[]> {
    const { prefix, updatedBefore, limit } = checkListOptions(this.check('list'), options)
    const { rows } = await this.query<SessionRow>(
      `SELECT ${SESSION_COLUMNS} FROM ${this.n.sessions}
       WHERE ($1::text IS NULL OR starts_with(session_id, $1::text)) AND ($2::float8 IS NULL OR updated_at < $2::float8)
       ORDER BY updated_at DESC, session_id LIMIT $3`,
      [prefix ?? null, updatedBefore ?? null, limit],
    )
    return rows.map(infoOf)
  }

  async delete(sessionId: string): Promise<boolean> {
    checkId(this.check('delete'), 'sessionId', sessionId)
    const n = this.n
    const deleted = await this.track(this.driver.transaction(async (tx) => {
      const { rows } = await tx.query(`DELETE FROM ${n.sessions} WHERE session_id = $1 RETURNING 1 AS deleted`, [sessionId])
      await tx.query(`DELETE FROM ${n.records} WHERE session_id = $1`, [sessionId])
      await tx.query(`DELETE FROM ${n.leases} WHERE session_id = $1`, [sessionId])
      // Its tails read, find it gone and end (sql/tails.ts), in every process.
      if (rows.length > 0) await tx.query(`SELECT pg_notify($1, $2)`, [n.channel, sessionId])
      return rows.length > 0
    }))
    if (deleted) this.live.wake(sessionId)
    return deleted
  }

  async acquireLease(sessionId: string, holder: string, ttlMs: number): Promise<LeaseOutcome> {
    const entry = this.check('acquireLease')
    checkId(entry, 'sessionId', sessionId)
    checkId(entry, 'holder', holder)
    checkTtl(entry, ttlMs)
    const n = this.n
    for (;;) {
      const taken = await this.query<{ holder: string; expires_at: number }>(
        `INSERT INTO ${n.leases} AS l (session_id, holder, expires_at) VALUES ($1, $2, ${CLOCK} + $3::float8)
         ON CONFLICT (session_id) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
         WHERE l.holder = EXCLUDED.holder OR l.expires_at <= ${CLOCK}
         RETURNING holder, expires_at`,
        [sessionId, holder, ttlMs],
      )
      const mine = taken.rows[0]
      if (mine !== undefined) return { acquired: true, lease: leaseOf(sessionId, mine) }
      const { rows } = await this.query<{ holder: string; expires_at: number }>(`SELECT holder, expires_at FROM ${n.leases} WHERE session_id = $1`, [sessionId])
      // Released between the two statements: ask again.
      if (rows[0] !== undefined) return { acquired: false, heldBy: leaseOf(sessionId, rows[0]) }
    }
  }

  async releaseLease(sessionId: string, holder: string): Promise<boolean> {
    const entry = this.check('releaseLease')
    checkId(entry, 'sessionId', sessionId)
    checkId(entry, 'holder', holder)
    const { rows } = await this.query(`DELETE FROM ${this.n.leases} WHERE session_id = $1 AND holder = $2 RETURNING 1 AS released`, [sessionId, holder])
    return rows.length > 0
  }

  close(): Promise<void> {
    if (this.closing === undefined) {
      this.closed = true
      this.closing = (async () => {
        await this.live.close()
        await Promise.allSettled([...this.inflight])
        await this.onClose()
      })()
    }
    return this.closing
  }
}

const infoOf = (row: SessionRow): SessionInfo =>
  Object.freeze({
    sessionId: row.session_id,
    agentId: row.agent_id,
    length: row.length,
    lastPosition: row.last_position,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  })

const leaseOf = (sessionId: string, row: { holder: string; expires_at: number }): SessionLease => Object.freeze({ sessionId, holder: row.holder, expiresAt: row.expires_at })
