/**
 * The PostgreSQL store on a throwaway cluster (test/support/postgres-cluster.ts;
 * skipped with the install command when PostgreSQL is not installed): the
 * contract on a fresh database per test, then what is PostgreSQL's own —
 * migrations from several stores at once, the pool owned or given, tails fed
 * by another store's appends through NOTIFY, the listening connection
 * released and replaced.
 */
import { expect, it } from 'vitest'
import { firstValueFrom, take, toArray } from 'rxjs'
import pg from 'pg'
import { extractText } from '../../src/index.js'
import { SessionConflictError, SessionDeletedError, type SessionRecord } from '../../src/agent/session-store.js'
import { SessionSchemaError, postgresSessionStore } from '../../src/sessions/postgres-store.js'
import { describePostgres } from '../support/postgres-cluster.js'
import { storeContract } from './store-contract.js'
import { batch, createSession, note, notes, seqs, until } from './fixtures.js'

/** Runs `sql` on `url` with a short-lived client. */
async function query<R extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query<R>(sql, params)).rows
  } finally {
    await client.end()
  }
}

/** Backends of `url`'s database whose last statement was a LISTEN (the store's listening connection while it holds it). */
const listeners = async (url: string) =>
  Number((await query<{ n: string }>(url, `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'`))[0]!.n)

describePostgres('postgresSessionStore', (cluster) => {
  storeContract('postgres', async () => {
    const url = await cluster().createDatabase()
    const store = await postgresSessionStore({ connectionString: url })
    return {
      store,
      tails: () => store.tails,
      corrupt: async (sessionId, position, body) => {
        await query(url, `UPDATE rxagent.records SET body = $3::json WHERE session_id = $1 AND position = $2`, [sessionId, position, JSON.stringify(body)])
      },
    }
  })

  it('migrates once when four stores open a fresh database at once; again is a no-op; a newer database is refused', async () => {
    const url = await cluster().createDatabase()
    const stores = await Promise.all([1, 2, 3, 4].map(() => postgresSessionStore({ connectionString: url, schema: 'app' })))
    expect(await query(url, 'SELECT version, name FROM app.migrations')).toEqual([{ version: 1, name: 'sessions, records, leases' }])
    await createSession(stores[0]!, 's1')
    expect(await stores[3]!.info('s1')).toMatchObject({ length: 1 })
    await Promise.all(stores.map((s) => s.close()))
    const again = await postgresSessionStore({ connectionString: url, schema: 'app' })
    expect(await again.info('s1')).toMatchObject({ length: 1 })
    await again.close()
    await query(url, `INSERT INTO app.migrations (version, name) VALUES (2, 'from the future')`)
    const error = await postgresSessionStore({ connectionString: url, schema: 'app' }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(SessionSchemaError)
    expect((error as Error).message).toMatch(/app\.migrations is at session schema version 2, newer than this rxagent knows \(1\)/)
  }, 120_000)

  it('writers in four stores (four pools) racing on one session: one wins per position, the log never interleaves', async () => {
    const url = await cluster().createDatabase()
    const stores = await Promise.all([1, 2, 3, 4].map(() => postgresSessionStore({ connectionString: url })))
    await createSession(stores[0]!, 's1')
    await Promise.all(
      stores.map(async (store, w) => {
        for (let won = 0; won < 5; ) {
          const length = (await store.info('s1'))!.length
          try {
            await store.append('s1', batch(length, notes(length, 2, `w${w}:`)))
            won++
          } catch (error) {
            if (!(error instanceof SessionConflictError)) throw error
          }
        }
      }),
    )
    const records = await stores[0]!.read('s1')
    expect(seqs(records)).toEqual(Array.from({ length: 41 }, (_, i) => i))
    // Each batch of two is one writer's.
    const writerOf = (r: SessionRecord) => (r.body.type === 'enqueue' && r.body.message.role === 'user' ? extractText(r.body.message.content).split(':')[0] : '?')
    for (let i = 1; i < 41; i += 2) expect(writerOf(records[i]!)).toBe(writerOf(records[i + 1]!))
    await Promise.all(stores.map((s) => s.close()))
  }, 120_000)

  it("a tail follows another store's appends (another process's, through NOTIFY), holding one listening connection", async () => {
    const url = await cluster().createDatabase()
    const reader = await postgresSessionStore({ connectionString: url })
    const writer = await postgresSessionStore({ connectionString: url })
    await createSession(writer, 's1')
    const seen: SessionRecord[] = []
    const subs = [reader.events$('s1').subscribe((r) => seen.push(r)), reader.events$('s2').subscribe(), reader.events$('s1', { from: 1 }).subscribe()]
    await until(() => seen.length === 1, 'the replay')
    expect(reader.listening).toBe(true)
    expect(await listeners(url)).toBe(1)
    for (let i = 1; i <= 5; i++) await writer.append('s1', batch(i, [note(i)]))
    await until(() => seen.length === 6, 'the records appended by the other store')
    expect(seen.map((r) => r.position)).toEqual([1, 2, 3, 4, 5, 6])
    for (const sub of subs) sub.unsubscribe()
    await until(async () => (await listeners(url)) === 0, 'the LISTEN connection to be released')
    expect(reader.listening).toBe(false)
    await reader.close()
    await writer.close()
  }, 120_000)

  it("a tail ends with SessionDeletedError when another store (another process) deletes its session", async () => {
    const url = await cluster().createDatabase()
    const reader = await postgresSessionStore({ connectionString: url })
    const writer = await postgresSessionStore({ connectionString: url })
    await createSession(writer, 's1', 1)
    const seen: number[] = []
    let ended: unknown
    reader.events$('s1').subscribe({ next: (r) => seen.push(r.position), error: (e: unknown) => (ended = e) })
    await until(() => seen.length === 2, 'the replay')
    expect(await writer.delete('s1')).toBe(true)
    // Created again at once, past the reader's position: the reader still ends, with nothing of the new session.
    await createSession(writer, 's1', 3)
    await until(() => ended !== undefined, 'the tail to end')
    expect(ended).toBeInstanceOf(SessionDeletedError)
    expect(ended).toMatchObject({ sessionId: 's1' })
    expect(seen).toEqual([1, 2])
    expect(reader.tails).toBe(0)
    await reader.close()
    await writer.close()
  }, 120_000)

  it('a listening connection that dies is replaced: the tail reads what was appended meanwhile and goes on', async () => {
    const url = await cluster().createDatabase()
    const reader = await postgresSessionStore({ connectionString: url })
    const writer = await postgresSessionStore({ connectionString: url })
    await createSession(writer, 's1')
    const all = firstValueFrom(reader.events$('s1').pipe(take(4), toArray()))
    await until(async () => (await listeners(url)) === 1, 'the listening connection')
    await query(url, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'`)
    await writer.append('s1', batch(1, [note(1)]))
    await until(async () => (await listeners(url)) === 1, 'a new listening connection')
    await writer.append('s1', batch(2, [note(2), note(3)]))
    expect((await all).map((r) => r.position)).toEqual([1, 2, 3, 4])
    await reader.close()
    await writer.close()
  }, 120_000)

  it('a pool it was given stays open after close(); a pool it created is ended', async () => {
    const url = await cluster().createDatabase()
    const pool = new pg.Pool({ connectionString: url, max: 3 })
    const given = await postgresSessionStore({ pool })
    await createSession(given, 's1')
    await given.close()
    expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }])
    await pool.end()
    const owned = await postgresSessionStore({ connectionString: `${url}?application_name=owned_pool` })
    expect(await owned.info('s1')).toMatchObject({ length: 1 })
    const count = async () => Number((await query<{ n: string }>(url, `SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'owned_pool'`))[0]!.n)
    expect(await count()).toBeGreaterThan(0)
    await owned.close()
    await until(async () => (await count()) === 0, 'the owned pool to end')
  }, 120_000)

  it('refuses bad options clearly, and an unreachable server with the driver error as cause', async () => {
    await expect(postgresSessionStore({} as never)).rejects.toThrow(/exactly one of connectionString or pool/)
    await expect(postgresSessionStore({ connectionString: '' })).rejects.toThrow(/options\.connectionString/)
    await expect(postgresSessionStore({ connectionString: cluster().url(), maxConnections: 0 })).rejects.toThrow(/options\.maxConnections/)
    await expect(postgresSessionStore({ pool: {} as never })).rejects.toThrow(/options\.pool: expected a pg\.Pool/)
    await expect(postgresSessionStore({ connectionString: cluster().url(), tablePrefix: 'x-y' })).rejects.toThrow(/options\.tablePrefix/)
    await expect(postgresSessionStore({ connectionString: 'postgresql://postgres@127.0.0.1:1/none' })).rejects.toThrow(/ECONNREFUSED/)
  }, 60_000)
})
