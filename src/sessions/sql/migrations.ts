/**
 * The SQL store's schema, as numbered migrations recorded in
 * `<schema>.<prefix>migrations`. Migrating takes a transaction-scoped
 * advisory lock first, so several processes starting at once on one
 * PostgreSQL database apply each migration exactly once (the others wait,
 * then find nothing to do); running it again is a no-op. A database migrated
 * by a newer rxagent (a version this one does not know) is refused.
 *
 * Times are milliseconds since the epoch as `double precision` (from the
 * database's clock, see `CLOCK`); bodies are `json` (kept as written: a
 * `\u0000` in a model's text, which `jsonb` refuses, is stored).
 */
import type { SqlDriver, SqlNames } from './driver.js'

/** The database's clock, in ms since the epoch: one clock for every process writing the database. */
export const CLOCK = `(extract(epoch from clock_timestamp()) * 1000)::float8`

interface Migration {
  readonly version: number
  readonly name: string
  readonly statements: (n: SqlNames) => readonly string[]
}

/** Every migration this rxagent knows, oldest first. Append only: never edit one that shipped. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'sessions, records, leases',
    statements: (n) => [
      `CREATE TABLE ${n.sessions} (
        session_id text PRIMARY KEY,
        agent_id text NOT NULL,
        length bigint NOT NULL,
        last_position bigint NOT NULL,
        created_at double precision NOT NULL,
        updated_at double precision NOT NULL)`,
      `CREATE INDEX "${n.prefix}sessions_updated_at" ON ${n.sessions} (updated_at)`,
      `CREATE TABLE ${n.records} (
        session_id text NOT NULL,
        position bigint NOT NULL,
        seq bigint,
        at double precision NOT NULL,
        body json NOT NULL,
        PRIMARY KEY (session_id, position))`,
      `CREATE INDEX "${n.prefix}records_stream" ON ${n.records} (session_id, position) WHERE seq IS NULL`,
      `CREATE TABLE ${n.leases} (
        session_id text PRIMARY KEY,
        holder text NOT NULL,
        expires_at double precision NOT NULL)`,
      appendFunction(n),
    ],
  },
]

/**
 * An append as one statement (one round trip, and a statement is atomic
 * even outside a transaction): see `sql-store.ts` for the steps. `records`
 * is a JSON array of `{ s: seq | null, a: at, b: body }`; bodies are moved
 * as `json` (never through `text`, which refuses `\u0000`). Returns one row:
 * `outcome` 'ok', 'conflict' (`length` is the log's real length) or 'lease'
 * (the lease row as it is, and the database's `now`).
 */
function appendFunction(n: SqlNames): string {
  return `CREATE FUNCTION ${n.appendFunction}(
      p_session text, p_expected bigint, p_agent text, p_holder text, p_compact boolean, p_length bigint,
      p_seqs bigint[], p_ats float8[], p_bodies json, p_channel text)
    RETURNS TABLE (outcome text, length float8, last_position float8, holder text, expires_at float8, now float8)
    LANGUAGE plpgsql AS $fn$
    DECLARE
      v_now float8 := ${CLOCK};
      v_found boolean;
      v_length bigint := 0;
      v_last bigint := 0;
      v_holder text;
      v_expires float8;
      v_count integer;
    BEGIN
      SELECT s.length, s.last_position INTO v_length, v_last FROM ${n.sessions} s WHERE s.session_id = p_session FOR UPDATE;
      v_found := FOUND;
      IF NOT v_found THEN v_length := 0; v_last := 0; END IF;
      IF v_length <> p_expected THEN
        RETURN QUERY SELECT 'conflict'::text, v_length::float8, v_last::float8, NULL::text, NULL::float8, v_now;
        RETURN;
      END IF;
      IF p_holder IS NOT NULL THEN
        SELECT l.holder, l.expires_at INTO v_holder, v_expires FROM ${n.leases} l WHERE l.session_id = p_session FOR SHARE;
        IF v_holder IS DISTINCT FROM p_holder OR v_expires <= v_now THEN
          RETURN QUERY SELECT 'lease'::text, v_length::float8, v_last::float8, v_holder, v_expires, v_now;
          RETURN;
        END IF;
      END IF;
      v_count := json_array_length(p_bodies);
      IF v_count = 0 THEN
        RETURN QUERY SELECT 'ok'::text, v_length::float8, v_last::float8, NULL::text, NULL::float8, v_now;
        RETURN;
      END IF;
      IF NOT v_found THEN
        INSERT INTO ${n.sessions} AS s (session_id, agent_id, length, last_position, created_at, updated_at)
          VALUES (p_session, p_agent, 0, 0, v_now, v_now) ON CONFLICT (session_id) DO NOTHING;
        IF NOT FOUND THEN
          -- Another writer created it first (it committed while this one waited on the key).
          SELECT s.length INTO v_length FROM ${n.sessions} s WHERE s.session_id = p_session;
          RETURN QUERY SELECT 'conflict'::text, coalesce(v_length, 0)::float8, 0::float8, NULL::text, NULL::float8, v_now;
          RETURN;
        END IF;
      END IF;
      IF p_compact THEN
        DELETE FROM ${n.records} r WHERE r.session_id = p_session AND r.seq IS NULL;
      END IF;
      INSERT INTO ${n.records} (session_id, position, seq, at, body)
        SELECT p_session, v_last + e.i, p_seqs[e.i], p_ats[e.i], e.v
        FROM json_array_elements(p_bodies) WITH ORDINALITY AS e(v, i);
      UPDATE ${n.sessions} s SET length = p_length, last_position = v_last + v_count, updated_at = v_now WHERE s.session_id = p_session;
      PERFORM pg_notify(p_channel, p_session);
      RETURN QUERY SELECT 'ok'::text, p_length::float8, (v_last + v_count)::float8, NULL::text, NULL::float8, v_now;
    END
    $fn$`
}

/** The newest schema version this rxagent knows. */
export const SCHEMA_VERSION = MIGRATIONS.at(-1)!.version

/** The database's schema is newer than this rxagent. */
export class SessionSchemaError extends Error {
  override readonly name = 'SessionSchemaError'
  constructor(
    readonly found: number,
    readonly known: number,
    where: string,
  ) {
    super(`${where} is at session schema version ${found}, newer than this rxagent knows (${known}): upgrade rxagent, or use another schema`)
  }
}

/**
 * Brings the schema to {@link SCHEMA_VERSION} (see the module comment).
 * @returns the versions applied now (none when it was up to date).
 * @throws SessionSchemaError when the database is newer.
 */
export async function migrate(driver: SqlDriver, n: SqlNames): Promise<readonly number[]> {
  return driver.transaction(async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [n.lockKey])
    await tx.query(`CREATE SCHEMA IF NOT EXISTS ${n.schema}`)
    await tx.query(`CREATE TABLE IF NOT EXISTS ${n.migrations} (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`)
    const { rows } = await tx.query<{ version: number | null }>(`SELECT max(version) AS version FROM ${n.migrations}`)
    const current = rows[0]?.version ?? 0
    if (current > SCHEMA_VERSION) throw new SessionSchemaError(current, SCHEMA_VERSION, `${n.migrations.replace(/"/g, '')}`)
    const applied: number[] = []
    for (const migration of MIGRATIONS) {
      if (migration.version <= current) continue
      for (const statement of migration.statements(n)) await tx.query(statement)
      await tx.query(`INSERT INTO ${n.migrations} (version, name) VALUES ($1, $2)`, [migration.version, migration.name])
      applied.push(migration.version)
    }
    return applied
  })
}
