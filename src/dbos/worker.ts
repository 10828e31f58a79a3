/**
 * `startWorker`: joins this process to the cluster. DBOS is one runtime per
 * process, so a process runs one worker.
 *
 * - Runs come from one DBOS queue (`rxagent.runs`), partitioned by session
 *   with a partition concurrency of 1: at most one live run per session
 *   across all workers; `concurrency` runs at a time on each worker (one
 *   value for the cluster: DBOS stores it with the queue, and the worker
 *   started last sets it for all).
 * - A worker restarted with its `workerId` resumes its own in-flight runs
 *   at once (DBOS recovers its executor's workflows at launch).
 * - Every worker writes a heartbeat; one that finds a heartbeat older than
 *   `deadAfterMs` claims that worker and hands its in-flight runs back to the
 *   queue (DBOS's recovery for that executor id), where any worker takes
 *   them. A run recovered this way waits for the dead worker's session lease
 *   to expire (`leaseTtlMs`) before it writes.
 */
import { hostname } from 'node:os'
import * as t from 'io-ts'
import type { Pool } from 'pg'
import { decodeInput } from '../types/input.js'
import { FunctionValue } from '../types/tool.js'
import { postgresSessionStore } from '../sessions/postgres-store.js'
import { executeRun, type RunInput, type WorkerContext } from './run-workflow.js'
import { loadPg } from '../sessions/load-pg.js'
import { dbosApi, loadDbos } from './sdk.js'
import { claimDead, heartbeat, leave, migrate, underStartLock } from './tables.js'
import { connectionStringOf, DEFAULT_APP, RUN_QUEUE, RUN_WORKFLOW, type DbosWorker, type StartWorkerOptions } from './types.js'
import { releaseAll } from './release-all.js'

const Positive = t.refinement(t.number, (n) => Number.isFinite(n) && n > 0, 'PositiveNumber')
const OptionsCodec = t.intersection([
  t.type({
    pg: t.union([t.string, t.type({ connectionString: t.string })]),
    agents: t.readonlyArray(t.type({ name: t.string, options: FunctionValue }, 'DbosAgentDefinition')),
  }),
  t.partial({ concurrency: Positive, workerId: t.string, deadAfterMs: Positive, leaseTtlMs: Positive, appName: t.string, pollingIntervalMs: Positive }),
])

/** The worker running in this process (DBOS is one runtime per process). */
let current: { readonly context: WorkerContext; running: number } | undefined
let registered = false

/** See the module comment. @throws InvalidInputError for bad options; Error when this process runs a worker already, or DBOS / PostgreSQL cannot be reached. */
export async function startWorker(options: StartWorkerOptions): Promise<DbosWorker> {
  decodeInput(OptionsCodec, options, 'startWorker', 'options')
  if (current !== undefined) throw new Error('startWorker: this process runs a worker already (DBOS is one runtime per process): stop it first')
  const names = options.agents.map((a) => a.name)
  const twice = names.find((n, i) => names.indexOf(n) !== i)
  if (twice !== undefined) throw new Error(`startWorker: two agents are named '${twice}'`)
  const url = connectionStringOf(options.pg)
  const app = options.appName ?? DEFAULT_APP
  const workerId = options.workerId ?? process.env['RXAGENT_WORKER_ID'] ?? `${hostname()}:${process.pid}`
  const deadAfterMs = options.deadAfterMs ?? 30_000
  const { sdk, executor } = await loadDbos('startWorker')
  const pg = await loadPg('startWorker')
  const pool: Pool = new pg.Pool({ connectionString: url, max: 4 })
  pool.on('error', () => undefined)
  await migrate(pool)
  await heartbeat(pool, app, workerId)
  const store = options.store ?? (await postgresSessionStore({ connectionString: url }))
  /** The runs executing here, and how to abort each (see `watchCancels`). */
  const watched = new Map<string, () => void>()
  const context: WorkerContext = {
    dbos: dbosApi(sdk),
    store,
    pool,
    agents: new Map(options.agents.map((a) => [a.name, a])),
    holder: `worker:${workerId}`,
    leaseTtlMs: options.leaseTtlMs ?? 15_000,
    onCancel: (runId, abort) => {
      watched.set(runId, abort)
      return () => watched.delete(runId)
    },
  }
  const state = { context, running: 0 }
  current = state
  const { DBOS } = sdk
  if (!registered) {
    registered = true
    DBOS.registerWorkflow(
      async (input: RunInput) => {
        const worker = current
        if (worker === undefined) throw new Error('rxagent.run: no worker runs in this process')
        worker.running++
        try {
          return await executeRun(worker.context, DBOS.workflowID!, input)
        } finally {
          worker.running--
        }
      },
      { name: RUN_WORKFLOW },
    )
  }
  DBOS.setConfig({ name: app, systemDatabaseUrl: url, executorID: workerId, logLevel: process.env['RXAGENT_DBOS_LOG_LEVEL'] ?? 'warn' })
  await underStartLock(pool, () => DBOS.migrate(url))
  await DBOS.launch()
  const concurrency = options.concurrency ?? 4
  // DBOS keeps one worker concurrency per queue, for every worker: a worker started with another value changes it for all (say so).
  const before = await DBOS.retrieveQueue(RUN_QUEUE)
  if (before !== null && before.workerConcurrency !== undefined && before.workerConcurrency !== concurrency) {
    console.warn(`startWorker: concurrency ${concurrency} replaces ${before.workerConcurrency} for every worker of '${app}' (DBOS keeps one worker concurrency per queue)`)
  }
  await DBOS.registerQueue(RUN_QUEUE, {
    workerConcurrency: concurrency,
    partitionConcurrency: 1,
    minPollingIntervalMs: options.pollingIntervalMs ?? 250,
    onConflict: 'always_update',
  })

  // Heartbeats, and the recovery of workers whose heartbeat stopped.
  const beatMs = Math.max(100, Math.floor(deadAfterMs / 4))
  let sweeping = false
  const timer = setInterval(() => {
    heartbeat(pool, app, workerId).catch(() => undefined)
    if (sweeping) return
    sweeping = true
    claimDead(pool, app, deadAfterMs)
      .then((dead) => (dead.length === 0 ? undefined : executor.DBOSExecutor.globalInstance!.recoverPendingWorkflows([...dead])))
      .catch(() => undefined)
      .finally(() => (sweeping = false))
  }, beatMs)
  timer.unref()
  const cancels = watchCancels(sdk.DBOS, watched, options.pollingIntervalMs ?? 250)

  let stopping: Promise<void> | undefined
  return {
    workerId,
    running: () => state.running,
    stop(stopOptions = {}) {
      stopping ??= (async () => {
        clearInterval(timer)
        clearInterval(cancels)
        if (stopOptions.drain === true) {
          // No new runs for this worker; those in flight finish (or are left for recovery after `timeoutMs`).
          await executor.DBOSExecutor.globalInstance?.deactivateEventReceivers()
          const deadline = Date.now() + (stopOptions.timeoutMs ?? 60_000)
          while (state.running > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
        }
        const drained = state.running === 0
        // Each step runs even when one before it failed (see `releaseAll`).
        await releaseAll('worker.stop', [
          ['shutting DBOS down', () => DBOS.shutdown().then(() => (current = undefined))],
          // A drained worker has nothing to recover; otherwise its heartbeat row stays, and a live worker recovers it.
          ['leaving the worker table', async () => (drained ? leave(pool, app, workerId).catch(() => undefined) : undefined)],
          ['closing the session store', async () => (options.store === undefined ? store.close() : undefined)],
          ['ending the connection pool', () => pool.end()],
        ])
      })()
      return stopping
    },
  }
}

/**
 * Every `everyMs`, while runs execute here, one query for those of them
 * whose workflow was cancelled; each is aborted (once).
 */
function watchCancels(dbos: Pick<typeof import('@dbos-inc/dbos-sdk').DBOS, 'listWorkflows'>, watched: Map<string, () => void>, everyMs: number): ReturnType<typeof setInterval> {
  let looking = false
  const timer = setInterval(() => {
    if (looking || watched.size === 0) return
    looking = true
    dbos
      .listWorkflows({ workflowIDs: [...watched.keys()], status: 'CANCELLED', loadInput: false, loadOutput: false })
      .then((cancelled) => {
        for (const { workflowID } of cancelled) {
          const abort = watched.get(workflowID)
          watched.delete(workflowID)
          abort?.()
        }
      })
      .catch(() => undefined)
      .finally(() => (looking = false))
  }, everyMs)
  timer.unref()
  return timer
}
