/** `rxagent devtools --store pglite:<dir>`: the page over a real PGlite store a run wrote (and a clear error where there is none). */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runDevtools } from '../../src/devtools/cli.js'
import { storeOpeners } from '../../src/devtools/stores.js'
import { pgliteSessionStore } from '../../src/sessions/pglite-store.js'
import { streamingSession } from './streaming-session.js'

const dir = mkdtempSync(join(tmpdir(), 'rxagent-devtools-pglite-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('rxagent devtools over PGlite', () => {
  it('serves the sessions a store in a directory holds', async () => {
    const writer = await pgliteSessionStore({ dataDir: join(dir, 'store') })
    await streamingSession(writer, 'in-pglite')
    await writer.close()

    const lines: string[] = []
    const { server, stop } = await runDevtools({ store: `pglite:${join(dir, 'store')}`, port: 0, host: '127.0.0.1', help: false }, storeOpeners, (l) => lines.push(l))
    try {
      expect(lines[0]).toMatch(/^rxagent devtools: http:\/\/127\.0\.0\.1:\d+\/ \(pglite store pglite:/)
      const sessions = (await (await fetch(new URL('/api/sessions', server.url))).json()) as { sessionId: string }[]
      expect(sessions.map((s) => s.sessionId)).toEqual(['in-pglite'])
      const { timeline } = (await (await fetch(new URL('/api/sessions/in-pglite', server.url))).json()) as { timeline: { runs: { status: string; lanes: { id: string }[] }[] } }
      expect(timeline.runs.map((r) => [r.status, r.lanes.map((l) => l.id)])).toEqual([['running', ['inputs', 'model', 'tool:log-1', 'tool:read-1']]])
    } finally {
      await stop()
    }
  }, 120_000)

  it('says so when the directory holds no store (rather than creating one)', async () => {
    await expect(runDevtools({ store: `pglite:${join(dir, 'none')}`, port: 0, host: '127.0.0.1', help: false }, storeOpeners)).rejects.toThrow(/no PGlite session store at '.*none' \(run the demo/)
  })
})
