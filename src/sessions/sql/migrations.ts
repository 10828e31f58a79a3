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
    ],
  },
]

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
