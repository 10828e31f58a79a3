/**
 * One writer per session (issue 15), with real processes: a second process
 * that opens a busy session gets the documented error, or waits and goes on
 * once the first closes or dies; a writer that stalls past its lease is
 * fenced off (nothing it appends after the takeover lands); runs never
 * interleave in the log. On PostgreSQL, 100 sessions are taken by 4
 * processes at once: every log decodes and every session completes exactly
 * once. (PGlite serves one process: a second process is refused the
 * directory itself.)
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AgentLogEntry } from '../../src/agent/agent-log.js'
import type { AgentMessage } from '../../src/types/message.js'
import { buildChildScripts, type ChildBuild } from '../support/child-build.js'
import { describePostgres } from '../support/postgres-cluster.js'
import { decodeStored, interleavedRuns, plain, readExecutions, repeatedRuns, transcriptProblems } from './crash/checks.js'
import type { ChildConfig, StoreConfig } from './crash/child.js'
import { killAllChildren, startChild, type ChildHandle, type ChildLine } from './crash/harness.js'

let build: ChildBuild
let dir: string
beforeAll(() => {
  build = buildChildScripts(['test/sessions/crash'])
  dir = mkdtempSync(join(tmpdir(), 'rxagent-lease-'))
}, 60_000)
// Removing databases on a busy disk takes a while.
afterAll(() => {
  killAllChildren()
  build?.remove()
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
}, 120_000)

const start = (config: Omit<ChildConfig, 'executions'> & { readonly executions?: string }, onLine?: (line: ChildLine, child: ChildHandle) => void) =>
  startChild(build.script('test/sessions/crash/child.ts'), { executions: join(dir, 'executions.jsonl'), ...config }, onLine)
const line = (child: ChildHandle, t: string) => child.lines.find((l) => l.t === t)
const isOpened = (l: ChildLine) => l.t === 'opened'

/** The stored log, read by a fresh process: decoded, runs not interleaved. */
async function storedLog(store: StoreConfig, sessionId: string): Promise<readonly AgentLogEntry[]> {
  const reader = start({ mode: 'read', store, sessionId })
  await reader.exited()
  const raw = line(reader, 'raw')
  expect(raw, reader.describe()).toBeDefined()
  const { log, problems } = decodeStored(raw!.records)
  expect([...problems, ...interleavedRuns(log)]).toEqual([])
  return log
}

describe('one writer per session: PGlite (one process per directory)', () => {
  it('a second process is refused the directory while the first has it, and opens it once the first has closed', async () => {
    const store: StoreConfig = { kind: 'pglite', dataDir: join(dir, 'pglite-two') }
    const first = start({ mode: 'run', store, sessionId: 's', extraRuns: 1, holdOpen: true })
    await first.waitFor((l) => l.t === 'done', 'its run')
    const second = start({ mode: 'run', store, sessionId: 's', extraRuns: 1 })
    const refused = await second.waitFor((l) => l.t === 'error', 'an error')
    expect(await second.exited()).toMatchObject({ code: 1 })
    expect(String(refused.message)).toContain(String(first.pid))
    expect(String(refused.message)).toMatch(/PostgreSQL/i)
    first.send('close')
    expect(await first.exited()).toMatchObject({ code: 0 })
    const third = start({ mode: 'run', store, sessionId: 's', extraRuns: 1 })
    expect(await third.exited(), third.describe()).toMatchObject({ code: 0 })
    const log = await storedLog(store, 's')
    expect(log.filter((e) => e.type === 'agentEnd')).toHaveLength(2)
  }, 120_000)

  it('after the holder is killed mid-run, the next process waits out its lease, settles the run and finishes it', async () => {
    const store: StoreConfig = { kind: 'pglite', dataDir: join(dir, 'pglite-takeover') }
    const lease = { ttlMs: 6000, onBusy: 'wait' as const, waitMs: 60_000 }
    const first = start({ mode: 'run', store, sessionId: 's', extraRuns: 1, lease }, (l, child) => l.t === 'delta' && l.n === 15 && child.kill())
    await first.exited()
    expect(first.killed, first.describe()).toBe(true)
    const second = start({ mode: 'run', store, sessionId: 's', extraRuns: 0, lease })
    expect(await second.exited(), second.describe()).toMatchObject({ code: 0 })
    const opened = line(second, 'opened')!
    const settledLog = opened.log as readonly AgentLogEntry[]
    expect(settledLog.at(-1)).toMatchObject({ type: 'runFailed' })
    const log = await storedLog(store, 's')
    expect(transcriptProblems(line(second, 'done')!.messages as readonly AgentMessage[])).toEqual([])
    // The interrupted run, settled by runFailed; then continue()'s run, to the end.
    expect(log.filter((e) => e.type === 'runStart').map((e) => e.type === 'runStart' && e.prompts.length)).toEqual([1, 0])
    expect(log.filter((e) => e.type === 'runFailed')).toHaveLength(1)
    expect(log.at(-1)).toMatchObject({ type: 'agentEnd', stopReason: 'stop' })
  }, 120_000)
})

describePostgres('one writer per session: PostgreSQL (many processes)', (cluster) => {
  const pg = async (): Promise<StoreConfig> => ({ kind: 'postgres', connectionString: await cluster().createDatabase() })

  it("a second opener gets SessionLeaseError naming the holder ('error'), or waits until the first closes ('wait')", async () => {
    const store = await pg()
    const first = start({ mode: 'run', store, sessionId: 's', extraRuns: 1, holdOpen: true, holder: 'first-holder' })
    await first.waitFor((l) => l.t === 'done', 'its run')
    const refused = start({ mode: 'run', store, sessionId: 's', extraRuns: 1, lease: { onBusy: 'error' } })
    const error = await refused.waitFor((l) => l.t === 'openError', 'the busy error')
    expect(error.name).toBe('SessionLeaseError')
    expect(String(error.message)).toContain('first-holder')
    expect(await refused.exited()).toMatchObject({ code: 3 })
    const waiting = start({ mode: 'run', store, sessionId: 's', extraRuns: 1, lease: { onBusy: 'wait', waitMs: 60_000 } })
    await waiting.waitFor((l) => l.t === 'raw', 'its read')
    // Give it time to try (it must keep waiting: nothing here depends on how long that takes).
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(waiting.lines.some(isOpened), waiting.describe()).toBe(false)
    first.send('close')
    expect(await first.exited()).toMatchObject({ code: 0 })
    expect(await waiting.exited(), waiting.describe()).toMatchObject({ code: 0 })
    const firstLog = line(first, 'done')!.log as readonly AgentLogEntry[]
    const log = await storedLog(store, 's')
    expect(plain(log.slice(0, firstLog.length))).toEqual(plain(firstLog))
    expect(log.filter((e) => e.type === 'agentEnd')).toHaveLength(2)
  }, 120_000)

  it('a writer stalled past its lease (SIGSTOP) is fenced: the next one takes over, and nothing the stalled one writes after that lands', async () => {
    const store = await pg()
    const lease = { ttlMs: 1000, onBusy: 'wait' as const, waitMs: 60_000 }
    // It never closes its session: once fenced off, nothing of the session (a lease renewal) may keep it alive.
    const stalled = start({ mode: 'run', store, sessionId: 's', extraRuns: 1, lease, chunkDelayMs: 20, closeSession: false }, (l, child) => l.t === 'delta' && l.n === 12 && child.signal('SIGSTOP'))
    await stalled.waitFor((l) => l.t === 'delta' && l.n === 12, 'its 12th delta')
    const next = start({ mode: 'run', store, sessionId: 's', extraRuns: 1, lease, holdOpen: true })
    const done = await next.waitFor((l) => l.t === 'done', 'its run')
    stalled.signal('SIGCONT')
    const ended = await stalled.exited()
    const takenOver = decodeStored(line(next, 'raw')!.records).log.length
    next.send('close')
    expect(await next.exited()).toMatchObject({ code: 0 })
    const log = await storedLog(store, 's')
    expect(isDeepStrictEqual(plain(log), plain(done.log)), `the stalled writer (exit ${JSON.stringify(ended)}) changed the log after the takeover`).toBe(true)
    const lateAcks = stalled.lines.filter((l) => l.t === 'ack' && (l.seq as number) > takenOver)
    expect(lateAcks, stalled.describe()).toEqual([])
    expect(stalled.lines.some((l) => l.t === 'error' || (l.t === 'runEnd' && l.stopReason === 'error')), stalled.describe()).toBe(true)
  }, 120_000)

  it('100 sessions taken by 4 processes at once: every log decodes, every session completes exactly once', async () => {
    const store = await pg()
    const ids = Array.from({ length: 100 }, (_, i) => `many-${i}`)
    const shuffled = (k: number) => ids.map((id, i) => [(i * 37 + k * 11) % 101, id] as const).sort((a, b) => a[0] - b[0]).map(([, id]) => id)
    const executions = join(dir, 'executions-many.jsonl')
    const workers = [0, 1, 2, 3].map((k) => start({ mode: 'worker', store, executions, script: 'short', chunkDelayMs: 1, sessionIds: shuffled(k), concurrency: 3 }))
    for (const w of workers) expect(await w.exited(120_000), w.describe()).toMatchObject({ code: 0 })
    const completed = workers.flatMap((w) => w.lines.filter((l) => l.t === 'completed').map((l) => l.sessionId as string))
    const errors = workers.flatMap((w) => w.lines.filter((l) => l.t === 'error'))
    expect(errors).toEqual([])
    expect([...completed].sort()).toEqual([...ids].sort())
    const reader = start({ mode: 'read', store, sessionIds: ids })
    expect(await reader.exited(), reader.describe()).toMatchObject({ code: 0 })
    const raws = reader.lines.filter((l) => l.t === 'raw')
    expect(raws.map((l) => l.sessionId)).toEqual(ids)
    for (const raw of raws) {
      const { log, problems } = decodeStored(raw.records)
      expect([...problems, ...interleavedRuns(log)], String(raw.sessionId)).toEqual([])
      expect(log.filter((e) => e.type === 'runStart'), String(raw.sessionId)).toHaveLength(1)
      expect(log.filter((e) => e.type === 'agentEnd' && e.stopReason === 'stop'), String(raw.sessionId)).toHaveLength(1)
      expect(transcriptProblems(log.flatMap((e) => (e.type === 'messageEnd' ? [e.message] : []))), String(raw.sessionId)).toEqual([])
    }
    expect([...repeatedRuns(readExecutions(executions))]).toEqual([])
  }, 240_000)
})
