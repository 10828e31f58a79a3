/**
 * The SSE helper over the PGlite store: one in-memory PGlite for the file, a
 * fresh schema per test (the store's own tail count checked too).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PGlite } from '@electric-sql/pglite'
import { pgliteSessionStore } from '../../src/sessions/pglite-store.js'
import { serveSessions } from '../../src/sessions/serve-sessions.js'
import { openRaw, until, Writer } from './sse-support.js'
import { sseSuite } from './sse-suite.js'

let shared: PGlite
let schemas = 0
beforeAll(async () => {
  shared = await PGlite.create()
}, 120_000)
afterAll(async () => {
  await shared?.close()
})

sseSuite('pglite', async () => {
  const store = await pgliteSessionStore({ db: shared, schema: `sse_${++schemas}` })
  return { store, cleanup: () => store.close() }
})

describe('the SSE helper over the PGlite store', () => {
  it("releases the store's own tail when the client goes away", async () => {
    const store = await pgliteSessionStore({ db: shared, schema: `sse_${++schemas}` })
    const writer = new Writer(store, 's')
    await writer.init()
    const server = await serveSessions(store, { heartbeatMs: 0 })
    try {
      const raw = await openRaw(`${server.url}/sessions/s/events`)
      await until(() => raw.events.length === 1 && store.tails === 1, 'the tail')
      raw.close()
      await until(() => store.tails === 0, 'the tail released')
      expect(store.tails).toBe(0)
    } finally {
      await server.close()
      await store.close()
    }
  })
})
