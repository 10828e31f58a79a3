/**
 * The little the SQL session store needs from a PostgreSQL client, which
 * PGlite and `pg` both give: queries with parameters, transactions, and
 * notifications. Each store adapts its client to this (pglite-store.ts,
 * postgres-store.ts); the SQL and the schema are the same for both.
 */
import { describeValue } from '../../types/codec.js'
import { invalidInput } from '../../types/input.js'

/** Rows of a query. */
export interface SqlResult<R> {
  readonly rows: readonly R[]
}

/** Runs one statement with `$1…` parameters. */
export interface SqlClient {
  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<SqlResult<R>>
}

/** What the store calls on a database. */
export interface SqlDriver extends SqlClient {
  /** `pglite`, `postgres`: the store's kind. */
  readonly kind: string
  /** Runs `fn` in one transaction on one connection: committed when it resolves, rolled back when it rejects. */
  transaction<T>(fn: (tx: SqlClient) => Promise<T>): Promise<T>
  /**
   * Starts listening on `channel`: `onNotify` gets each payload, `onError`
   * the loss of the listening connection (nothing is delivered after it).
   * Resolves, once listening, to the function that stops it.
   */
  listen(channel: string, onNotify: (payload: string) => void, onError: (error: unknown) => void): Promise<() => Promise<void>>
  /** Releases what the driver owns (a pool it created, a database it opened). */
  close(): Promise<void>
}

/** Names of the store's tables, quoted, in a schema (see `sqlNames`). */
export interface SqlNames {
  readonly schema: string
  readonly migrations: string
  readonly sessions: string
  readonly records: string
  readonly leases: string
  /** The function that appends (see `migrations.ts`). */
  readonly appendFunction: string
  /** The NOTIFY channel (an identifier, unquoted) and the advisory lock key of migrations. */
  readonly channel: string
  readonly lockKey: string
  /** A prefix for index names. */
  readonly prefix: string
}

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,39}$/

/** Where a SQL store keeps its tables: a schema (default `rxagent`) and a table prefix (default none). */
export interface SqlLocation {
  /** A lower-case SQL identifier, at most 40 characters; created when missing. Default `rxagent`. */
  readonly schema?: string
  /** Prefixed to every table name (lower-case letters, digits, `_`). Default none. */
  readonly tablePrefix?: string
}

/**
 * The quoted names of `location`'s tables.
 * @throws InvalidInputError naming the option when it is not a plain lower-case identifier.
 */
export function sqlNames(entry: string, location: SqlLocation): SqlNames {
  const schema = location.schema ?? 'rxagent'
  const prefix = location.tablePrefix ?? ''
  const expected = 'expected a lower-case identifier (a-z, 0-9, _; not starting with a digit), at most 40 characters'
  if (typeof schema !== 'string' || !IDENTIFIER.test(schema)) throw invalidInput(entry, 'options', 'options.schema', `${expected}, got ${describeValue(schema)}`, schema)
  if (typeof prefix !== 'string' || (prefix !== '' && !IDENTIFIER.test(prefix))) throw invalidInput(entry, 'options', 'options.tablePrefix', `${expected}, got ${describeValue(prefix)}`, prefix)
  const table = (name: string) => `"${schema}"."${prefix}${name}"`
  return {
    schema: `"${schema}"`,
    migrations: table('migrations'),
    sessions: table('sessions'),
    records: table('records'),
    leases: table('leases'),
    appendFunction: table('append'),
    channel: `${schema}_${prefix}records`.slice(0, 63),
    lockKey: `${schema}.${prefix}migrations`,
    prefix,
  }
}
