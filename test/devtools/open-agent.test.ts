/**
 * Answering an approval of a session no live agent here holds: the devtools
 * open it (`openAgent`, here `Agent.open`) when its lease is free, and the run
 * resumes in this process; while another process holds the lease, the answer
 * is refused naming the holder.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Agent } from '../../src/agent/agent.js'
import { serveDevtools, type DevtoolsServer } from '../../src/devtools/index.js'
import type { SessionTimeline } from '../../src/devtools/timeline-model.js'
import { memorySessionStore } from '../../src/sessions/memory-store.js'
import { scriptedSession, sessionOptions, type ScriptedSession } from './scripted-session.js'

const store = memorySessionStore()
let devtools: DevtoolsServer
let held: ScriptedSession

async function untilWaiting(s: ScriptedSession): Promise<void> {
  for (let i = 0; i < 3000 && s.agent.state.pendingApprovals.length === 0; i++) await new Promise((r) => setTimeout(r, 10))
  if (s.agent.state.pendingApprovals.length === 0) throw new Error(`${s.sessionId} never waited for its approval`)
}
const get = async (path: string) => (await fetch(new URL(path, devtools.url))).json() as Promise<any>
const approve = (sessionId: string) =>
  fetch(new URL(`/api/sessions/${sessionId}/approvals/write-c`, devtools.url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"approved":true}' })

beforeAll(async () => {
  // One process left its run waiting and went away (closing its session keeps the approval pending in the log)…
  const gone = await scriptedSession(store, 'left-waiting', 'process-1')
  await untilWaiting(gone)
  await gone.agent.session!.close()
  expect(await gone.done).toMatchObject({ stopReason: 'aborted', error: expect.stringMatching(/^detached/) })
  // …another still holds its session.
  held = await scriptedSession(store, 'held', 'process-2')
  await untilWaiting(held)
  devtools = await serveDevtools({ store, openAgent: (sessionId) => Agent.open({ ...sessionOptions(2), store, sessionId, holder: 'devtools' }) })
})
afterAll(async () => {
  await held?.agent.session?.close()
  await devtools?.close()
  await store.close()
})

describe('serveDevtools({ openAgent })', () => {
  it('refuses to answer for a session another process holds, naming it', async () => {
    const res = await approve('held')
    expect(res.status).toBe(409)
    expect(((await res.json()) as { error: string }).error).toMatch(/^session 'held' is held by 'process-2' \(until .*\): answer from that process/)
    expect(held.agent.state.pendingApprovals).toHaveLength(1)
  })

  it('opens a session nobody holds, answers its approval, lets the run finish here, then gives the session back', async () => {
    expect((await get('/api/sessions/left-waiting')).timeline.pendingApprovals).toHaveLength(1)
    const res = await approve('left-waiting')
    expect(await res.json()).toEqual({ answered: true, toolCallId: 'write-c', approved: true })
    let timeline: SessionTimeline | undefined
    for (let i = 0; i < 1000; i++) {
      timeline = (await get('/api/sessions/left-waiting')).timeline as SessionTimeline
      if (timeline.runs[0]?.status === 'done' && !(await get('/api/info')).liveSessions.includes('left-waiting')) break
      await new Promise((r) => setTimeout(r, 10))
    }
    // Agent.open resumes the suspended run (`runResumed`): one run, which finishes here.
    expect(timeline!.runs).toHaveLength(1)
    const run = timeline!.runs[0]!
    expect(run).toMatchObject({ status: 'done', stopReason: 'stop', pendingApprovals: [] })
    expect(run.lanes.find((l) => l.id === 'tool:write-c')!.marks.map((m) => m.label)).toEqual(['approval requested for write', 'approved by resolveApproval'])
    expect(run.lanes.find((l) => l.id === 'inputs')!.marks.map((m) => m.label)).toContain('resumed')
    expect(run.messages.at(-1)!.message).toMatchObject({ role: 'assistant', content: [{ type: 'text', text: 'Done: c.txt holds a and b.' }] })
    // The lease is free again: another process may open the session.
    expect(await store.acquireLease('left-waiting', 'someone-else', 1000)).toMatchObject({ acquired: true })
  })
})
