/**
 * The contract's live parts (see store-contract.ts): tails replaying then
 * following without gaps or duplicates, releasing what they hold; leases
 * and the lease fence on appends; closing.
 */
import { expect, it } from 'vitest'
import { firstValueFrom, lastValueFrom, take, takeWhile, toArray, type Subscription } from 'rxjs'
import { SessionDeletedError, SessionLeaseError, type SessionRecord, type SessionStore } from '../../src/agent/session-store.js'
import { SessionStoreClosedError } from '../../src/sessions/index.js'
import type { StoreHarness } from './store-contract.js'
import { batch, createSession, init, messageEnd, note, seqs, stream } from './fixtures.js'

type Until = (condition: () => boolean | Promise<boolean>, what: string, ms?: number) => Promise<void>

/** Defines the live tests; `current()` gives the test's store and harness. */
export function liveContract(current: () => { store: SessionStore; h: StoreHarness }, until: Until): void {
  it('events$ replays from a position, then follows live', async () => {
    const { store } = current()
    await createSession(store, 's1', 3)
    const seen: SessionRecord[] = []
    const sub = store.events$('s1', { from: 2 }).subscribe((r) => seen.push(r))
    await until(() => seen.length === 2, 'the replay')
    expect(seen.map((r) => r.position)).toEqual([3, 4])
    await store.append('s1', batch(4, [note(4), stream(5, 2)]))
    await until(() => seen.length === 4, 'the live records')
    expect(seen.map((r) => r.position)).toEqual([3, 4, 5, 6])
    expect(seen[3]!.body).toEqual(stream(5, 2).body)
    sub.unsubscribe()
  })

  it('events$ keeps position order when its own subscriber appends during the replay', async () => {
    const { store } = current()
    await createSession(store, 's1', 2)
    const seen: number[] = []
    let appended: Promise<unknown> | undefined
    const sub = store.events$('s1').subscribe((r) => {
      seen.push(r.position)
      if (r.position === 1) appended = store.append('s1', batch(3, [note(3)]))
    })
    await until(() => seen.length === 4, 'the replay and the live record')
    await appended
    expect(seen).toEqual([1, 2, 3, 4])
    sub.unsubscribe()
  })

  it('events$ of a session not created yet follows it from its creation', async () => {
    const { store } = current()
    const first = firstValueFrom(store.events$('later').pipe(take(2), toArray()))
    await until(async () => (await current().h.tails()) === 1, 'the tail to open')
    await createSession(store, 'later', 1)
    expect((await first).map((r) => r.position)).toEqual([1, 2])
  })

  it('events$ has no gap nor duplicate when appends race the replay', async () => {
    const { store } = current()
    await createSession(store, 's1', 20)
    let length = 21
    let stop = false
    const writer = (async () => {
      while (!stop && length < 200) {
        await store.append('s1', batch(length, [note(length), note(length + 1)]))
        length += 2
      }
    })()
    // Readers subscribe at different moments of the writing, each from a different position.
    const readers: Array<Promise<SessionRecord[]>> = []
    for (let i = 0; i < 6; i++) {
      readers.push(lastValueFrom(store.events$('s1', { from: i * 3 }).pipe(takeWhile((r) => r.position < 201, true), toArray())))
      await new Promise((resolve) => setTimeout(resolve, 1))
    }
    await writer
    stop = true
    for (const [i, reader] of readers.entries()) {
      const positions = (await reader).map((r) => r.position)
      expect(positions).toEqual(Array.from({ length: 201 - i * 3 }, (_, k) => i * 3 + 1 + k))
    }
    expect(seqs(await store.read('s1'))).toHaveLength(201)
  })

  it('unsubscribing releases the tail', async () => {
    const { store, h } = current()
    await createSession(store, 's1')
    expect(await h.tails()).toBe(0)
    const subs: Subscription[] = [store.events$('s1').subscribe(), store.events$('s2').subscribe()]
    await until(async () => (await h.tails()) === 2, 'two tails')
    subs[0]!.unsubscribe()
    await until(async () => (await h.tails()) === 1, 'one tail')
    subs[1]!.unsubscribe()
    await until(async () => (await h.tails()) === 0, 'no tail')
    // A new tail works after all were released.
    const next = firstValueFrom(store.events$('s1', { from: 1 }))
    await store.append('s1', batch(1, [note(1)]))
    expect((await next).position).toBe(2)
  })

  it('a reader following a streaming message sees stream records, then the message end', async () => {
    const { store } = current()
    await createSession(store, 's1')
    // Each record is awaited before the next append: a reader that reads after the messageEnd committed finds the stream records compacted (as the port allows).
    const seen: string[] = []
    const sub = store.events$('s1').subscribe((r) => seen.push(r.body.type))
    await until(() => seen.length === 1, 'the init record')
    await store.append('s1', batch(1, [stream(1, 2)]))
    await until(() => seen.length === 2, 'the first stream record')
    await store.append('s1', batch(1, [stream(1, 3)]))
    await until(() => seen.length === 3, 'the second stream record')
    await store.append('s1', batch(1, [messageEnd(1)]))
    await until(() => seen.length === 4, 'the message end')
    sub.unsubscribe()
    expect(seen).toEqual(['init', 'stream', 'stream', 'messageEnd'])
    expect((await store.read('s1')).map((r) => r.body.type)).toEqual(['init', 'messageEnd'])
  })

  it('deleting a session ends its live tails with SessionDeletedError; the id reused starts over, and a position of the deleted session is refused', async () => {
    const { store, h } = current()
    await createSession(store, 's1', 2)
    const seen: number[] = []
    const ended: unknown[] = []
    store.events$('s1').subscribe({ next: (r) => seen.push(r.position), error: (e: unknown) => ended.push(e) })
    // A tail of a session created after it opened ends too; a tail of another session does not.
    const seen2: number[] = []
    const later = store.events$('s2').subscribe({ next: (r) => seen2.push(r.position), error: (e: unknown) => ended.push(e) })
    const other = store.events$('s3').subscribe({ error: (e: unknown) => ended.push(e) })
    await until(async () => seen.length === 3 && (await h.tails()) === 3, 'the replay and the tails')
    await createSession(store, 's2')
    await until(() => seen2.length === 1, 'the tail of s2 to find it')
    expect(await store.delete('s1')).toBe(true)
    expect(await store.delete('s2')).toBe(true)
    expect(await store.delete('s3')).toBe(false)
    await until(() => ended.length === 2, 'the tails of the deleted sessions to end')
    expect(ended.map((e) => (e as SessionDeletedError).sessionId).sort()).toEqual(['s1', 's2'])
    expect(ended[0]).toBeInstanceOf(SessionDeletedError)
    expect((ended[0] as Error).message).toMatch(/^session 's[12]' was deleted: its tail ends/)
    expect(later.closed && !other.closed).toBe(true)
    await until(async () => (await h.tails()) === 1, 'the ended tails released')
    // The id reused: a reader resuming at a position of the deleted session is told; a new tail starts at position 1.
    await createSession(store, 's1')
    const stale = await firstValueFrom(store.events$('s1', { from: 3 })).catch((e: unknown) => e)
    expect(stale).toBeInstanceOf(SessionDeletedError)
    expect((stale as Error).message).toMatch(/session 's1' has no position after 3 \(its last position is 1\)/)
    expect((await firstValueFrom(store.events$('s1'))).position).toBe(1)
    expect(seen).toEqual([1, 2, 3])
    other.unsubscribe()
  })

  it('leases: acquire, refuse another holder, renew, release', async () => {
    const { store } = current()
    const first = await store.acquireLease('s1', 'p1', 60_000)
    expect(first).toMatchObject({ acquired: true, lease: { sessionId: 's1', holder: 'p1' } })
    const refused = await store.acquireLease('s1', 'p2', 60_000)
    expect(refused).toMatchObject({ acquired: false, heldBy: { sessionId: 's1', holder: 'p1' } })
    const renewed = await store.acquireLease('s1', 'p1', 120_000)
    expect(renewed.acquired && first.acquired && renewed.lease.expiresAt > first.lease.expiresAt).toBe(true)
    expect(await store.releaseLease('s1', 'p2')).toBe(false)
    expect(await store.releaseLease('s1', 'p1')).toBe(true)
    expect(await store.releaseLease('s1', 'p1')).toBe(false)
    expect(await store.acquireLease('s1', 'p2', 60_000)).toMatchObject({ acquired: true, lease: { holder: 'p2' } })
    // Leases are per session.
    expect(await store.acquireLease('s2', 'p1', 60_000)).toMatchObject({ acquired: true })
  })

  it('an expired lease is taken over', async () => {
    const { store } = current()
    const held = await store.acquireLease('s1', 'p1', 30)
    expect(held.acquired).toBe(true)
    await until(async () => (await store.acquireLease('s1', 'p2', 60_000)).acquired, 'the lease to expire')
    expect(await store.acquireLease('s1', 'p1', 60_000)).toMatchObject({ acquired: false, heldBy: { holder: 'p2' } })
  })

  it('the lease fence: an append under a lease it does not hold appends nothing', async () => {
    const { store } = current()
    await expect(store.append('s1', batch(0, [init()], 'p1'))).rejects.toThrow(/no one holds the session's lease/)
    expect(await store.info('s1')).toBeUndefined()
    await store.acquireLease('s1', 'p1', 60_000)
    await expect(store.append('s1', batch(0, [init()], 'p1'))).resolves.toEqual({ lastPosition: 1, length: 1 })
    const refused = await store.append('s1', batch(1, [note(1)], 'p2')).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(SessionLeaseError)
    expect(refused).toMatchObject({ sessionId: 's1', heldBy: { holder: 'p1' } })
    // A lease taken over after it expired fences the writer that held it.
    await store.releaseLease('s1', 'p1')
    await store.acquireLease('s1', 'p1', 30)
    await until(async () => (await store.acquireLease('s1', 'p2', 60_000)).acquired, 'the takeover')
    await expect(store.append('s1', batch(1, [note(1)], 'p1'))).rejects.toBeInstanceOf(SessionLeaseError)
    await expect(store.append('s1', batch(1, [note(1)], 'p2'))).resolves.toEqual({ lastPosition: 2, length: 2 })
    // Without `leaseHolder` there is no fence.
    await expect(store.append('s1', batch(2, [note(2)]))).resolves.toEqual({ lastPosition: 3, length: 3 })
  })

  it('close() completes the tails; later calls reject clearly; closing again is a no-op', async () => {
    const { store, h } = current()
    await createSession(store, 's1')
    const seen: number[] = []
    let completed = false
    store.events$('s1').subscribe({ next: (r) => seen.push(r.position), complete: () => (completed = true) })
    await until(() => seen.length === 1, 'the replay')
    expect(await h.tails()).toBe(1)
    await store.close()
    expect(completed).toBe(true)
    expect(seen).toEqual([1])
    await expect(store.close()).resolves.toBeUndefined()
    for (const call of [
      () => store.append('s1', batch(1, [note(1)])),
      () => store.read('s1'),
      () => store.info('s1'),
      () => store.list(),
      () => store.delete('s1'),
      () => store.acquireLease('s1', 'p', 1000),
      () => store.releaseLease('s1', 'p'),
      () => firstValueFrom(store.events$('s1')),
    ]) {
      await expect(call()).rejects.toBeInstanceOf(SessionStoreClosedError)
    }
    await expect(store.read('s1')).rejects.toThrow(/\.read: the session store is closed/)
  })
}
