/**
 * A durable session that cannot write: the live run is aborted with
 * stopReason `error` naming the session, the store and the cause; `flush`
 * rejects with it; later commands throw. And the lease: one writer per
 * session (busy → error or wait), renewed, released, taken over from a
 * holder that died, lost.
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { SessionStore } from '../../src/agent/session-store.js'
import { chunk, reply } from '../../marbles/index.js'
import { closeAll, handModel, logOf, memoryStore, openAgent, until, wrapStore } from './session-kit.js'

afterEach(closeAll)

/** A memory store whose appends fail while `down` is set. */
function flakyStore(): { store: SessionStore; down: (error: Error | undefined) => void } {
  const memory = memoryStore()
  let down: Error | undefined
  const store = wrapStore(memory, { append: (id, a) => (down === undefined ? memory.append(id, a) : Promise.reject(down)) })
  return { store, down: (error) => (down = error) }
}

const leaseIsFree = async (store: SessionStore, id: string): Promise<boolean> => {
  const outcome = await store.acquireLease(id, 'probe', 1000)
  if (outcome.acquired) await store.releaseLease(id, 'probe')
  return outcome.acquired
}

describe('a session that cannot write', () => {
  it('aborts the live run with stopReason error naming session, store and cause; flush rejects; commands throw; nothing after is claimed durable', async () => {
    const { store, down } = flakyStore()
    const model = handModel(['manual'])
    const agent = await openAgent(store, 'f1', model)
    const run = agent.prompt('go')
    await until(() => model.live.length === 1, 'the model call')
    model.live[0]!.next(chunk.start())
    model.live[0]!.next(chunk.text('some'))
    await agent.session!.flush()
    const durable = agent.session!.durableSeq
    down(new Error('connection refused'))
    model.live[0]!.next(chunk.text(' more'))
    const result = await run
    expect(result.stopReason).toBe('error')
    expect(result.error).toMatch(/^session 'f1' \(memory store\): could not append the log after entry \d+: connection refused$/)
    await expect(agent.session!.flush()).rejects.toThrow(/connection refused/)
    expect(() => agent.prompt('again')).toThrow(/session 'f1' is no longer writable: session 'f1' \(memory store\).*connection refused/)
    expect(() => agent.steer('x')).toThrow(/no longer writable/)
    expect(() => agent.setSystemPrompt('x')).toThrow(/no longer writable/)
    expect(agent.session!.durableSeq).toBe(durable)
    expect((await logOf(store, 'f1')).length).toBe(durable)
    down(undefined)
    await expect(agent.session!.close()).rejects.toThrow(/connection refused/)
    // The lease was given back all the same.
    expect(await leaseIsFree(store, 'f1')).toBe(true)
  })

  it('a conflicting writer (the log moved under us) fails the session the same way', async () => {
    const store = memoryStore()
    const agent = await openAgent(store, 'f2', handModel([]))
    // Another writer, without the lease.
    await store.append('f2', { expectedSeq: 1, records: [{ at: 0, body: { type: 'planMode', on: true, seq: 1 } }] })
    agent.steer('x')
    await expect(agent.session!.flush()).rejects.toThrow(/session 'f2' \(memory store\): could not append the log after entry 0: session 'f2': append expected the log at length 1, but it is at 2/)
  })
})

describe('the lease', () => {
  it('busy: a second opener gets a SessionLeaseError naming the holder and expiry; after close it opens', async () => {
    let now = 1_000_000
    const store = memoryStore(() => now)
    const a = await openAgent(store, 'l1', handModel([]), { holder: 'proc-a', lease: { ttlMs: 60_000 } })
    const busy = openAgent(store, 'l1', handModel([]), { holder: 'proc-b' })
    await expect(busy).rejects.toMatchObject({ name: 'SessionLeaseError', heldBy: { holder: 'proc-a', expiresAt: 1_060_000 } })
    await expect(busy).rejects.toThrow(`Agent.open: session 'l1' is leased by 'proc-a' until ${new Date(1_060_000).toISOString()}`)
    await a.session!.close()
    await a.session!.close()
    const b = await openAgent(store, 'l1', handModel([]), { holder: 'proc-b' })
    expect((await store.acquireLease('l1', 'proc-c', 1000)).acquired).toBe(false)
    expect(b.session!.holder).toBe('proc-b')
    now += 1
  })

  it('wait: the second opener polls until the first closes, or gives up after waitMs', async () => {
    const store = memoryStore()
    const a = await openAgent(store, 'l2', handModel([]), { holder: 'proc-a', lease: { ttlMs: 60_000 } })
    await expect(openAgent(store, 'l2', handModel([]), { holder: 'proc-b', lease: { onBusy: 'wait', waitMs: 30 } })).rejects.toThrow(/leased by 'proc-a' .*\(waited 30 ms\)/)
    const waiting = openAgent(store, 'l2', handModel([]), { holder: 'proc-b', lease: { onBusy: 'wait', ttlMs: 300, waitMs: 60_000 } })
    await new Promise((resolve) => setTimeout(resolve, 20))
    await a.session!.close()
    const b = await waiting
    expect(b.session!.holder).toBe('proc-b')
  })

  it('takeover: a dead holder’s lease expires and is taken; the old holder can no longer append (fenced)', async () => {
    let now = 0
    const store = memoryStore(() => now)
    const model = handModel([reply.text('late')])
    const a = await openAgent(store, 'l3', model, { holder: 'proc-a', lease: { ttlMs: 60_000 } })
    now = 60_001
    const b = await openAgent(store, 'l3', handModel([]), { holder: 'proc-b' })
    a.steer('from the past')
    await expect(a.session!.flush()).rejects.toThrow(/session 'l3' \(memory store\): could not append.*leased by 'proc-b'/)
    expect((await logOf(store, 'l3')).length).toBe(b.log.length)
  })

  it('is renewed on the scheduler and, when lost to another holder, fails the session', async () => {
    const memory = memoryStore()
    let renewals = 0
    const store = wrapStore(memory, { acquireLease: (id, h, ttl) => (renewals++, memory.acquireLease(id, h, ttl)) })
    const model = handModel(['manual'])
    const a = await openAgent(store, 'l4', model, { holder: 'proc-a', lease: { ttlMs: 90 } })
    await until(() => renewals >= 3, 'two renewals')
    const run = a.prompt('go')
    await until(() => model.live.length === 1, 'the model call')
    await memory.releaseLease('l4', 'proc-a')
    expect((await memory.acquireLease('l4', 'thief', 600_000)).acquired).toBe(true)
    const result = await run
    expect(result).toMatchObject({ stopReason: 'error', error: "session 'l4' (memory store): the lease was lost to 'thief'" })
    expect(() => a.continue()).toThrow(/no longer writable/)
  })

  it('the default holder names the host and the process', async () => {
    const store = memoryStore()
    const a = await openAgent(store, 'l5', handModel([]), { holder: undefined })
    expect(a.session!.holder).toMatch(new RegExp(`^[^:]+:${process.pid}:[a-z0-9]+$`))
  })
})
