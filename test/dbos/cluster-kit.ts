/** What the DBOS cluster tests share: worker processes to start and kill, the ledger, and the checks of a session's log. */
import { spawn, type ChildProcess } from 'node:child_process'
import pg from 'pg'
import { expect } from 'vitest'
import { decodeAgentLog, type AgentLogEntry } from '../../src/agent/agent-log.js'
import type { SessionStore } from '../../src/agent/session-store.js'
import type { ChildBuild } from '../support/child-build.js'

/** A worker process. */
export interface WorkerProcess {
  readonly workerId: string
  readonly pid: number
  readonly child: ChildProcess
  readonly exited: Promise<void>
}

export interface ClusterConfig {
  readonly pg: string
  readonly deadAfterMs: number
  readonly leaseTtlMs: number
  readonly concurrency: number
}

/** Starts a worker process; resolves once it has joined the cluster. */
export function startWorkerProcess(build: ChildBuild, config: ClusterConfig, workerId: string): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['--enable-source-maps', build.script('test/dbos/children/worker.ts'), JSON.stringify({ ...config, workerId })], { stdio: ['ignore', 'pipe', 'pipe'] })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  let err = ''
  child.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)))
  return new Promise((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => reject(new Error(`worker ${workerId} did not start in 60 s: ${err}`)), 60_000)
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString()
      if (out.includes('ready ')) {
        clearTimeout(timer)
        resolve({ workerId, pid: child.pid!, child, exited })
      }
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`worker ${workerId} exited (${code}) before it was ready: ${err}`))
    })
  })
}

/** SIGKILL, and wait until the process is gone. */
export async function kill(worker: WorkerProcess): Promise<void> {
  worker.child.kill('SIGKILL')
  await worker.exited
}

/** Creates the ledger the workers' model and tools write to. */
export async function createLedger(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query('CREATE TABLE IF NOT EXISTS dbos_ledger (id bigserial PRIMARY KEY, kind text, session_id text, key text, phase text, pid integer, at timestamptz)')
  } finally {
    await client.end()
  }
}

export interface LedgerRow {
  readonly kind: string
  readonly session_id: string
  readonly key: string
  readonly phase: string
  readonly pid: number
  readonly at: Date
}

export async function readLedger(url: string): Promise<readonly LedgerRow[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query<LedgerRow>('SELECT kind, session_id, key, phase, pid, at FROM dbos_ledger ORDER BY id')).rows
  } finally {
    await client.end()
  }
}

/**
 * Each model call and tool call completed once, except where the process
 * that completed it was killed before DBOS recorded it (the documented
 * in-flight step): every completion but the last of a key is by a killed
 * process. Returns how many executions ran again.
 */
export function checkExecutedOnce(rows: readonly LedgerRow[], killed: ReadonlySet<number>): number {
  const dones = new Map<string, LedgerRow[]>()
  for (const row of rows) if (row.phase === 'done') dones.set(row.key, [...(dones.get(row.key) ?? []), row])
  let again = 0
  for (const [key, list] of dones) {
    for (const early of list.slice(0, -1)) {
      expect(killed.has(early.pid), `${key} completed more than once; an earlier completion by pid ${early.pid}, which was not killed`).toBe(true)
      again++
    }
  }
  // An execution that started and never completed was in a killed process.
  for (const row of rows) if (row.phase === 'start' && !dones.has(row.key)) expect(killed.has(row.pid), `${row.key} started in pid ${row.pid} and never completed`).toBe(true)
  return again
}

/**
 * No two processes executed steps of one session at overlapping times (at
 * most one live run per session): each execution spans its start to its
 * completion (an execution a kill cut short, its start alone).
 */
export function checkOneLiveRun(rows: readonly LedgerRow[]): void {
  const executions = new Map<string, { session: string; pid: number; from: number; to: number }>()
  for (const row of rows) {
    const id = `${row.key}@${row.pid}`
    const t = row.at.getTime()
    const e = executions.get(id)
    if (e === undefined) executions.set(id, { session: row.session_id, pid: row.pid, from: t, to: t })
    else e.to = Math.max(e.to, t)
  }
  const bySession = new Map<string, { pid: number; from: number; to: number }[]>()
  for (const e of executions.values()) bySession.set(e.session, [...(bySession.get(e.session) ?? []), e])
  for (const [session, list] of bySession) {
    list.sort((a, b) => a.from - b.from)
    // Sweep: the latest end so far, and whose it was; an execution of another process starting before it overlaps.
    let end = -Infinity
    let endPid = -1
    for (const e of list) {
      if (e.pid !== endPid) expect(e.from >= end, `session ${session}: pids ${endPid} and ${e.pid} executed its steps at overlapping times`).toBe(true)
      if (e.to >= end) {
        end = e.to
        endPid = e.pid
      }
    }
  }
}

/** The session's log entries, decoded. */
export async function logOf(store: SessionStore, sessionId: string): Promise<readonly AgentLogEntry[]> {
  const records = await store.read(sessionId)
  return decodeAgentLog(
    records.filter((r) => r.body.type !== 'stream').map((r) => r.body),
    'test',
  )
}

/** One logical transcript: each run started and ended once, no message twice, every tool call answered exactly once. */
export function checkTranscript(sessionId: string, log: readonly AgentLogEntry[]): void {
  const starts = log.filter((e) => e.type === 'runStart').length
  const ends = log.filter((e) => e.type === 'agentEnd' || e.type === 'runFailed').length
  expect(ends, `session ${sessionId}: runs started ${starts}, ended ${ends}`).toBe(starts)
  expect(log.some((e) => e.type === 'runFailed'), `session ${sessionId} has a failed run`).toBe(false)
  const messages = log.flatMap((e) => (e.type === 'messageEnd' ? [e.message] : []))
  const calls = messages.flatMap((m) => (m.role === 'assistant' ? m.content.flatMap((c) => (c.type === 'toolCall' ? [c.id] : [])) : []))
  const results = messages.flatMap((m) => (m.role === 'toolResult' ? [m.toolCallId] : []))
  expect(new Set(calls).size, `session ${sessionId}: a tool call id twice`).toBe(calls.length)
  expect([...results].sort(), `session ${sessionId}: tool results`).toEqual([...calls].sort())
  const assistantIds = messages.flatMap((m) => (m.role === 'assistant' ? [m.responseId ?? ''] : []))
  expect(new Set(assistantIds).size, `session ${sessionId}: an assistant message twice`).toBe(assistantIds.length)
}
