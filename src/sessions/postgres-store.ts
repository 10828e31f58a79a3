/**
 * `rxagent/postgres`: the session store on a PostgreSQL server, for many
 * processes and machines — the schema and SQL of every SQL store
 * (`sql-store.ts`), migrated by the first process that opens it (safely
 * from several at once).
 *
 * - `{ connectionString }`: the store creates its pool and ends it at
 *   `close()`; `{ pool }`: the caller's pool, left open.
 * - Live tails: ONE connection of the pool per store LISTENs, for all its
 *   tails, while at least one is open (see `sql/tails.ts`).
 * - Durability is the server's: a resolved `append` has committed.
 *
 * `pg` is an optional peer dependency, loaded when a store is opened.
 */
import type { Pool, PoolClient, Notification } from 'pg'
import { describeValue } from '../types/codec.js'
import { invalidInput } from '../types/input.js'
import type { SqlClient, SqlDriver, SqlLocation, SqlResult } from './sql/driver.js'
import { sqlNames } from './sql/driver.js'
import { migrate } from './sql/migrations.js'
import { sqlSessionStore, type SqlSessionStore } from './sql-store.js'
import { loadPg } from './load-pg.js'

export { SessionSchemaError, SCHEMA_VERSION } from './sql/migrations.js'
export type { SqlLocation, SqlSessionStore }

/** Where a PostgreSQL store keeps its sessions: a server it connects to (its own pool), or the caller's pool. */
export type PostgresSessionStoreOptions = SqlLocation &
  (
    | {
        readonly connectionString: string
        /** The most connections the store's pool opens (default 10; one more is the listening connection while tails are open). */
        readonly maxConnections?: number
        readonly pool?: undefined
      }
    | { readonly pool: Pool; readonly connectionString?: undefined }
  )

const ENTRY = 'postgresSessionStore'


const clientOf = (db: Pick<Pool, 'query'>): SqlClient => ({
  // Rows as the server sent them: the store decodes what it reads.
  query: async <R>(text: string, params?: readonly unknown[]) => (await db.query(text, params as unknown[])) as unknown as SqlResult<R>,
})

/** A connection that failed mid-transaction is destroyed, not returned to the pool. */
async function transaction<T>(pool: Pool, fn: (tx: SqlClient) => Promise<T>): Promise<T> {
  const client = await pool.connect()
  let broken: Error | undefined
  try {
    await client.query('BEGIN')
    const result = await fn(clientOf(client))
    await client.query('COMMIT')
    return result
  } catch (error) {
    try {
      await client.query('ROLLBACK')
    } catch (rollback) {
      broken = rollback as Error
    }
    throw error
  } finally {
    client.release(broken)
  }
}

/** LISTENs on one pool connection until stopped; its loss is reported once. */
async function listen(pool: Pool, channel: string, onNotify: (payload: string) => void, onError: (error: unknown) => void): Promise<() => Promise<void>> {
  const client: PoolClient = await pool.connect()
  let open = true
  const notified = (message: Notification) => {
    if (message.channel === channel && message.payload !== undefined) onNotify(message.payload)
  }
  const lost = (error?: Error) => {
    if (!open) return
    open = false
    client.removeListener('notification', notified)
    client.release(error ?? new Error('connection ended'))
    onError(error ?? new Error(`${ENTRY}: the listening connection ended`))
  }
  const onLost = (error: Error) => lost(error)
  const onEnd = () => lost()
  client.on('notification', notified)
  client.on('error', onLost)
  client.on('end', onEnd)
  try {
    await client.query(`LISTEN "${channel}"`)
  } catch (error) {
    open = false
    client.removeListener('error', onLost)
    client.removeListener('end', onEnd)
    client.release(error as Error)
    throw error
  }
  return async () => {
    if (!open) return
    open = false
    client.removeListener('notification', notified)
    let broken: Error | undefined
    try {
      await client.query(`UNLISTEN "${channel}"`)
    } catch (error) {
      broken = error as Error
    } finally {
      client.removeListener('error', onLost)
      client.removeListener('end', onEnd)
      client.release(broken)
    }
  }
}

/**
 * Opens (creating and migrating when needed) the session store on the
 * server of `options.connectionString`, or through `options.pool`.
 *
 * @throws SessionSchemaError when the database was migrated by a newer rxagent; InvalidInputError for bad options; the driver's error when the server cannot be reached.
 */
export async function postgresSessionStore(options: PostgresSessionStoreOptions): Promise<SqlSessionStore> {
  if (typeof options !== 'object' || options === null) throw invalidInput(ENTRY, 'options', 'options', `expected { connectionString } or { pool }, got ${describeValue(options)}`, options)
  const { connectionString, pool: given } = options
  if ((connectionString === undefined) === (given === undefined)) {
    throw invalidInput(ENTRY, 'options', 'options', 'expected exactly one of connectionString or pool (a pg.Pool)', options)
  }
  if (connectionString !== undefined && (typeof connectionString !== 'string' || connectionString === '')) {
    throw invalidInput(ENTRY, 'options', 'options.connectionString', `expected a PostgreSQL connection string, got ${describeValue(connectionString)}`, connectionString)
  }
  const max = 'maxConnections' in options ? options.maxConnections : undefined
  if (max !== undefined && (typeof max !== 'number' || !Number.isInteger(max) || max < 1)) {
    throw invalidInput(ENTRY, 'options', 'options.maxConnections', `expected a positive integer, got ${describeValue(max)}`, max)
  }
  if (given !== undefined && (typeof given !== 'object' || typeof (given as Partial<Pool>).connect !== 'function')) {
    throw invalidInput(ENTRY, 'options', 'options.pool', `expected a pg.Pool, got ${describeValue(given)}`, given)
  }
  const names = sqlNames(ENTRY, options)
  let pool: Pool
  if (given !== undefined) {
    pool = given
  } else {
    const pg = await loadPg(ENTRY)
    pool = new pg.Pool({ connectionString, max: max ?? 10 })
    // An idle connection that dies is the pool's to replace; without a listener it would crash the process.
    pool.on('error', () => {})
  }
  const close = async () => {
    if (given === undefined) await pool.end()
  }
  const driver: SqlDriver = {
    kind: 'postgres',
    ...clientOf(pool),
    transaction: (fn) => transaction(pool, fn),
    listen: (channel, onNotify, onError) => listen(pool, channel, onNotify, onError),
    close,
  }
  try {
    await migrate(driver, names)
  } catch (error) {
    await close()
    throw error
  }
  return sqlSessionStore(driver, names, close)
}
