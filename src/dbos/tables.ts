/**
 * rxagent's own tables beside DBOS's, in schema `rxagent_dbos`:
 *
 * - `runs`: each run a client queued (its DBOS workflow id) and whether it
 *   is done taking input. A session row (`sessions`) is the lock that orders
 *   a client's input against a run's last look at the inbox.
 * - `inbox`: steering and follow-up messages for a session. A DBOS message
 *   sent to a workflow that has just taken its last look would be lost; a
 *   row here is taken by whichever run looks next, or starts one.
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
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS runs_open ON ${SCHEMA}.runs (session_id) WHERE NOT done;
CREATE TABLE IF NOT EXISTS ${SCHEMA}.inbox (
  id bigserial PRIMARY KEY,
  session_id text NOT NULL,
  queue text NOT NULL CHECK (queue IN ('steering', 'followUp')),
  message jsonb NOT NULL,
  taken_by text
);
CREATE INDEX IF NOT EXISTS inbox_waiting ON ${SCHEMA}.inbox (session_id, id) WHERE taken_by IS NULL;
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
  const present = async (c: Pool | PoolClient) => (await c.query<{ t: string | null }>(`SELECT to_regclass('${SCHEMA}.workers') AS t`)).rows[0]?.t != null
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

/** A message taken from the inbox. */
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
 * Puts a message in the session's inbox, under the session's lock, and says
 * whether a run that has not taken its last look is there to take it.
 * @throws Error when the session has never had a run.
 */
export async function addInput(pool: Pool, sessionId: string, input: InboxMessage): Promise<{ readonly agent: string; readonly openRun: boolean }> {
  return transaction(pool, async (c) => {
    const session = await c.query<{ agent: string }>(`SELECT agent FROM ${SCHEMA}.sessions WHERE session_id = $1 FOR UPDATE`, [sessionId])
    const agent = session.rows[0]?.agent
    if (agent === undefined) throw new Error(`session '${sessionId}' has no runs: start one with prompt()`)
    await c.query(`INSERT INTO ${SCHEMA}.inbox (session_id, queue, message) VALUES ($1, $2, $3)`, [sessionId, input.queue, JSON.stringify(input.message)])
    const open = await c.query(`SELECT 1 FROM ${SCHEMA}.runs WHERE session_id = $1 AND NOT done LIMIT 1`, [sessionId])
    return { agent, openRun: open.rows.length > 0 }
  })
}

/**
 * Takes the session's waiting messages for `runId`, oldest first. With
 * `last`, under the session's lock, and when there are none the run is
 * marked done: input that arrives later starts a run of its own.
 */
export async function takeInput(pool: Pool, sessionId: string, runId: string, last: boolean): Promise<readonly InboxMessage[]> {
  return transaction(pool, async (c) => {
    if (last) await c.query(`SELECT 1 FROM ${SCHEMA}.sessions WHERE session_id = $1 FOR UPDATE`, [sessionId])
    const taken = await c.query<{ id: string; queue: 'steering' | 'followUp'; message: AgentMessage }>(
      `UPDATE ${SCHEMA}.inbox SET taken_by = $2 WHERE id IN (SELECT id FROM ${SCHEMA}.inbox WHERE session_id = $1 AND taken_by IS NULL ORDER BY id FOR UPDATE) RETURNING id, queue, message`,
      [sessionId, runId],
    )
    if (last && taken.rows.length === 0) await c.query(`UPDATE ${SCHEMA}.runs SET done = true WHERE run_id = $1`, [runId])
    return [...taken.rows].sort((a, b) => Number(a.id) - Number(b.id)).map((r) => ({ queue: r.queue, message: r.message }))
  })
}

/** Marks a run done (it failed before taking its last look, or was never started). */
export async function endRun(pool: Pool, runId: string): Promise<void> {
  await pool.query(`UPDATE ${SCHEMA}.runs SET done = true WHERE run_id = $1`, [runId])
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
