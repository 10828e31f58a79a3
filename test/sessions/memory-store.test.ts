/** The store in memory against the contract, and what is its own: the injected clock. */
import { describe, expect, it } from 'vitest'
import { VirtualTimeScheduler } from 'rxjs'
import { memorySessionStore, type MemorySessionStore } from '../../src/sessions/index.js'
import { storeContract } from './store-contract.js'
import { batch, init, note } from './fixtures.js'

storeContract('memory', async () => {
  const store = memorySessionStore()
  return { store, tails: () => store.tails }
})

describe('memorySessionStore', () => {
  it('takes its clock from the scheduler it is given: lease expiry, createdAt and updatedAt', async () => {
    const scheduler = new VirtualTimeScheduler()
    const store: MemorySessionStore = memorySessionStore({ scheduler })
    expect(await store.acquireLease('s1', 'p1', 1_000)).toMatchObject({ acquired: true, lease: { expiresAt: 1_000 } })
    await store.append('s1', batch(0, [init()], 'p1'))
    scheduler.schedule(() => {}, 1_000)
    scheduler.flush()
    await expect(store.append('s1', batch(1, [note(1)], 'p1'))).rejects.toThrow(/expired at 1970-01-01T00:00:01.000Z/)
    expect(await store.acquireLease('s1', 'p2', 500)).toMatchObject({ acquired: true, lease: { holder: 'p2', expiresAt: 1_500 } })
    await store.append('s1', batch(1, [note(1)]))
    expect(await store.info('s1')).toMatchObject({ createdAt: 0, updatedAt: 1_000 })
  })

  it("keeps its own copy: the caller's records stay theirs and unfrozen", async () => {
    const store = memorySessionStore()
    const record = init()
    await store.append('s1', batch(0, [record]))
    expect(Object.isFrozen(record.body)).toBe(false)
    const [stored] = await store.read('s1')
    expect(stored!.body).toEqual(record.body)
    expect(stored!.body).not.toBe(record.body)
    expect(Object.isFrozen(stored!.body)).toBe(true)
  })
})
