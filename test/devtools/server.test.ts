/** serveDevtools: its options, the JSON endpoints, the live tail (SSE), answering an approval; over a store filled by a real Agent run. */
import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { serveDevtools, type DevtoolsServer } from '../../src/devtools/index.js'
import type { SessionTimeline } from '../../src/devtools/timeline-model.js'
import type { SessionStore } from '../../src/agent/session-store.js'
import { memorySessionStore } from '../../src/sessions/memory-store.js'
import { scriptedSession, type ScriptedSession } from './scripted-session.js'

let store: SessionStore
let devtools: DevtoolsServer
let session: ScriptedSession

const get = async (path: string, init?: RequestInit) => {
  const res = await fetch(new URL(path, devtools.url), init)
  return { status: res.status, body: (await res.json()) as any }
}
const post = (path: string, body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
  get(path, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) })

/** Waits (polling the API; no clock assertions) until the session shows what `ok` looks for. */
async function until(ok: (t: SessionTimeline) => boolean, what: string): Promise<SessionTimeline> {
  for (let i = 0; i < 2000; i++) {
    const { status, body } = await get(`/api/sessions/${session.sessionId}`)
    if (status === 200 && ok(body.timeline)) return body.timeline
    await new Promise((r) => setTimeout(r, 10))
  }
  throw new Error(`the session never showed ${what}`)
}

beforeAll(async () => {
  store = memorySessionStore()
  session = await scriptedSession(store)
  devtools = await serveDevtools({ store, agents: { [session.sessionId]: session.agent } })
})
afterAll(async () => {
  await session?.agent.session?.close()
  await devtools?.close()
  await store?.close()
})

describe('serveDevtools', () => {
  it('rejects options that are not a store, a port, a host, agents', async () => {
    await expect(serveDevtools(undefined as never)).rejects.toThrow(/serveDevtools.*options/)
    await expect(serveDevtools({ store: { kind: 'x', read: () => 0 } } as never)).rejects.toThrow(/store\.events\$/)
    await expect(serveDevtools({ store, port: 70000 })).rejects.toThrow(/port/)
    await expect(serveDevtools({ store, agents: { s: {} } as never })).rejects.toThrow(/agents\.s\.resolveApproval/)
  })

  it('serves the page and its files, offline (no outside address in them)', async () => {
    for (const [path, type] of [['/', 'text/html'], ['/app.js', 'text/javascript'], ['/draw.js', 'text/javascript'], ['/style.css', 'text/css']] as const) {
      const res = await fetch(new URL(path, devtools.url))
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toContain(type)
      expect(await res.text()).not.toMatch(/https?:\/\/(?!www\.w3\.org)/)
    }
    expect((await fetch(new URL('/nope', devtools.url))).status).toBe(404)
  })

  it('shows the run waiting for its approval, then answers it through the live agent', async () => {
    const waiting = await until((t) => t.pendingApprovals.length > 0, 'a pending approval')
    expect(waiting.pendingApprovals).toMatchObject([{ toolCallId: 'write-c', toolName: 'write', args: { path: 'c.txt', text: 'a+b' } }])
    expect(waiting.runs[0]!.status).toBe('running')

    const bad = await post(`/api/sessions/${session.sessionId}/approvals/write-c`, { approved: 'yes' })
    expect(bad.status).toBe(400)
    expect(bad.body.error).toMatch(/body.*approved/)
    expect((await post(`/api/sessions/${session.sessionId}/approvals/write-c`, '{"approved":true}', { 'content-type': 'text/plain' })).status).toBe(415)
    expect((await post(`/api/sessions/${session.sessionId}/approvals/write-c`, '{', { 'content-type': 'application/json' })).status).toBe(400)
    const foreign = await post(`/api/sessions/${session.sessionId}/approvals/write-c`, { approved: true }, { 'content-type': 'application/json', origin: 'http://evil.example' })
    expect(foreign.status).toBe(403)
    expect((await post(`/api/sessions/${session.sessionId}/approvals/nope`, { approved: true })).status).toBe(404)
    expect(await post(`/api/sessions/other/approvals/write-c`, { approved: true })).toMatchObject({ status: 409, body: { error: expect.stringMatching(/no live agent holds session 'other'/) } })

    expect(await post(`/api/sessions/${session.sessionId}/approvals/write-c`, { approved: true })).toEqual({ status: 200, body: { answered: true, toolCallId: 'write-c', approved: true } })
    await session.done
    await session.agent.session!.flush()
    const done = await until((t) => t.runs[0]?.status === 'done', 'the run done')
    expect(done.pendingApprovals).toEqual([])
  })

  it('draws the finished run: lanes, overlapping parallel tools, marks, turns', async () => {
    const { status, body } = await get(`/api/sessions/${session.sessionId}`)
    expect(status).toBe(200)
    expect(body.info).toMatchObject({ sessionId: 'demo-session', agentId: 'devtools-demo', live: true })
    const run = (body.timeline as SessionTimeline).runs[0]!
    expect(run).toMatchObject({ status: 'done', stopReason: 'stop', title: 'Read a.txt and b.txt, then write c.txt.' })
    expect(run.lanes.map((l) => l.label)).toEqual(['inputs', 'model', 'read read-a', 'read_slow read-b', 'write write-c'])
    expect(run.lanes[1]!.bars.map((b) => b.status)).toEqual(['ok', 'ok', 'ok'])
    const [a, b] = [run.lanes[2]!.bars[0]!, run.lanes[3]!.bars[0]!]
    expect(a.start).toBeLessThan(b.end!)
    expect(b.start).toBeLessThan(a.end!)
    expect(run.lanes[4]!.bars.map((x) => [x.kind, x.status])).toEqual([['approval', 'ok'], ['tool', 'ok']])
    expect(run.lanes[0]!.marks.map((m) => m.kind)).toEqual(['user', 'steering', 'dequeue', 'user'])
    expect(run.turns.map((t) => [t.inputTokens, t.outputTokens, t.toolCalls])).toEqual([[1200, 80, 2], [1500, 40, 1], [1700, 30, 0]])
    expect(run.turns[0]!.cost).toBeCloseTo((1200 * 3 + 80 * 15) / 1e6)
    expect(run.messages.map((m) => m.message.role)).toEqual(['user', 'assistant', 'toolResult', 'toolResult', 'user', 'assistant', 'toolResult', 'assistant'])
  })

  it('lists and searches sessions, reads records from a position, and says what is wrong with a request', async () => {
    expect((await get('/api/info')).body).toEqual({ storeKind: 'memory', liveSessions: ['demo-session'], opensSessions: false })
    expect((await get('/api/sessions')).body.map((s: { sessionId: string }) => s.sessionId)).toEqual(['demo-session'])
    expect((await get('/api/sessions?q=DEVTOOLS-de')).body).toHaveLength(1)
    expect((await get('/api/sessions?q=zzz')).body).toEqual([])
    const all = (await get(`/api/sessions/${session.sessionId}/records`)).body as { position: number }[]
    const later = (await get(`/api/sessions/${session.sessionId}/records?from=${all[2]!.position}&limit=2`)).body as { position: number }[]
    expect(later).toEqual(all.slice(3, 5))
    expect(await get('/api/sessions?limit=-1')).toEqual({ status: 400, body: { error: "query parameter 'limit' must be a non-negative integer, got '-1'" } })
    expect(await get('/api/sessions/nobody')).toEqual({ status: 404, body: { error: "no session 'nobody' in the memory store" } })
    expect((await get('/api/what')).status).toBe(404)
    expect((await get('/api/sessions/%E0%A4%A')).status).toBe(400)
    // A page of another site that rebound its name to this machine sends its own name as the host.
    const rebound = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const url = new URL('/api/sessions', devtools.url)
      request({ host: url.hostname, port: url.port, path: url.pathname, headers: { host: `evil.example:${url.port}` } }, (res) => {
        let body = ''
        res.on('data', (d) => (body += d)).on('end', () => resolve({ status: res.statusCode!, body }))
      }).on('error', reject).end()
    })
    expect(rebound.status).toBe(403)
    expect(rebound.body).toContain("answers requests for localhost only, not for 'evil.example:")
  })

  it('tails a session as server-sent events from a position (and Last-Event-ID), live', async () => {
    const all = (await get(`/api/sessions/${session.sessionId}/records`)).body as { position: number }[]
    const abort = new AbortController()
    const res = await fetch(new URL(`/api/sessions/${session.sessionId}/events`, devtools.url), { signal: abort.signal, headers: { 'last-event-id': String(all.at(-2)!.position) } })
    expect(res.headers.get('content-type')).toContain('text/event-stream')
    const reader = res.body!.getReader()
    let text = ''
    const ids = () => [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))
    const readUntil = async (n: number) => {
      while (ids().length < n) {
        const { value, done } = await reader.read()
        if (done) throw new Error(`the tail ended after ${ids().length} events`)
        text += new TextDecoder().decode(value)
      }
    }
    await readUntil(1)
    expect(ids()).toEqual([all.at(-1)!.position])
    // A new run appends live.
    session.agent.abort()
    const next = session.agent.prompt('again?')
    await readUntil(2)
    expect(ids()[1]).toBeGreaterThan(all.at(-1)!.position)
    expect(text).toMatch(/event: record\ndata: \{"position":\d+,"at":\d+,"body":\{/)
    abort.abort()
    await next.result.catch(() => undefined)
  })
})
