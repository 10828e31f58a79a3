/** `rxagent devtools --store postgres://…`: the page over a real PostgreSQL store (a throwaway cluster; skipped with the install command without PostgreSQL). */
import { expect, it } from 'vitest'
import { runDevtools } from '../../src/devtools/cli.js'
import { storeOpeners } from '../../src/devtools/stores.js'
import { postgresSessionStore } from '../../src/sessions/postgres-store.js'
import { describePostgres } from '../support/postgres-cluster.js'
import { streamingSession } from './streaming-session.js'

describePostgres('rxagent devtools over PostgreSQL', (cluster) => {
  it('serves the sessions the database holds, and tails one live', async () => {
    const url = await cluster().createDatabase()
    const writer = await postgresSessionStore({ connectionString: url })
    try {
      await streamingSession(writer, 'in-postgres')
      const lines: string[] = []
      const { server, stop } = await runDevtools({ store: url, port: 0, host: '127.0.0.1', help: false }, storeOpeners, (l) => lines.push(l))
      try {
        expect(lines[0]).toMatch(/^rxagent devtools: http:\/\/127\.0\.0\.1:\d+\/ \(postgres store postgres(ql)?:\/\//)
        const sessions = (await (await fetch(new URL('/api/sessions?q=postgres', server.url))).json()) as { sessionId: string }[]
        expect(sessions.map((s) => s.sessionId)).toEqual(['in-postgres'])
        // The tail: what is there, then what another process appends.
        const abort = new AbortController()
        const res = await fetch(new URL('/api/sessions/in-postgres/events', server.url), { signal: abort.signal })
        const reader = res.body!.getReader()
        const info = (await writer.info('in-postgres'))!
        let text = ''
        const positions = () => [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))
        const more = async () => {
          const { value, done } = await reader.read()
          if (done) throw new Error(`the tail ended after positions ${positions().join(', ')}`)
          text += new TextDecoder().decode(value)
        }
        while (!positions().includes(info.lastPosition)) await more()
        await writer.append('in-postgres', { expectedSeq: info.length, records: [{ at: Date.now(), body: { seq: info.length, type: 'enqueue', queue: 'followUp', message: { role: 'user', content: [{ type: 'text', text: 'and the date?' }], timestamp: 0 } } }] })
        while (!positions().some((p) => p > info.lastPosition)) await more()
        expect(text).toContain('and the date?')
        abort.abort()
      } finally {
        await stop()
      }
    } finally {
      await writer.close()
    }
  }, 180_000)
})
