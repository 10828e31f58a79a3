/**
 * rxagent/dbos on a real PostgreSQL with real worker processes killed with
 * SIGKILL: 200 sessions over 3 workers through 20+ kills (each model call
 * and tool call completed once but for the step in flight at a kill, one
 * live run per session, one logical transcript each); an approval answered
 * after the whole cluster restarted; steering and follow-ups from another
 * process at any moment; an abort from another process; a reader following a session over SSE through a
 * crash.
 */
import { EventSource } from 'eventsource'
import pg from 'pg'
import { DBOSClient } from '@dbos-inc/dbos-sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dbosAgentClient } from '../../src/dbos/index.js'
import type { DbosAgentClient, DbosRunOutcome } from '../../src/dbos/index.js'
import { serveSessions } from '../../src/sessions/serve-sessions.js'
import type { SessionRecord } from '../../src/agent/session-store.js'
import { recordTypes } from '../sessions/sse-support.js'
import { buildChildScripts, type ChildBuild } from '../support/child-build.js'
import { describePostgres } from '../support/postgres-cluster.js'
import { checkExecutedOnce, checkOneLiveRun, checkTranscript, createLedger, kill, logOf, readLedger, startWorkerProcess, type ClusterConfig, type WorkerProcess } from './cluster-kit.js'

const seed = Number(process.env['RXAGENT_DBOS_SEED'] ?? Math.floor(Math.random() * 2 ** 31))
let state = seed
/** A seeded random number in [0, 1) (mulberry32): a failure names its seed. */
const random = () => {
  state = (state + 0x6d2b79f5) | 0
  let t = Math.imul(state ^ (state >>> 15), 1 | state)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describePostgres('rxagent/dbos: a cluster of worker processes on PostgreSQL', (cluster) => {
  let build: ChildBuild
  const workers: WorkerProcess[] = []
  const clients: DbosAgentClient[] = []
  beforeAll(() => {
    build = buildChildScripts(['test/dbos/children'])
  }, 120_000)
  afterAll(async () => {
    for (const w of workers) w.child.kill('SIGKILL')
    for (const c of clients) await c.close().catch(() => undefined)
    build?.remove()
  })

  async function setUp(): Promise<{ config: ClusterConfig; client: DbosAgentClient }> {
    const url = await cluster().createDatabase()
    await createLedger(url)
    const config: ClusterConfig = { pg: url, deadAfterMs: 3000, leaseTtlMs: 2000, concurrency: 4 }
    const client = await dbosAgentClient({ pg: url })
    clients.push(client)
    return { config, client }
  }
  const start = async (config: ClusterConfig, id: string) => {
    const w = await startWorkerProcess(build, config, id)
    workers.push(w)
    return w
  }

  it(`200 sessions on 3 workers through 20 SIGKILLs: every run completes, each step done once but the one in flight, one live run per session (seed ${seed})`, async () => {
    const { config, client } = await setUp()
    let live = await Promise.all(['w0', 'w1', 'w2'].map((id) => start(config, id)))
    const submitted: Promise<DbosRunOutcome>[] = []
    let wave: Promise<unknown> = Promise.resolve()
    let waves = 0
    let waveDone = true
    /** A prompt for every session; another wave when the last has ended and the kills go on. */
    const queueWave = async () => {
      waves++
      waveDone = false
      const runs = await Promise.all(Array.from({ length: 200 }, (_, i) => client.prompt(`s${i}`, 'ledger', `task ${waves}.${i}`)))
      const outcomes = runs.map((r) => client.outcome(r.runId, { timeoutMs: 300_000 }))
      submitted.push(...outcomes)
      wave = Promise.allSettled(outcomes).then(() => (waveDone = true))
    }
    await queueWave()
    const killed = new Set<number>()
    let kills = 0
    let restarts = 0
    while (kills < 20) {
      await sleep(400 + Math.floor(random() * 800))
      if (waveDone) await queueWave()
      const victim = live[Math.floor(random() * live.length)]!
      await kill(victim)
      killed.add(victim.pid)
      kills++
      // Half come back under their own id (they resume their runs at once); the others are replaced by a new worker, and a live worker recovers the dead one's runs.
      const id = random() < 0.5 ? victim.workerId : `w${3 + restarts++}`
      live = [...live.filter((w) => w !== victim), await start(config, id)]
    }
    await wave
    const ended = await Promise.all(submitted)
    expect(ended.filter((o) => o.stopReason !== 'stop'), 'runs that did not end with stop').toEqual([])
    const answer = Array.from({ length: 12 }, (_, k) => `word${k} `).join('')
    for (let i = 0; i < 200; i++) {
      const log = await logOf(client.store, `s${i}`)
      checkTranscript(`s${i}`, log)
      expect(log.filter((e) => e.type === 'runStart'), `s${i}: one run per wave`).toHaveLength(waves)
      const texts = log.flatMap((e) => (e.type === 'messageEnd' && e.message.role === 'assistant' ? e.message.content.flatMap((c) => (c.type === 'text' ? [c.text] : [])) : []))
      expect(texts, `s${i}: the answers`).toEqual(Array.from({ length: waves }, () => answer))
    }
    const ledger = await readLedger(config.pg)
    const again = checkExecutedOnce(ledger, killed)
    checkOneLiveRun(ledger)
    console.info(`dbos cluster (seed ${seed}): ${kills} kills, ${waves} waves of 200 runs, ${again} steps in flight at a kill ran again, ${ledger.filter((r) => r.phase === 'done').length} completed executions`)
    await Promise.all(live.map((w) => kill(w)))
  }, 420_000)

  it('an approval asked on one worker, the whole cluster restarted, the decision sent from another process: the run completes on a new worker, the gated tool runs once', async () => {
    const { config, client } = await setUp()
    const a = await start(config, 'ga')
    const { runId } = await client.prompt('g1', 'gated', 'deploy it')
    for (let i = 0; !(await logOf(client.store, 'g1').catch(() => [])).some((e) => e.type === 'approvalRequested'); i++) {
      expect(i, 'no approval was requested').toBeLessThan(300)
      await sleep(100)
    }
    await kill(a)
    // Not yet: nobody runs the session.
    const b = await start(config, 'gb')
    const c = await start(config, 'gc')
    expect(await client.resolveApproval('g1', 'nope', { approved: true })).toBe(false)
    expect(await client.resolveApproval('g1', 'd1', { approved: true })).toBe(true)
    const outcome = await client.outcome(runId, { timeoutMs: 60_000 })
    expect(outcome.stopReason).toBe('stop')
    const log = await logOf(client.store, 'g1')
    checkTranscript('g1', log)
    expect(log.filter((e) => e.type === 'approvalDecided')).toMatchObject([{ toolCallId: 'd1', decision: { approved: true }, by: 'approveTool' }])
    const ledger = await readLedger(config.pg)
    expect(ledger.filter((r) => r.key === 'g1:tool:d1')).toHaveLength(1)
    await Promise.all([kill(b), kill(c)])
  }, 180_000)

  it('steering and follow-ups sent from another process at any moment (while the run streams, as it ends, across a worker kill, after it ended) are DBOS messages to the open run, each reaching the session exactly once', async () => {
    const { config, client } = await setUp()
    let w = await start(config, 'in')
    const first = await client.prompt('slowIn', 'ledger', 'begin')
    const runIds = new Set([first.runId])
    const sent: string[] = []
    let toOpenRun = 0
    const killed = new Set<number>()
    const send = async (i: number, kind: 'steer' | 'followUp') => {
      const text = `input ${i}`
      sent.push(text)
      const { runId } = await client[kind]('slowIn', text)
      if (runIds.has(runId)) toOpenRun++
      runIds.add(runId)
    }
    for (let i = 0; i < 16; i++) {
      await sleep(Math.floor(random() * 300))
      await send(i, i % 2 === 0 ? 'steer' : 'followUp')
      if (i === 8) {
        killed.add(w.pid)
        await kill(w)
        w = await start(config, 'in')
      }
    }
    const settle = async () => {
      const outcomes = await Promise.all([...runIds].map((id) => client.outcome(id, { timeoutMs: 120_000 })))
      expect(outcomes.filter((o) => o.stopReason !== 'stop'), 'runs that did not end with stop').toEqual([])
    }
    await settle()
    // Every run has ended: a follow-up now starts a run of its own.
    const before = runIds.size
    await send(16, 'followUp')
    expect(runIds.size, 'a follow-up after the last run ended queues a new run').toBe(before + 1)
    await settle()
    const log = await logOf(client.store, 'slowIn')
    checkTranscript('slowIn', log)
    const users = log.flatMap((e) => (e.type === 'messageEnd' && e.message.role === 'user' ? e.message.content.flatMap((c) => (c.type === 'text' ? [c.text] : [])) : []))
    expect(users.filter((u) => u.startsWith('input ')).sort(), 'each input once in the transcript').toEqual([...sent].sort())
    // The inputs that found a run open went as DBOS messages, each received (consumed) once.
    const db = new pg.Client({ connectionString: config.pg })
    await db.connect()
    try {
      const r = await db.query<{ total: number; consumed: number }>(`SELECT count(*)::int AS total, count(*) FILTER (WHERE consumed)::int AS consumed FROM dbos.notifications WHERE topic = 'rxagent.input'`)
      expect(r.rows[0]).toEqual({ total: toOpenRun, consumed: toOpenRun })
    } finally {
      await db.end()
    }
    expect(toOpenRun, 'some inputs reached an open run').toBeGreaterThan(0)
    checkExecutedOnce(await readLedger(config.pg), killed)
    await kill(w)
  }, 240_000)

  it('a run cancelled while queued (DBOS cancelWorkflow) takes no input: a follow-up then starts a run of its own', async () => {
    const { config, client } = await setUp()
    // No worker yet: the run stays queued, and is cancelled there.
    const { runId } = await client.prompt('c1', 'ledger', 'never runs')
    const dbos = await DBOSClient.create({ systemDatabaseUrl: config.pg, applicationName: 'rxagent' })
    try {
      await dbos.cancelWorkflow(runId)
    } finally {
      await dbos.destroy()
    }
    expect(await client.outcome(runId, { timeoutMs: 10_000 })).toMatchObject({ stopReason: 'aborted' })
    const next = await client.followUp('c1', 'after the cancel')
    expect(next.runId, 'the follow-up was sent to the cancelled run').not.toBe(runId)
    const w = await start(config, 'cw')
    expect((await client.outcome(next.runId, { timeoutMs: 60_000 })).stopReason).toBe('stop')
    const log = await logOf(client.store, 'c1')
    checkTranscript('c1', log)
    expect(log.flatMap((e) => (e.type === 'messageEnd' && e.message.role === 'user' ? e.message.content.flatMap((c) => (c.type === 'text' ? [c.text] : [])) : []))).toEqual(['after the cancel'])
    await kill(w)
  }, 120_000)

  it('abort from another process: a run streaming on a worker ends aborted with a valid transcript, one waiting for an approval too, and the session goes on with its next prompt', async () => {
    const { config, client } = await setUp()
    const w = await start(config, 'ab')
    const waitFor = async (sessionId: string, what: string, seen: (records: readonly SessionRecord[]) => boolean) => {
      for (let i = 0; !seen(await client.store.read(sessionId).catch(() => [])); i++) {
        expect(i, `${sessionId}: ${what}`).toBeLessThan(1500)
        await sleep(20)
      }
    }
    /** Prompts `sessionId`'s agent, aborts its run once `seen` holds, and checks it ended aborted with a valid transcript. */
    const abortedOnce = async (sessionId: string, agent: string, prompt: string, what: string, seen: (records: readonly SessionRecord[]) => boolean) => {
      const run = await client.prompt(sessionId, agent, prompt)
      await waitFor(sessionId, what, seen)
      expect(await client.abort(sessionId)).toBe(true)
      expect((await client.outcome(run.runId, { timeoutMs: 30_000 })).stopReason).toBe('aborted')
      const log = await logOf(client.store, sessionId)
      checkTranscript(sessionId, log)
      expect(log.filter((e) => e.type === 'agentEnd')).toMatchObject([{ stopReason: 'aborted' }])
    }
    await abortedOnce('slowAb', 'ledger', 'hold', 'no text streamed', (records) => records.some((r) => r.body.type === 'stream' && r.body.chunks.some((c) => c.type === 'textDelta')))
    await abortedOnce('gAb', 'gated', 'deploy it', 'no approval was requested', (records) => records.some((r) => r.body.type === 'approvalRequested'))

    const next = await client.prompt('slowAb', 'ledger', 'again')
    expect((await client.outcome(next.runId, { timeoutMs: 60_000 })).stopReason).toBe('stop')
    checkTranscript('slowAb', await logOf(client.store, 'slowAb'))
    expect(await client.abort('slowAb'), 'nothing left to abort').toBe(false)
    await kill(w)
  }, 180_000)

  it('a reader following a session over SSE through a worker crash sees one stream: no position twice, every log entry once, in order, the answer cut by the crash followed by a retry marker and its new attempt', async () => {
    const { config, client } = await setUp()
    let w = await start(config, 'sse')
    const server = await serveSessions(client.store)
    const seen: SessionRecord[] = []
    let source: EventSource | undefined
    try {
      const { runId } = await client.prompt('slow1', 'ledger', 'stream it')
      // The reader connects once the session exists (an unknown session is a 404, which ends an EventSource), and reads it from its start.
      for (let i = 0; (await client.store.info('slow1')) === undefined; i++) {
        expect(i, 'the session was not created').toBeLessThan(600)
        await sleep(10)
      }
      source = new EventSource(`${server.url}/sessions/${encodeURIComponent('slow1')}/events`)
      for (const type of recordTypes) source.addEventListener(type, (event) => seen.push(JSON.parse(event.data) as SessionRecord))
      // Killed while the second answer streams: a text delta of it has reached the reader.
      for (let i = 0; !seen.some((r) => r.body.type === 'stream' && r.body.chunks.some((c) => c.type === 'textDelta')); i++) {
        expect(i, `no text streamed: ${JSON.stringify(seen.map((r) => r.body.type)) }`).toBeLessThan(600)
        await sleep(10)
      }
      await kill(w)
      w = await start(config, 'sse')
      expect((await client.outcome(runId, { timeoutMs: 60_000 })).stopReason).toBe('stop')
      const log = await logOf(client.store, 'slow1')
      for (let i = 0; seen.filter((r) => r.body.type !== 'stream').length < log.length; i++) {
        expect(i, 'the reader did not get the whole log').toBeLessThan(500)
        await sleep(20)
      }
      const positions = seen.map((r) => r.position)
      expect(positions, 'positions only grow').toEqual([...positions].sort((x, y) => x - y))
      expect(new Set(positions).size, 'no position twice').toBe(positions.length)
      expect(seen.flatMap((r) => (r.body.type === 'stream' ? [] : [r.body]))).toEqual(log)
      checkTranscript('slow1', log)
      // The answer streaming at the kill is asked again: the reader is told to drop what it had of it.
      const chunks = seen.flatMap((r) => (r.body.type === 'stream' ? r.body.chunks : []))
      const retry = chunks.findIndex((c) => c.type === 'retry')
      expect(retry, 'a retry marker').toBeGreaterThan(0)
      expect(chunks[retry + 1]).toMatchObject({ type: 'messageStart' })
    } finally {
      source?.close()
      await server.close()
      await kill(w)
    }
  }, 180_000)
})

describe('rxagent/dbos without a cluster', () => {
  it('says what is wrong with bad options before connecting', async () => {
    await expect(dbosAgentClient({ pg: 42 as never })).rejects.toThrow(/dbosAgentClient: invalid options at pg/)
  })
})
