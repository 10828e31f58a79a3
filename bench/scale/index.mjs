// SCALE: agent runs as DBOS workflows (rxagent/dbos) on 1, 2 and 4 worker processes sharing one
// PostgreSQL, and the per-step overhead of DBOS over the plain durable session (overhead.mjs).
//
// Throughput, for each W: a fresh database in the cluster; W worker processes (worker.mjs, each
// `startWorker({ concurrency: 4 })` with the default queue polling, 250 ms); a short warm-up (one run
// per worker slot, each on its own session); then this process's `dbosAgentClient` queues `runs`
// runs over `sessions` sessions (the sessions' first runs, then their second runs…: a session's runs
// run one at a time, in order) and waits for every one to be recorded done. Wall time: from the first
// enqueue to the last run's completion as DBOS records it. A run is 2 model turns and 1 tool call
// (agent.mjs); turns/s counts model turns (model calls). CPU over the same window: each worker's own
// (process.cpuUsage), the PostgreSQL server's (/proc: postmaster, backends and reaped backends) and
// this process's (the client); "busy" is their sum over wall time × cores.
import { spawn } from 'node:child_process'
import { cpus, loadavg } from 'node:os'
import { dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { agentName, perRun } from './agent.mjs'
import { machineBusy, machineTicks, serverCpuMs } from './cpu.mjs'

const here = dirname(fileURLToPath(import.meta.url))
export const workerCounts = { full: [1, 2, 4], smoke: [1] }
export const sizes = { full: { runs: 120, sessions: 60, overheadRuns: 20, warmups: 3 }, smoke: { runs: 6, sessions: 3, overheadRuns: 2, warmups: 1 } }
const concurrency = 4

async function admin(url, sql) {
  const client = new pg.Client({ connectionString: url })
  // A connection the server ends (the next stage's DROP … WITH (FORCE)) is an 'error' event: unheard, it kills this process.
  client.on('error', () => undefined)
  await client.connect()
  try {
    await client.query(sql)
  } finally {
    await client.end()
  }
}

/** A fresh database of the cluster at `url`: its connection string and `drop()`. */
async function database(url, name) {
  await admin(url, `CREATE DATABASE ${name}`)
  const target = new URL(url)
  target.pathname = `/${name}`
  return { url: target.href, drop: () => admin(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) }
}

/** A worker process: `send(command)` resolves to its next JSON line; `kill()`. */
function spawnWorker(url, workerId, pollingIntervalMs) {
  const child = spawn(process.execPath, [join(here, 'worker.mjs'), url, workerId, String(concurrency), ...(pollingIntervalMs === undefined ? [] : [String(pollingIntervalMs)])], { stdio: ['pipe', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (d) => {
    stderr = (stderr + d).slice(-4000)
    // RXAGENT_BENCH_SCALE_STDERR=1: the workers' own logs (DBOS's warnings: contention, polling backoff).
    if (process.env.RXAGENT_BENCH_SCALE_STDERR) process.stderr.write(`[${workerId}] ${d}`)
  })
  const waiting = []
  const lines = []
  createInterface({ input: child.stdout }).on('line', (line) => {
    let parsed
    try {
      parsed = JSON.parse(line)
    } catch {
      return
    }
    const w = waiting.shift()
    if (w) w.resolve(parsed)
    else lines.push(parsed)
  })
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)))
  exited.then((code) => {
    for (const w of waiting.splice(0)) w.reject(new Error(`SCALE worker ${workerId} exited (${code}):\n${stderr}`))
  })
  const next = () => (lines.length > 0 ? Promise.resolve(lines.shift()) : new Promise((resolve, reject) => waiting.push({ resolve, reject })))
  return {
    ready: next(),
    send(command) {
      child.stdin.write(`${command}\n`)
      return next()
    },
    exited,
    kill: () => child.exitCode === null && child.kill('SIGKILL'),
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const cpuMs = () => {
  const c = process.cpuUsage()
  return (c.user + c.system) / 1000
}

/** Queues `perSession` runs on each of `sessionIds` (round by round) and waits until DBOS records them all done. */
async function runAll(client, pool, sessionIds, perSession) {
  const t0 = Date.now()
  const ids = []
  for (let round = 0; round < perSession; round++) ids.push(...(await Promise.all(sessionIds.map((s) => client.prompt(s, agentName, 'go')))).map((x) => x.runId))
  const enqueuedMs = Date.now() - t0
  let last
  for (let i = 0; ; i++) {
    const { rows } = await pool.query(`SELECT count(*)::int AS done, max(updated_at) AS last FROM dbos.workflow_status WHERE workflow_uuid = ANY($1) AND status NOT IN ('PENDING', 'ENQUEUED', 'DELAYED')`, [ids])
    if (rows[0].done === ids.length) {
      last = Number(rows[0].last)
      break
    }
    if (i > 6000) throw new Error(`SCALE: ${ids.length - rows[0].done} of ${ids.length} runs not done after 120 s`)
    await sleep(20)
  }
  // The outcomes (all recorded: no waiting) and the logs: every run ended its turn, every session has its tool results.
  const outcomes = await Promise.all(ids.map((id) => client.outcome(id, { timeoutMs: 10_000 })))
  const bad = outcomes.find((o) => o.stopReason !== 'stop')
  if (bad !== undefined) throw new Error(`SCALE: a run ended with ${JSON.stringify(bad)}`)
  for (const s of sessionIds) {
    const records = await client.store.read(s)
    const results = records.filter((r) => r.body.type === 'messageEnd' && r.body.message.role === 'toolResult').length
    if (results !== perSession * perRun.toolCalls) throw new Error(`SCALE: session ${s} has ${results} tool results, expected ${perSession * perRun.toolCalls}`)
  }
  return { t0, wallMs: last - t0, enqueuedMs }
}

/** One throughput measurement with `w` worker processes on a fresh database. */
async function throughput(url, w, { runs, sessions }, postmasterPid, pollingIntervalMs) {
  const db = await database(url, `bench_scale_w${w}_${process.pid}`)
  const workers = []
  let client
  let pool
  try {
    // The first worker alone, then the others: DBOS's system-table migrations, run by workers starting at
    // once on an empty database, can deadlock each other (seen: 40P01 in DBOS.launch).
    for (let i = 0; i < w; i++) {
      workers.push(spawnWorker(db.url, `scale-w${w}-${i}`, pollingIntervalMs))
      if (i === 0) await workers[0].ready
    }
    await Promise.all(workers.map((x) => x.ready))
    const { dbosAgentClient } = await import('../../dist/src/dbos/index.js')
    client = await dbosAgentClient({ pg: db.url })
    pool = new pg.Pool({ connectionString: db.url, max: 1 })
    // An idle connection the server ends is an 'error' event on the pool: unheard, it killed `npm run bench` once (2026-11-29).
    pool.on('error', () => undefined)
    const tag = `${w}-${process.pid}`
    await runAll(client, pool, Array.from({ length: w * concurrency }, (_, i) => `warm-${tag}-${i}`), 1)
    await Promise.all(workers.map((x) => x.send('mark')))
    const pg0 = serverCpuMs(postmasterPid)
    const m0 = machineTicks()
    const c0 = cpuMs()
    const perSession = Math.ceil(runs / sessions)
    const measured = await runAll(client, pool, Array.from({ length: sessions }, (_, i) => `scale-${tag}-${i}`), perSession)
    const clientMs = cpuMs() - c0
    const pg1 = serverCpuMs(postmasterPid)
    const machine = machineBusy(m0, machineTicks())
    const stopped = await Promise.all(workers.map((x) => x.send('stop')))
    const total = sessions * perSession
    const seconds = measured.wallMs / 1000
    const workersMs = stopped.reduce((sum, s) => sum + s.cpuMs, 0)
    const postgresMs = pg0 === undefined || pg1 === undefined ? undefined : pg1 - pg0
    const capacity = measured.wallMs * cpus().length
    return {
      workers: w,
      runs: total,
      sessions,
      wallMs: measured.wallMs,
      enqueueMs: measured.enqueuedMs,
      runsPerS: total / seconds,
      turnsPerS: (total * perRun.modelTurns) / seconds,
      stepsPerS: (total * perRun.steps) / seconds,
      runsPerWorker: stopped.map((s) => s.runs),
      cpuMs: { workers: workersMs, perWorker: stopped.map((s) => s.cpuMs), postgres: postgresMs, client: clientMs },
      cpuMsPerRun: { workers: workersMs / total, postgres: postgresMs === undefined ? undefined : postgresMs / total, client: clientMs / total },
      busy: { workers: workersMs / capacity, postgres: postgresMs === undefined ? undefined : postgresMs / capacity, client: clientMs / capacity, total: (workersMs + (postgresMs ?? 0) + clientMs) / capacity, machine },
    }
  } finally {
    await client?.close().catch(() => undefined)
    await pool?.end().catch(() => undefined)
    for (const x of workers) x.kill()
    await Promise.race([Promise.all(workers.map((x) => x.exited)), sleep(5000)])
    await db.drop().catch(() => undefined)
  }
}

/** The overhead process (overhead.mjs) on a fresh database. */
async function overhead(url, { overheadRuns, warmups }, postmasterPid) {
  const db = await database(url, `bench_scale_overhead_${process.pid}`)
  try {
    const args = [join(here, 'overhead.mjs'), db.url, String(overheadRuns), String(warmups), ...(postmasterPid === undefined ? [] : [String(postmasterPid)])]
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err = (err + d).slice(-4000)))
    const code = await new Promise((resolve) => child.once('exit', resolve))
    if (code !== 0) throw new Error(`SCALE overhead process failed (${code}):\n${err}`)
    return JSON.parse(out.trim().split('\n').at(-1))
  } finally {
    await db.drop().catch(() => undefined)
  }
}

/**
 * The SCALE measurements on the cluster at `url` (a superuser connection string; `postmasterPid`
 * for the server's CPU time). `log(line)` reports progress.
 */
export async function runScale({ url, smoke = false, postmasterPid, log = () => undefined, skipOverhead = false, pollingIntervalMs }) {
  const size = smoke ? sizes.smoke : sizes.full
  const started = performance.now()
  const out = { cores: cpus().length, loadAverage: loadavg()[0], concurrency, pollingIntervalMs: pollingIntervalMs ?? 250, perRun, ...size, workers: {} }
  for (const w of smoke ? workerCounts.smoke : workerCounts.full) {
    const t = performance.now()
    const r = await throughput(url, w, size, postmasterPid, pollingIntervalMs)
    out.workers[w] = r
    log(`scale    ${w} worker${w === 1 ? ' ' : 's'} ${r.runs} runs ${r.turnsPerS.toFixed(1).padStart(6)} turns/s, ours ${(r.busy.total * 100).toFixed(0)}% of ${out.cores} cores${r.busy.machine === undefined ? '' : `, machine ${(r.busy.machine * 100).toFixed(0)}%`} ${((performance.now() - t) / 1000).toFixed(1).padStart(6)} s`)
  }
  const t = performance.now()
  if (skipOverhead) return out
  out.overhead = await overhead(url, size, postmasterPid)
  log(`scale    overhead ${out.overhead.runs} runs: +${out.overhead.overheadMsPerStep.toFixed(1)} ms/step ${((performance.now() - t) / 1000).toFixed(1).padStart(6)} s`)
  out.loadAverageAfter = loadavg()[0]
  out.seconds = (performance.now() - started) / 1000
  return out
}
