/**
 * The SQL driver over a PGlite database (see `sql/driver.ts`). PGlite runs
 * in the agent's own process: every statement's cost is the agent's CPU, so
 * the statements the store runs outside transactions (appends, reads, tails'
 * pages, leases) take a shorter way than PGlite's `query`:
 *
 * - Prepared once. A statement is parsed and described the first time (per
 *   driver); each call is then one Bind / Execute / Sync message through
 *   `execProtocol`: one pass through PGlite's main loop, where `query` makes
 *   six (parse, describe, bind, describe, execute, sync) and plans the
 *   statement every time.
 * - `json` parameters go as their UTF-8 bytes (binary format: `json`'s binary
 *   form is its text). PGlite counts a string parameter's UTF-8 length twice,
 *   in a JavaScript loop per character: about 300 µs for the 40 KB
 *   `messageEnd` of a 10,000-delta message.
 *
 * Measured on PGlite 0.5.16, `store.append` of the batches of a DURABLE
 * TEXT run (10,000 deltas), CPU per append, median of 280 calls interleaved
 * with the previous driver's in one process: the 4 entries that start the
 * run 1.21 → 0.89 ms, the 40 KB `messageEnd` batch that ends it 2.41 → 1.63 ms.
 *
 * The prepared call holds PGlite's transaction lock and then its query lock,
 * as `query` does, so it never runs inside another caller's transaction.
 * Statements in a transaction (`transaction`) go through PGlite's own `tx.query`.
 */
import type { PGlite } from '@electric-sql/pglite'
import type { SqlClient, SqlDriver, SqlResult } from './sql/driver.js'

type PgliteModule = typeof import('@electric-sql/pglite')
type Message = Parameters<PgliteModule['parse']['parseResults']>[0][number]

/** PostgreSQL's type id of `json`. */
const JSON_OID = 114
/** Statements prepared per driver at most (the store runs about ten); others go through `query`. */
const MAX_PREPARED = 64
/** Errors after which a prepared statement is prepared again (once): it was deallocated, or its result type changed. */
const STALE = new Set(['26000', '0A000'])

interface Prepared {
  readonly name: string
  readonly paramTypes: readonly number[]
  /** The statement's row description, for `parseResults` (absent: no rows). */
  readonly rowDescription: Message | undefined
}

let drivers = 0
const utf8 = new TextEncoder()

/** The driver over `db` (`pglite`: the loaded module); its `close` deallocates its statements, and leaves `db` open. */
export function pgliteDriver(pglite: PgliteModule, db: PGlite): SqlDriver {
  const { serialize } = pglite.protocol
  const prefix = `rxagent_${process.pid}_${++drivers}_`
  const prepared = new Map<string, Prepared>()
  let statements = 0

  const concat = (parts: readonly Uint8Array[]): Uint8Array => {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
    let at = 0
    for (const p of parts) {
      out.set(p, at)
      at += p.length
    }
    return out
  }

  async function prepare(text: string): Promise<Prepared> {
    const name = `${prefix}${++statements}`
    const { messages } = await db.execProtocol(concat([serialize.parse({ name, text }), serialize.describe({ type: 'S', name }), serialize.sync()]))
    const statement = {
      name,
      paramTypes: pglite.parse.parseDescribeStatementResults(messages),
      rowDescription: messages.find((m) => m.name === 'rowDescription'),
    }
    prepared.set(text, statement)
    return statement
  }

  /** A parameter as PGlite's `query` would send it, but `json` as bytes. */
  const value = (v: unknown, oid: number | undefined): string | Uint8Array | null => {
    if (v === null || v === undefined) return null
    if (oid === JSON_OID && typeof v === 'string') return utf8.encode(v)
    const serializer = oid === undefined ? undefined : db.serializers[oid]
    return serializer !== undefined ? serializer(v) : String(v)
  }

  async function run<R>(statement: Prepared, params: readonly unknown[]): Promise<SqlResult<R>> {
    const values = params.map((v, i) => value(v, statement.paramTypes[i]))
    const { messages } = await db.execProtocol(concat([serialize.bind({ statement: statement.name, values }), serialize.execute({}), serialize.sync()]))
    const all = statement.rowDescription === undefined ? messages : [statement.rowDescription, ...messages]
    return pglite.parse.parseResults(all, db.parsers)[0] as unknown as SqlResult<R>
  }

  async function query<R>(text: string, params: readonly unknown[] = []): Promise<SqlResult<R>> {
    if (db.closed) throw new Error('PGlite is closed')
    if (!prepared.has(text) && prepared.size >= MAX_PREPARED) return db.query<R>(text, params as unknown[])
    return db._runExclusiveTransaction(() =>
      db.runExclusive(async () => {
        const statement = prepared.get(text) ?? (await prepare(text))
        try {
          return await run<R>(statement, params)
        } catch (error) {
          if (!STALE.has((error as { code?: string }).code ?? '')) throw error
          prepared.delete(text)
          return run<R>(await prepare(text), params)
        }
      }),
    )
  }

  const clientOf = (tx: Pick<PGlite, 'query'>): SqlClient => ({ query: async (text, params) => tx.query(text, params as unknown[]) })

  return {
    kind: 'pglite',
    query,
    transaction: (fn) => db.transaction((tx) => fn(clientOf(tx))),
    listen: async (channel, onNotify) => {
      const stop = await db.listen(channel, onNotify)
      return async () => {
        if (!db.closed) await stop()
      }
    },
    close: async () => {
      // A database the caller owns goes on without them.
      const names = [...prepared.values()].map((p) => p.name)
      prepared.clear()
      for (const name of names) if (!db.closed) await db.exec(`DEALLOCATE "${name}"`).catch(() => undefined)
    },
  }
}
