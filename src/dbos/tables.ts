/**
 * rxagent's own tables beside DBOS's, in schema `rxagent_dbos`:
 *
 * - `runs`: each run a client queued (its DBOS workflow id), how many
 *   steering and follow-up messages clients sent it (DBOS messages), and
 *   whether it is done taking input. A session row (`sessions`) is the lock
 *   that orders a client's send against a run's last look: a message sent to
 *   a workflow that has just taken its last look would never be received, so
 *   a run is marked done only when it has received all it was sent, and a
 *   client sends only to a run not done (otherwise it queues a new run).
 * - `workers`: each worker's heartbeat; a live worker recovers the runs of
 *   one whose heartbeat stopped.
 *
 * Created by the first worker or client, under a transaction-scoped advisory
 * lock (several processes may start at once).
 */
import type { Pool, PoolClient } from 'pg'
import type { AgentMessage } from '../types/message.js'

const SCHEMA = 'rxagent_dbos'
const MIGRATION_LOCK = 0x7278_6462 // "rxdb"

const DDL = `
CREATE SCHEMA IF NOT EXISTS ${SCHEMA};
CREATE TABLE IF NOT EXISTS ${SCHEMA}.sessions (
  session_id text PRIMARY KEY,
  agent text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS ${SCHEMA}.runs (
  run_id text PRIMARY KEY,
  session_id text NOT NULL,
  done boolean NOT NULL DEFAULT false,
  sent integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE ${SCHEMA}.runs ADD COLUMN IF NOT EXISTS sent integer NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS runs_open ON ${SCHEMA}.runs (session_id) WHERE NOT done;
CREATE TABLE IF NOT EXISTS ${SCHEMA}.workers (
  app text NOT NULL,
  worker_id text NOT NULL,
  heartbeat_at timestamptz NOT NULL,
  PRIMARY KEY (app, worker_id)
);
`

/**
 * Creates the tables if they are missing. The DDL runs in one transaction
 * (all or nothing) and only when the tables are not there: `CREATE … IF NOT
 * EXISTS` still takes locks, which deadlocked against live workers' writes.
 */
export async function migrate(pool: Pool): Promise<void> {
  const present = async (c: Pool | PoolClient) =>
    (
      await c.query(
        `SELECT 1 FROM information_schema.columns WHERE table_schema = '${SCHEMA}' AND table_name = 'runs' AND column_name = 'sent' AND to_regclass('${SCHEMA}.workers') IS NOT NULL`,
      )
    ).rows.length > 0
  if (await present(pool)) return
  await transaction(pool, async (c) => {
    await c.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK])
    if (!(await present(c))) await c.query(DDL)
  })
}

/**
 * Runs `body` (DBOS's own migrations: they deadlock when several processes
 * run them at once) holding a session-level advisory lock, so that workers
 * and clients starting together take turns.
 */
export async function underStartLock<T>(pool: Pool, body: () => Promise<T>): Promise<T> {
  const client = await pool.connect()
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK + 1])
    try {
      return await body()
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK + 1])
    }
  } finally {
    client.release()
  }
}

async function transaction<T>(pool: Pool, body: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    const result = await body(client)
    await client.query('COMMIT')
    return result
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined)
    throw error
  } finally {
    client.release()
  }
}

/** A steering or follow-up message a client sent to a run (the body of its DBOS message). */
export interface InboxMessage {
  readonly queue: 'steering' | 'followUp'
  readonly message: AgentMessage
}

/** Registers the session for `agent` (or checks it is `agent`'s) and the run about to be queued. @throws Error when the session belongs to another agent. */
export async function addRun(pool: Pool, sessionId: string, agent: string, runId: string): Promise<void> {
  await transaction(pool, async (c) => {
    await c.query(`INSERT INTO ${SCHEMA}.sessions (session_id, agent) VALUES ($1, $2) ON CONFLICT (session_id) DO NOTHING`, [sessionId, agent])
    const owner = await c.query<{ agent: string }>(`SELECT agent FROM ${SCHEMA}.sessions WHERE session_id = $1`, [sessionId])
    const held = owner.rows[0]?.agent
    if (held !== agent) throw new Error(`session '${sessionId}' belongs to agent '${held ?? '?'}', not '${agent}'`)
    await c.query(`INSERT INTO ${SCHEMA}.runs (run_id, session_id) VALUES ($1, $2) ON CONFLICT (run_id) DO NOTHING`, [runId, sessionId])
  })
}

/**
 * Under the session's lock: finds the session's oldest run not done, counts
 * one more message sent to it and calls `send` (the DBOS send) before the
 * count commits — a run cannot take its last look between the two. A run
 * whose workflow `isOver` (cancelled, or failed where it could not say so)
 * is marked done and passed over. Returns the run (`undefined` when none is
 * open: the caller queues one).
 * @throws Error when the session has never had a run, or `send` failed (nothing counted).
 */
export async function sendInput(
  pool: Pool,
  sessionId: string,
  send: (runId: string) => Promise<void>,
  isOver: (runId: string) => Promise<boolean>,
): Promise<{ readonly agent: string; readonly runId: string | undefined }> {
  return transaction(pool, async (c) => {
    const session = await c.query<{ agent: string }>(`SELECT agent FROM ${SCHEMA}.sessions WHERE session_id = $1 FOR UPDATE`, [sessionId])
    const agent = session.rows[0]?.agent
    if (agent === undefined) throw new Error(`session '${sessionId}' has no runs: start one with prompt()`)
    const open = await c.query<{ run_id: string }>(`SELECT run_id FROM ${SCHEMA}.runs WHERE session_id = $1 AND NOT done ORDER BY created_at, run_id`, [sessionId])
    for (const { run_id: runId } of open.rows) {
      if (await isOver(runId)) {
        await c.query(`UPDATE ${SCHEMA}.runs SET done = true WHERE run_id = $1`, [runId])
        continue
      }
      await c.query(`UPDATE ${SCHEMA}.runs SET sent = sent + 1 WHERE run_id = $1`, [runId])
      await send(runId)
      return { agent, runId }
    }
    return { agent, runId: undefined }
  })
}

/** How many messages clients have sent to `runId` so far. */
export async function sentCount(pool: Pool, runId: string): Promise<number> {
  const r = await pool.query<{ sent: number }>(`SELECT sent FROM ${SCHEMA}.runs WHERE run_id = $1`, [runId])
  return r.rows[0]?.sent ?? 0
}

/**
 * A run's last look, under its session's lock: when it has received every
 * message sent to it, it is marked done (a later message queues a run of
 * its own); otherwise it is told how many were sent, to receive the rest.
 */
export async function closeRun(pool: Pool, sessionId: string, runId: string, received: number): Promise<{ readonly done: boolean; readonly sent: number }> {
  return transaction(pool, async (c) => {
    await c.query(`SELECT 1 FROM ${SCHEMA}.sessions WHERE session_id = $1 FOR UPDATE`, [sessionId])
    const r = await c.query<{ sent: number }>(`SELECT sent FROM ${SCHEMA}.runs WHERE run_id = $1`, [runId])
    const sent = r.rows[0]?.sent ?? 0
    if (sent > received) return { done: false, sent }
    await c.query(`UPDATE ${SCHEMA}.runs SET done = true WHERE run_id = $1`, [runId])
    return { done: true, sent }
  })
}

/** Marks a run done (it failed before taking its last look, or was never started). */
export async function endRun(pool: Pool, runId: string): Promise<void> {
  await pool.query(`UPDATE ${SCHEMA}.runs SET done = true WHERE run_id = $1`, [runId])
}

/** Whether run `runId` is done taking input (a run that is not known counts as done). */
export async function isDone(pool: Pool, runId: string): Promise<boolean> {
  const r = await pool.query<{ done: boolean }>(`SELECT done FROM ${SCHEMA}.runs WHERE run_id = $1`, [runId])
  return r.rows[0]?.done ?? true
}

/** The session's runs not done, oldest first. */
export async function openRuns(pool: Pool, sessionId: string): Promise<readonly string[]> {
  const r = await pool.query<{ run_id: string }>(`SELECT run_id FROM ${SCHEMA}.runs WHERE session_id = $1 AND NOT done ORDER BY created_at, run_id`, [sessionId])
  return r.rows.map((row) => row.run_id)
}

/** Records that `workerId` is alive now. */
export async function heartbeat(pool: Pool, app: string, workerId: string): Promise<void> {
  await pool.query(`INSERT INTO ${SCHEMA}.workers (app, worker_id, heartbeat_at) VALUES ($1, $2, now()) ON CONFLICT (app, worker_id) DO UPDATE SET heartbeat_at = now()`, [app, workerId])
}

/** Removes a worker that left the cluster cleanly (nothing to recover). */
export async function leave(pool: Pool, app: string, workerId: string): Promise<void> {
  await pool.query(`DELETE FROM ${SCHEMA}.workers WHERE app = $1 AND worker_id = $2`, [app, workerId])
}

/**
 * Claims the workers whose heartbeat is older than `deadAfterMs` (each claimed
 * by one live worker: the row is deleted as it is claimed). A claimed worker
 * that comes back writes its heartbeat again and recovers what is still its own.
 */
export async function claimDead(pool: Pool, app: string, deadAfterMs: number): Promise<readonly string[]> {
  const r = await pool.query<{ worker_id: string }>(
    `DELETE FROM ${SCHEMA}.workers WHERE app = $1 AND heartbeat_at < now() - make_interval(secs => $2::double precision / 1000) RETURNING worker_id`,
    [app, deadAfterMs],
  )
  return r.rows.map((row) => row.worker_id)
}
