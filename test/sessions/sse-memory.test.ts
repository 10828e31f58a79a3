import { describe, expect, it } from 'vitest'
import { InvalidInputError } from '../../src/types/input.js'
import { serveSessions } from '../../src/sessions/serve-sessions.js'
import { sessionEventsHandler, type SessionStreamEndInfo } from '../../src/sessions/sse.js'
import { throwError } from 'rxjs'
import { memorySessionStore } from '../../src/sessions/memory-store.js'
import { openRaw, until, Writer } from './sse-support.js'
import { sseSuite } from './sse-suite.js'

sseSuite('memory', async () => {
  const store = memorySessionStore()
  return { store, cleanup: () => store.close() }
})

describe('the SSE helper refuses bad arguments, naming them', () => {
  const store = memorySessionStore()
  it('a store that is not one', () => {
    expect(() => sessionEventsHandler(undefined as never)).toThrow(InvalidInputError)
    expect(() => sessionEventsHandler(undefined as never)).toThrow('sessionEventsHandler: invalid store at : expected a SessionStore, got undefined')
    expect(() => sessionEventsHandler({ read: async () => [], info: async () => undefined } as never)).toThrow('sessionEventsHandler: invalid store at .events$: expected a function (a SessionStore), got undefined')
  })
  it('options of the wrong type or range', () => {
    expect(() => sessionEventsHandler(store, { heartbeatMs: -1 })).toThrow(/sessionEventsHandler: invalid options at heartbeatMs/)
    expect(() => sessionEventsHandler(store, { maxBufferedBytes: 0 })).toThrow(/at maxBufferedBytes/)
    expect(() => sessionEventsHandler(store, { eventNames: 'all' as never })).toThrow(/at eventNames/)
    expect(() => sessionEventsHandler(store, { scheduler: {} as never })).toThrow(/at scheduler/)
    expect(() => sessionEventsHandler(store, { sessionIdOf: 'id' as never })).toThrow(/at sessionIdOf/)
  })
  it('serveSessions: a bad port, before listening', async () => {
    await expect(serveSessions(store, { port: 1.5 })).rejects.toThrow(/serveSessions: invalid options at port/)
    await expect(serveSessions(store, { port: 1.5 })).rejects.toBeInstanceOf(InvalidInputError)
  })
})

describe('the SSE helper over the memory store', () => {
  it("releases the store's own tail (its count of tails) when the client goes away", async () => {
    const store = memorySessionStore()
    const writer = new Writer(store, 's')
    await writer.init()
    const server = await serveSessions(store, { heartbeatMs: 0 })
    try {
      const raw = await openRaw(`${server.url}/sessions/s/events`)
      await until(() => raw.events.length === 1 && store.tails === 1, 'the tail')
      raw.close()
      await until(() => store.tails === 0, 'the tail released')
    } finally {
      await server.close()
      await store.close()
    }
  })
})

describe('the SSE helper when the store fails', () => {
  it('a tail that errors ends the response with a comment saying why, and onStreamEnd is told', async () => {
    const store = memorySessionStore()
    const writer = new Writer(store, 's')
    await writer.init()
    const failing = Object.create(store) as typeof store
    Object.defineProperty(failing, 'events$', { value: () => throwError(() => new Error('connection\nlost')) })
    const ends: SessionStreamEndInfo[] = []
    const server = await serveSessions(failing, { heartbeatMs: 0, onStreamEnd: (info) => ends.push(info) })
    try {
      const raw = await openRaw(`${server.url}/sessions/s/events`)
      await raw.done
      expect(raw.events.map((e) => e.id)).toEqual(['1'])
      expect(raw.comments).toEqual(["the session's store failed: connection lost"])
      expect(ends.map((e) => [e.reason, (e.error as Error).message])).toEqual([['error', 'connection\nlost']])
    } finally {
      await server.close()
      await store.close()
    }
  })

  it('a store that cannot say whether the session exists: 500 with the reason; an onStreamEnd that throws becomes a warning', async () => {
    const store = memorySessionStore()
    const writer = new Writer(store, 's')
    await writer.init()
    const failing = Object.create(store) as typeof store
    Object.defineProperty(failing, 'info', { value: () => Promise.reject(new Error('database is down')) })
    const warnings: string[] = []
    const onWarning = (w: Error) => warnings.push(w.message)
    process.on('warning', onWarning)
    const broken = await serveSessions(failing, { heartbeatMs: 0 })
    const throwing = await serveSessions(store, { heartbeatMs: 0, onStreamEnd: () => { throw new Error('oops') } })
    try {
      const answer = await fetch(`${broken.url}/sessions/s/events`)
      expect([answer.status, await answer.text()]).toEqual([500, 'could not read the session: database is down\n'])
      const raw = await openRaw(`${throwing.url}/sessions/s/events`)
      await until(() => raw.events.length === 1, 'the replay')
      raw.close()
      await until(() => warnings.length === 1, 'the warning')
      expect(warnings).toEqual(['sessionEventsHandler: onStreamEnd threw: oops'])
    } finally {
      process.off('warning', onWarning)
      await broken.close()
      await throwing.close()
      await store.close()
    }
  })
})
