/**
 * The one contract every `SessionStore` passes (memory, PGlite, PostgreSQL):
 * `storeContract(name, make)` defines its tests; each store's test file calls
 * it with a harness that makes a fresh, empty store per test. The live-tail,
 * lease and close parts are in store-contract-live.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { firstValueFrom, take, toArray } from 'rxjs'
import { InvalidInputError, extractText } from '../../src/index.js'
import { SessionConflictError, type SessionStore } from '../../src/agent/session-store.js'
import { deleteSessions } from '../../src/sessions/index.js'
import { batch, createSession, init, messageEnd, note, notes, seqs, stream, until } from './fixtures.js'
import { liveContract } from './store-contract-live.js'

/** What a store's test file gives the contract: a fresh, empty store and ways to look inside it. */
export interface StoreHarness {
  readonly store: SessionStore
  /** How many live tails the store holds open now (listeners, LISTEN connections…). */
  tails(): number | Promise<number>
  /** Overwrites a stored record's body with `body` behind the store's back; absent where a stored record cannot go bad. */
  corrupt?(sessionId: string, position: number, body: unknown): Promise<void>
  /** Releases what the harness made besides the store (the store itself is closed by the contract). */
  dispose?(): Promise<void>
}

/** Defines the contract's tests for the store `make` makes. */
export function storeContract(name: string, make: () => Promise<StoreHarness>): void {
  describe(`${name}: the SessionStore contract`, () => {
    let h: StoreHarness
    let store: SessionStore
    beforeEach(async () => {
      h = await make()
      store = h.store
    }, 60_000)
    afterEach(async () => {
      await store.close()
      await h.dispose?.()
    }, 60_000)

    it('creates a session with its init entry and reads it back', async () => {
      expect(await store.info('s1')).toBeUndefined()
      expect(await store.read('s1')).toEqual([])
      await expect(store.append('s1', batch(0, [init('a1', 5)]))).resolves.toEqual({ lastPosition: 1, length: 1 })
      const info = await store.info('s1')
      expect(info).toMatchObject({ sessionId: 's1', agentId: 'a1', length: 1, lastPosition: 1 })
      expect(info!.updatedAt).toBeGreaterThanOrEqual(info!.createdAt)
      const records = await store.read('s1')
      expect(records).toEqual([{ position: 1, at: 5, body: init('a1', 5).body }])
      expect(Object.isFrozen(records[0])).toBe(true)
    })

    it('appends at the expected length and refuses any other with a conflict naming both lengths', async () => {
      await createSession(store, 's1')
      await expect(store.append('s1', batch(1, [note(1), stream(2, 3), note(2)]))).resolves.toEqual({ lastPosition: 4, length: 3 })
      await expect(store.append('s1', batch(2, [note(2)]))).rejects.toMatchObject({ name: 'SessionConflictError', sessionId: 's1', expectedSeq: 2, actualSeq: 3 })
      await expect(store.append('s1', batch(0, [init()]))).rejects.toBeInstanceOf(SessionConflictError)
      await expect(store.append('nope', batch(3, [note(3)]))).rejects.toMatchObject({ name: 'SessionConflictError', actualSeq: 0 })
      await expect(store.append('s1', batch(3, []))).resolves.toEqual({ lastPosition: 4, length: 3 })
      expect(seqs(await store.read('s1'))).toEqual([0, 1, 2])
      expect(await store.info('nope')).toBeUndefined()
    })

    it('two appends at one position: exactly one wins, whatever the store', async () => {
      await createSession(store, 's1')
      for (let round = 1; round <= 5; round++) {
        const outcomes = await Promise.allSettled([store.append('s1', batch(round, [note(round, 'A')])), store.append('s1', batch(round, [note(round, 'B')]))])
        expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1)
        const lost = outcomes.find((o) => o.status === 'rejected')
        expect(lost?.status === 'rejected' && lost.reason).toBeInstanceOf(SessionConflictError)
      }
      expect(seqs(await store.read('s1'))).toEqual([0, 1, 2, 3, 4, 5])
    })

    it('writers racing with batches never interleave the log', async () => {
      await createSession(store, 's1')
      const writer = async (tag: string) => {
        let won = 0
        while (won < 4) {
          const length = (await store.info('s1'))!.length
          try {
            await store.append('s1', batch(length, notes(length, 3, `${tag}:`)))
            won++
          } catch (error) {
            if (!(error instanceof SessionConflictError)) throw error
          }
        }
      }
      await Promise.all(['w1', 'w2', 'w3'].map(writer))
      const records = await store.read('s1')
      expect(seqs(records)).toEqual(Array.from({ length: 37 }, (_, i) => i))
      // Batches of three, each from one writer.
      const tags = records.slice(1).map((r) => (r.body.type === 'enqueue' ? (r.body.message.role === 'user' ? extractText(r.body.message.content) : '?').split(':')[0] : '?'))
      for (let i = 0; i < tags.length; i += 3) expect(new Set(tags.slice(i, i + 3)).size).toBe(1)
      expect(records.map((r) => r.position)).toEqual(Array.from({ length: 37 }, (_, i) => i + 1))
    })

    it('an append is atomic: a batch with one bad record appends nothing', async () => {
      await createSession(store, 's1', 2)
      const bad = { at: 1, body: { seq: 4, type: 'enqueue', queue: 'nowhere', message: {} } }
      await expect(store.append('s1', { expectedSeq: 3, records: [note(3), bad] } as never)).rejects.toThrow(/append\.records\[1\]\.body\.queue/)
      await expect(store.append('s1', batch(3, [note(3), note(5)]))).rejects.toThrow(/append\.records\[1\]\.body\.seq: expected 4/)
      await expect(store.append('s1', batch(3, [note(3), stream(3)]))).rejects.toThrow(/records\[1\]\.body\.afterSeq: expected 4/)
      expect(seqs(await store.read('s1'))).toEqual([0, 1, 2])
      expect((await store.info('s1'))!.lastPosition).toBe(3)
    })

    it('stores any text a model wrote, \\u0000 and astral characters included', async () => {
      await createSession(store, 's1')
      const odd = 'nul \u0000, emoji \u{1F600}, lone quote ", backslash \\, newline \n'
      await store.append('s1', batch(1, [stream(1, 1, odd), note(1, odd)]))
      const [, streamed, noted] = await store.read('s1')
      expect(streamed!.body).toEqual(stream(1, 1, odd).body)
      expect(noted!.body).toEqual(note(1, odd).body)
    })

    it('reads from a position, at most a limit', async () => {
      await createSession(store, 's1', 9)
      expect((await store.read('s1', { from: 4 })).map((r) => r.position)).toEqual([5, 6, 7, 8, 9, 10])
      expect((await store.read('s1', { from: 4, limit: 2 })).map((r) => r.position)).toEqual([5, 6])
      expect(await store.read('s1', { from: 10 })).toEqual([])
      expect(await store.read('s1', { from: 99 })).toEqual([])
    })

    it('compacts stream records when their message ends: 10,000 chunks in 200 records leave only log entries', async () => {
      await createSession(store, 's1')
      for (let i = 0; i < 200; i += 50) await store.append('s1', batch(1, Array.from({ length: 50 }, () => stream(1, 50))))
      const streamed = await store.read('s1')
      expect(streamed).toHaveLength(201)
      expect(streamed.reduce((n, r) => n + (r.body.type === 'stream' ? r.body.chunks.length : 0), 0)).toBe(10_000)
      await store.append('s1', batch(1, [messageEnd(1)]))
      const after = await store.read('s1')
      expect(after.map((r) => r.body.type)).toEqual(['init', 'messageEnd'])
      expect(after.map((r) => r.position)).toEqual([1, 202])
      // A reader resuming inside the compacted records gets what follows them: no gap in meaning, no duplicate.
      expect((await store.read('s1', { from: 50 })).map((r) => r.position)).toEqual([202])
      expect(await store.info('s1')).toMatchObject({ length: 2, lastPosition: 202 })
    })

    it('a batch compacts its own stream records before its message end, and keeps those after it', async () => {
      await createSession(store, 's1')
      await store.append('s1', batch(1, [stream(1)]))
      const appended = await store.append('s1', batch(1, [stream(1), messageEnd(1), note(2), stream(3, 2)]))
      const records = await store.read('s1')
      expect(records.map((r) => r.body.type)).toEqual(['init', 'messageEnd', 'enqueue', 'stream'])
      expect(appended).toEqual({ lastPosition: records.at(-1)!.position, length: 3 })
      expect(new Set(records.map((r) => r.position)).size).toBe(4)
    })

    it('lists sessions newest first, by prefix, by last update, at most a limit; deletes them', async () => {
      for (const id of ['a/1', 'a/2', 'b/1']) await createSession(store, id)
      await store.append('a/1', batch(1, [note(1)]))
      const all = await store.list()
      expect(all.map((s) => s.sessionId).sort()).toEqual(['a/1', 'a/2', 'b/1'])
      expect(all.map((s) => s.updatedAt)).toEqual([...all.map((s) => s.updatedAt)].sort((x, y) => y - x))
      expect((await store.list({ prefix: 'a/' })).map((s) => s.sessionId).sort()).toEqual(['a/1', 'a/2'])
      expect(await store.list({ limit: 2 })).toHaveLength(2)
      expect(await store.list({ updatedBefore: Math.min(...all.map((s) => s.createdAt)) })).toEqual([])
      const later = Math.max(...all.map((s) => s.updatedAt)) + 1
      expect(await store.list({ updatedBefore: later })).toHaveLength(3)
      expect(await store.info('a/1')).toMatchObject({ length: 2, lastPosition: 2 })
      expect(await store.delete('a/1')).toBe(true)
      expect(await store.delete('a/1')).toBe(false)
      expect(await store.read('a/1')).toEqual([])
      expect(await deleteSessions(store, { updatedBefore: later, prefix: 'a/' })).toBe(1)
      expect((await store.list()).map((s) => s.sessionId)).toEqual(['b/1'])
      // A deleted session can be created again.
      await expect(store.append('a/1', batch(0, [init()]))).resolves.toEqual({ lastPosition: 1, length: 1 })
    })

    it('refuses invalid arguments with an InvalidInputError naming the method and the path', async () => {
      const refused = async (call: Promise<unknown>, pattern: RegExp) => {
        const error = await call.then(() => undefined, (e: unknown) => e)
        expect(error).toBeInstanceOf(InvalidInputError)
        expect((error as Error).message).toMatch(pattern)
      }
      const any = store as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>
      await refused(store.append('', batch(0, [init()])), /\.append: invalid sessionId/)
      await refused(store.append('x'.repeat(257), batch(0, [init()])), /at most 256/)
      await refused(any['append']!.call(store, 42, batch(0, [init()])), /sessionId/)
      await refused(any['append']!.call(store, 's', null), /append/)
      await refused(store.append('s', { expectedSeq: -1, records: [] }), /append\.expectedSeq/)
      await refused(store.append('s', { expectedSeq: 1.5, records: [] }), /append\.expectedSeq/)
      await refused(store.append('s', batch(0, [note(0)])), /records\[0\]\.body\.type: a session starts with its 'init' entry/)
      await refused(store.append('s', batch(0, [init(), init()])), /records\[1\]\.body\.seq/)
      await refused(store.append('s', batch(0, [{ at: Number.NaN, body: init().body }])), /records\[0\]\.at/)
      await refused(store.append('s', batch(0, [init()], '')), /leaseHolder/)
      await refused(store.read('s', { from: -1 }), /options\.from/)
      await refused(store.read('s', { limit: 0 }), /options\.limit/)
      await refused(store.list({ limit: 0 }), /options\.limit/)
      await refused(store.list({ updatedBefore: Number.NaN }), /options\.updatedBefore/)
      await refused(store.acquireLease('s', 'me', 0), /ttlMs/)
      await refused(store.acquireLease('s', '', 1000), /holder/)
      await refused(store.releaseLease('', 'me'), /sessionId/)
      await refused(store.info(''), /sessionId/)
      await refused(store.delete(''), /sessionId/)
      const error = await firstValueFrom(store.events$('', {}).pipe(take(1), toArray())).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(InvalidInputError)
      expect(await store.list()).toEqual([])
    })

    it('a stored record that no longer decodes: an error naming the session and the position', async () => {
      if (h.corrupt === undefined) return expect(h.corrupt).toBeUndefined() // memory: records are kept decoded and frozen
      await createSession(store, 's1', 2)
      await h.corrupt('s1', 2, { seq: 1, type: 'enqueue', queue: 'followUp', message: { role: 'robot' } })
      await expect(store.read('s1')).rejects.toThrow(/position 2 of session 's1'.*body\.message/s)
      await expect(store.read('s1', { from: 2 })).resolves.toHaveLength(1)
      await expect(firstValueFrom(store.events$('s1').pipe(take(3), toArray()))).rejects.toThrow(/position 2 of session 's1'/)
    })

    liveContract(() => ({ store, h }), until)
  })
}
