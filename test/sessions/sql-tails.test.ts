/**
 * The tails hub of the SQL stores (src/sessions/sql/tails.ts) on a driver
 * written here, for what a real server makes hard to arrange: the listening
 * connection lost and not coming back, notifications that arrive duplicated,
 * late or for other sessions, a session deleted and created again between
 * two reads of a tail.
 */
import { describe, expect, it } from 'vitest'
import { deepFreeze } from '../../src/types/deep-freeze.js'
import { SessionDeletedError, type SessionRecord } from '../../src/agent/session-store.js'
import type { SqlDriver } from '../../src/sessions/sql/driver.js'
import { SqlTails } from '../../src/sessions/sql/tails.js'
import { note, until } from './fixtures.js'

/** A session's records in memory (created at `createdAt` once it has records), and a driver whose listening can be lost and refused. */
function harness() {
  let records: SessionRecord[] = []
  let createdAt = 1
  const listeners: Array<{ onNotify: (p: string) => void; onError: (e: unknown) => void; stopped: boolean }> = []
  let refuse: Error | undefined
  const driver: SqlDriver = {
    kind: 'fake',
    query: async () => ({ rows: [] }),
    transaction: async (fn) => fn(driver),
    listen: async (_channel, onNotify, onError) => {
      if (refuse !== undefined) throw refuse
      const listener = { onNotify, onError, stopped: false }
      listeners.push(listener)
      return async () => {
        listener.stopped = true
      }
    },
    close: async () => {},
  }
  const tails = new SqlTails(driver, 'channel', async (_id, from, limit) => ({
    records: records.filter((r) => r.position > from).slice(0, limit),
    session: records.length === 0 ? undefined : { createdAt, lastPosition: records.length },
  }))
  const add = (n: number) => {
    for (let i = 0; i < n; i++) {
      const position = records.length + 1
      const record: SessionRecord = { position, at: 0, body: note(position).body }
      deepFreeze(record)
      records.push(record)
    }
  }
  /** Deletes the session and creates it again (later), with `n` records. */
  const recreate = (n: number) => {
    records = []
    createdAt++
    add(n)
  }
  return { tails, listeners, add, recreate, refuse: (error: Error) => (refuse = error) }
}

describe('SqlTails', () => {
  it('a wake-up only makes a tail read: duplicated, late or foreign notifications never duplicate nor skip a record', async () => {
    const h = harness()
    h.add(2)
    const seen: number[] = []
    const sub = h.tails.open('s1', 0).subscribe((r) => seen.push(r.position))
    await until(() => seen.length === 2, 'the replay')
    h.add(3)
    const [listener] = h.listeners
    for (const payload of ['s1', 's1', 'other', 's1']) listener!.onNotify(payload)
    await until(() => seen.length === 5, 'the new records')
    listener!.onNotify('s1')
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(seen).toEqual([1, 2, 3, 4, 5])
    sub.unsubscribe()
    await until(() => listener!.stopped, 'the listening to stop')
    expect(h.tails.listening).toBe(false)
  })

  it('reads past a page of 500 in order', async () => {
    const h = harness()
    h.add(1_234)
    const seen: number[] = []
    const sub = h.tails.open('s1', 10).subscribe((r) => seen.push(r.position))
    await until(() => seen.length === 1_224, 'every record')
    expect(seen).toEqual(Array.from({ length: 1_224 }, (_, i) => i + 11))
    sub.unsubscribe()
  })

  it('a lost listening connection is replaced, and what was appended meanwhile is read', async () => {
    const h = harness()
    const seen: number[] = []
    const sub = h.tails.open('s1', 0).subscribe((r) => seen.push(r.position))
    await until(() => h.listeners.length === 1, 'listening')
    h.add(2) // Appended while the connection dies: its notification is lost.
    h.listeners[0]!.onError(new Error('connection reset'))
    await until(() => seen.length === 2, 'the records missed')
    expect(h.listeners).toHaveLength(2)
    expect(h.tails.listening).toBe(true)
    sub.unsubscribe()
  })

  it('when it cannot listen again, every tail errors, naming the store and the cause', async () => {
    const h = harness()
    const errors: unknown[] = []
    for (const id of ['s1', 's2']) h.tails.open(id, 0).subscribe({ error: (e: unknown) => errors.push(e) })
    await until(() => h.listeners.length === 1, 'listening')
    h.refuse(new Error('server gone'))
    h.listeners[0]!.onError(new Error('connection reset'))
    await until(() => errors.length === 2, 'the tails to error')
    expect((errors[0] as Error).message).toBe('fake session store: the connection listening for new records was lost and could not be opened again')
    expect(((errors[0] as Error).cause as Error).message).toBe('server gone')
    expect(h.tails.size).toBe(0)
    expect(h.tails.listening).toBe(false)
  })

  it('a session deleted and created again before the tail reads: the tail ends with SessionDeletedError, without a record of the new one', async () => {
    const h = harness()
    h.add(3)
    const seen: number[] = []
    let error: unknown
    h.tails.open('s1', 0).subscribe({ next: (r) => seen.push(r.position), error: (e: unknown) => (error = e) })
    await until(() => seen.length === 3, 'the replay')
    // Past the tail's position already: by positions alone it would follow the new session from position 4.
    h.recreate(6)
    h.listeners[0]!.onNotify('s1')
    await until(() => error !== undefined, 'the tail to end')
    expect(error).toBeInstanceOf(SessionDeletedError)
    expect(error).toMatchObject({ sessionId: 's1', message: expect.stringMatching(/session 's1' was deleted/) })
    expect(seen).toEqual([1, 2, 3])
    expect(h.tails.size).toBe(0)
  })

  it('a tail from a position the session does not have ends at once; from 0 it waits for the session', async () => {
    const h = harness()
    const errors: unknown[] = []
    h.tails.open('s1', 2).subscribe({ error: (e: unknown) => errors.push(e) })
    await until(() => errors.length === 1, 'the tail past nothing to end')
    expect((errors[0] as Error).message).toMatch(/session 's1' has no position after 2 \(it does not exist\)/)
    const seen: number[] = []
    h.tails.open('s1', 0).subscribe({ next: (r) => seen.push(r.position), error: (e: unknown) => errors.push(e) })
    await until(() => h.tails.size === 1, 'the tail to open')
    h.add(2)
    h.listeners.at(-1)!.onNotify('s1')
    await until(() => seen.length === 2, 'the session, once created')
    h.tails.open('s1', 5).subscribe({ error: (e: unknown) => errors.push(e) })
    await until(() => errors.length === 2, 'the tail past the last position to end')
    expect((errors[1] as Error).message).toMatch(/has no position after 5 \(its last position is 2\)/)
    expect(errors[1]).toBeInstanceOf(SessionDeletedError)
  })
})
