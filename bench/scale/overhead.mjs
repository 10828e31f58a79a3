// The SCALE rows' per-step overhead, in one process, one run at a time:
//   node bench/scale/overhead.mjs <url> <runs> <warmups> [postmasterPid]
// (a) the plain durable session: `Agent.open` on `postgresSessionStore`, `prompt`, `flush`, close —
//     timed whole, the opening included (a DBOS run opens its session too);
// (b) the same run as a DBOS workflow on a worker in this process (`startWorker`, default polling),
//     queued by a `dbosAgentClient`; timed from DBOS's own records (milliseconds, PostgreSQL's clock):
//     enqueue → dequeue (the queue's polling), dequeue → first step, dequeue → workflow done.
// Each on a new session. Prints one JSON line.
import pg from 'pg'
import { Agent } from '../../dist/src/index.js'
import { postgresSessionStore } from '../../dist/src/sessions/postgres-store.js'
import { dbosAgentClient, startWorker } from '../../dist/src/dbos/index.js'
import { agentName, agentOptions, definition, perRun } from './agent.mjs'
import { serverCpuMs } from './cpu.mjs'
import { median } from '../stats.mjs'

const [url, runsArg, warmupsArg, pidArg] = process.argv.slice(2)
const runs = Number(runsArg)
const warmups = Number(warmupsArg)
const pmPid = pidArg === undefined ? undefined : Number(pidArg)
const cpuNow = () => {
  const c = process.cpuUsage()
  return { process: (c.user + c.system) / 1000, postgres: serverCpuMs(pmPid) }
}
const cpuPerRun = (c0, n) => {
  const c1 = cpuNow()
  return { process: (c1.process - c0.process) / n, postgres: c0.postgres === undefined ? undefined : (c1.postgres - c0.postgres) / n }
}
const toolResults = (records) => records.filter((r) => r.body.type === 'messageEnd' && r.body.message.role === 'toolResult').length
let sessions = 0
const session = (what) => `overhead-${what}-${process.pid}-${sessions++}`

// (a) The plain durable session.
const store = await postgresSessionStore({ connectionString: url })
async function plainRun() {
  const sessionId = session('plain')
  const t0 = performance.now()
  const agent = await Agent.open({ ...agentOptions(), store, sessionId })
  const result = await agent.prompt('go')
  await agent.session.flush()
  await agent.session.close()
  const ms = performance.now() - t0
  if (result.stopReason !== 'stop' || toolResults(await store.read(sessionId)) !== perRun.toolCalls) throw new Error(`plain run: ${result.stopReason} ${result.error ?? ''}`)
  return ms
}
for (let i = 0; i < warmups; i++) await plainRun()
let c0 = cpuNow()
const plain = []
for (let i = 0; i < runs; i++) plain.push(await plainRun())
const plainCpu = cpuPerRun(c0, runs)
await store.close()

// (b) The same run through a 1-worker DBOS cluster.
let taken = 0
const counted = { name: definition.name, options: (sessionId) => (taken++, definition.options(sessionId)) }
const worker = await startWorker({ pg: url, agents: [counted], concurrency: 4, workerId: `overhead-${process.pid}` })
const client = await dbosAgentClient({ pg: url })
const pool = new pg.Pool({ connectionString: url, max: 1 })
pool.on('error', () => undefined)
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
async function dbosRun() {
  const sessionId = session('dbos')
  const before = taken
  const t0 = performance.now()
  const { runId } = await client.prompt(sessionId, agentName, 'go')
  const enqueueMs = performance.now() - t0
  // Done when DBOS records it: the worker in this process has taken the run and finished it (watched in
  // memory), then its status row (polled every 2 ms: `outcome` polls once a second, too coarse here).
  for (let i = 0; taken === before || worker.running() > 0; i++) {
    if (i > 30_000) throw new Error(`run ${runId} did not end`)
    await sleep(1)
  }
  for (let i = 0; ; i++) {
    const { rows } = await pool.query(`SELECT status FROM dbos.workflow_status WHERE workflow_uuid = $1`, [runId])
    if (rows[0] !== undefined && rows[0].status !== 'PENDING' && rows[0].status !== 'ENQUEUED') break
    if (i > 15_000) throw new Error(`run ${runId} did not end`)
    await sleep(2)
  }
  const outcome = await client.outcome(runId, { timeoutMs: 5000 })
  if (outcome.stopReason !== 'stop' || toolResults(await client.store.read(sessionId)) !== perRun.toolCalls) throw new Error(`DBOS run: ${JSON.stringify(outcome)}`)
  const { rows: [w] } = await pool.query(`SELECT created_at, started_at_epoch_ms, updated_at FROM dbos.workflow_status WHERE workflow_uuid = $1`, [runId])
  const { rows: steps } = await pool.query(`SELECT function_name, started_at_epoch_ms, completed_at_epoch_ms FROM dbos.operation_outputs WHERE workflow_uuid = $1 ORDER BY function_id`, [runId])
  const [created, started, ended] = [w.created_at, w.started_at_epoch_ms, w.updated_at].map(Number)
  const firstStep = Math.min(...steps.map((s) => Number(s.started_at_epoch_ms)))
  return { enqueueMs, queueMs: started - created, toFirstStepMs: firstStep - created, startMs: firstStep - started, runMs: ended - started, steps: steps.map((s) => s.function_name) }
}
for (let i = 0; i < warmups; i++) await dbosRun()
c0 = cpuNow()
const dbos = []
for (let i = 0; i < runs; i++) dbos.push(await dbosRun())
const dbosCpu = cpuPerRun(c0, runs)
await client.close()
await worker.stop({ drain: true, timeoutMs: 5000 })
await pool.end()

const m = (key) => median(dbos.map((r) => r[key]))
const plainMs = median(plain)
console.log(
  JSON.stringify({
    runs,
    warmups,
    stepsPerRun: perRun.steps,
    plain: { msPerRun: plainMs, min: Math.min(...plain), max: Math.max(...plain), cpuMsPerRun: plainCpu },
    dbos: {
      msPerRun: m('runMs'),
      min: Math.min(...dbos.map((r) => r.runMs)),
      max: Math.max(...dbos.map((r) => r.runMs)),
      enqueueMs: m('enqueueMs'),
      queueMs: m('queueMs'),
      toFirstStepMs: m('toFirstStepMs'),
      startMs: m('startMs'),
      cpuMsPerRun: dbosCpu,
      dbosSteps: dbos[0].steps,
    },
    overheadMsPerStep: (m('runMs') - plainMs) / perRun.steps,
  }),
)
process.exit(0)
