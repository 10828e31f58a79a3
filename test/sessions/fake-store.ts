/**
 * A small in-memory SessionStore for the durable-Agent tests until the real
 * memory store (src/sessions) is merged; delete it then.
 */
import { NEVER, type Observable } from 'rxjs'
import { SessionConflictError, SessionLeaseError, type LeaseOutcome, type SessionAppend, type SessionAppended, type SessionInfo, type SessionLease, type SessionRecord, type SessionStore } from '../../src/agent/session-store.js'

const compacting = new Set(['messageEnd', 'agentEnd', 'runFailed', 'reset'])

export class FakeSessionStore implements SessionStore {
  readonly kind = 'fake'
  readonly sessions = new Map<string, { records: SessionRecord[]; length: number; position: number }>()
  readonly leases = new Map<string, SessionLease>()
  appends = 0

  constructor(readonly now: () => number = () => Date.now()) {}

  append(sessionId: string, append: SessionAppend): Promise<SessionAppended> {
    this.appends++
    const session = this.sessions.get(sessionId) ?? { records: [], length: 0, position: 0 }
    if (session.length !== append.expectedSeq) return Promise.reject(new SessionConflictError(sessionId, append.expectedSeq, session.length))
    if (append.leaseHolder !== undefined) {
      const lease = this.leases.get(sessionId)
      if (lease === undefined || lease.holder !== append.leaseHolder || lease.expiresAt <= this.now()) {
        return Promise.reject(new SessionLeaseError(sessionId, lease ?? { sessionId, holder: '(nobody)', expiresAt: 0 }))
      }
    }
    const records = JSON.parse(JSON.stringify(append.records)) as SessionAppend['records']
    for (const r of records) {
      if (r.body.type !== 'stream') session.length++
      if (compacting.has(r.body.type)) session.records = session.records.filter((x) => x.body.type !== 'stream')
      session.records.push({ position: ++session.position, at: r.at, body: r.body })
    }
    this.sessions.set(sessionId, session)
    return Promise.resolve({ lastPosition: session.position, length: session.length })
  }

  read(sessionId: string, options: { readonly from?: number; readonly limit?: number } = {}): Promise<readonly SessionRecord[]> {
    const records = (this.sessions.get(sessionId)?.records ?? []).filter((r) => r.position > (options.from ?? 0))
    return Promise.resolve(JSON.parse(JSON.stringify(records.slice(0, options.limit ?? records.length))) as SessionRecord[])
  }

  events$(): Observable<SessionRecord> {
    return NEVER
  }

  info(): Promise<SessionInfo | undefined> {
    return Promise.resolve(undefined)
  }

  list(): Promise<readonly SessionInfo[]> {
    return Promise.resolve([])
  }

  delete(sessionId: string): Promise<boolean> {
    return Promise.resolve(this.sessions.delete(sessionId))
  }

  acquireLease(sessionId: string, holder: string, ttlMs: number): Promise<LeaseOutcome> {
    const lease = this.leases.get(sessionId)
    if (lease !== undefined && lease.holder !== holder && lease.expiresAt > this.now()) return Promise.resolve({ acquired: false, heldBy: lease })
    const taken = { sessionId, holder, expiresAt: this.now() + ttlMs }
    this.leases.set(sessionId, taken)
    return Promise.resolve({ acquired: true, lease: taken })
  }

  releaseLease(sessionId: string, holder: string): Promise<boolean> {
    if (this.leases.get(sessionId)?.holder !== holder) return Promise.resolve(false)
    this.leases.delete(sessionId)
    return Promise.resolve(true)
  }

  close(): Promise<void> {
    return Promise.resolve()
  }
}
