/**
 * A small in-memory SessionStore for the devtools tests (until the stores of
 * src/sessions/ are merged): appends with the seq check, compaction of stream
 * records, a live tail. Leases are not needed by the devtools and refuse.
 */
import { Observable, Subject } from 'rxjs'
import type { SessionAppend, SessionAppended, SessionInfo, SessionRecord, SessionStore } from '../../src/agent/session-store.js'
import { SessionConflictError } from '../../src/agent/session-store.js'

const COMPACTING = new Set(['messageEnd', 'agentEnd', 'runFailed', 'reset'])

export function listStore(): SessionStore {
  const sessions = new Map<string, { records: SessionRecord[]; length: number; agentId: string; createdAt: number; updatedAt: number; last: number }>()
  const appended = new Subject<{ sessionId: string; record: SessionRecord }>()
  const read = (sessionId: string, fromPos = 0, limit = Infinity) => (sessions.get(sessionId)?.records ?? []).filter((r) => r.position > fromPos).slice(0, limit)
  return {
    kind: 'memory',
    async append(sessionId: string, append: SessionAppend): Promise<SessionAppended> {
      let s = sessions.get(sessionId)
      const actual = s?.length ?? 0
      if (actual !== append.expectedSeq) throw new SessionConflictError(sessionId, append.expectedSeq, actual)
      if (s === undefined) {
        const first = append.records[0]?.body
        if (first?.type !== 'init') throw new SessionConflictError(sessionId, append.expectedSeq, 0, `session '${sessionId}' does not exist`)
        s = { records: [], length: 0, agentId: first.agentId, createdAt: append.records[0]!.at, updatedAt: 0, last: 0 }
        sessions.set(sessionId, s)
      }
      const added: SessionRecord[] = []
      for (const { at, body } of append.records) {
        if (body.type !== 'stream') {
          if (body.seq !== s.length) throw new SessionConflictError(sessionId, s.length, s.length)
          s.length++
          if (COMPACTING.has(body.type)) s.records = s.records.filter((r) => r.body.type !== 'stream')
        }
        const record = { position: ++s.last, at, body }
        s.records.push(record)
        added.push(record)
        s.updatedAt = at
      }
      for (const record of added) appended.next({ sessionId, record })
      return { lastPosition: s.last, length: s.length }
    },
    read: async (sessionId, options) => read(sessionId, options?.from, options?.limit),
    events$: (sessionId, options) =>
      new Observable<SessionRecord>((subscriber) => {
        let last = options?.from ?? 0
        const emit = (r: SessionRecord) => {
          if (r.position > last) {
            last = r.position
            subscriber.next(r)
          }
        }
        for (const r of read(sessionId, last)) emit(r)
        return appended.subscribe({ next: (a) => a.sessionId === sessionId && emit(a.record), complete: () => subscriber.complete() })
      }),
    info: async (sessionId): Promise<SessionInfo | undefined> => {
      const s = sessions.get(sessionId)
      return s && { sessionId, agentId: s.agentId, length: s.length, lastPosition: s.last, createdAt: s.createdAt, updatedAt: s.updatedAt }
    },
    list: async (options) =>
      [...sessions.keys()]
        .filter((id) => id.startsWith(options?.prefix ?? ''))
        .map((id) => { const s = sessions.get(id)!; return { sessionId: id, agentId: s.agentId, length: s.length, lastPosition: s.last, createdAt: s.createdAt, updatedAt: s.updatedAt } })
        .sort((a, b) => b.updatedAt - a.updatedAt)
        .slice(0, options?.limit ?? 100),
    delete: async (sessionId) => sessions.delete(sessionId),
    acquireLease: async () => { throw new Error('listStore: no leases') },
    releaseLease: async () => false,
    close: async () => appended.complete(),
  }
}
