/**
 * The PGlite store: the contract (one in-memory PGlite for the file, a fresh
 * schema per test), then what is PGlite's own: a data directory reopened,
 * migrations, the directory lock across real processes, and appends that
 * survive a SIGKILL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir, hostname } from 'node:os'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { DataDirLockedError, LOCK_FILE, SessionSchemaError, pgliteSessionStore } from '../../src/sessions/pglite-store.js'
import { storeContract } from './store-contract.js'
import { createSession, note, notes, seqs } from './fixtures.js'
import { ChildProcesses } from './children.js'

let shared: PGlite
let schemas = 0
beforeAll(async () => {
  shared = await PGlite.create()
}, 120_000)
afterAll(async () => {
  await shared?.close()
})

storeContract('pglite', async () => {
  const schema = `contract_${++schemas}`
  const store = await pgliteSessionStore({ db: shared, schema })
  return {
    store,
    tails: () => store.tails,
    corrupt: async (sessionId, position, body) => {
      await shared.query(`UPDATE "${schema}"."records" SET body = $3::json WHERE session_id = $1 AND position = $2`, [sessionId, position, JSON.stringify(body)])
    },
  }
})

describe('pgliteSessionStore reads pages', () => {
  it('a stored time that is not finite: an error naming the session, the position and `at`', async () => {
    const store = await pgliteSessionStore({ db: shared, schema: 'bad_time' })
    await createSession(store, 's1', 2)
    await shared.query(`UPDATE bad_time.records SET at = 'NaN' WHERE session_id = 's1' AND position = 2`)
    await expect(store.read('s1')).rejects.toThrow(/record at position 2 of session 's1' .*at at: expected a time in ms since the epoch, got "NaN"/)
    await expect(store.read('s1', { limit: 1 })).resolves.toHaveLength(1)
    await store.close()
  })

  it('a log longer than a page group reads whole and in order, from any position, with any limit', async () => {
    const store = await pgliteSessionStore({ db: shared, schema: 'long_log' })
    await createSession(store, 's1', 0)
    const length = 9_000
    await store.append('s1', { expectedSeq: 1, records: notes(1, length - 1) })
    const all = await store.read('s1')
    expect(seqs(all)).toEqual(Array.from({ length }, (_, i) => i))
    expect(all.map((r) => r.position)).toEqual([...all.map((r) => r.position)].sort((a, b) => a - b))
    const middle = await store.read('s1', { from: all[4_000]!.position, limit: 5_000 })
    expect(seqs(middle)).toEqual(Array.from({ length: 4_999 }, (_, i) => 4_001 + i).filter((seq) => seq < length))
    expect(middle).toHaveLength(4_999)
    await store.close()
  }, 120_000)
})

describe('pgliteSessionStore statements', () => {
  const prepared = async () => (await shared.query<{ statement: string }>(`SELECT statement FROM pg_prepared_statements WHERE statement LIKE '%prepared_%'`)).rows.map((r) => r.statement)

  it('run prepared; survive their deallocation; wait for a transaction of the shared database; are deallocated at close', async () => {
    const store = await pgliteSessionStore({ db: shared, schema: 'prepared_1' })
    await createSession(store, 's1')
    expect((await prepared()).some((s) => s.includes('"prepared_1"."append"'))).toBe(true)
    // Whoever owns the database may deallocate everything: the next append prepares again.
    await shared.exec('DEALLOCATE ALL')
    await store.append('s1', { expectedSeq: 1, records: [note(1, 'a \u0000 and \u{1F600}')] })
    // An append never runs inside someone else's transaction (it would be rolled back with it).
    let appended: Promise<unknown> | undefined
    await shared.transaction(async (tx) => {
      await tx.query(`SELECT 1`)
      appended = store.append('s1', { expectedSeq: 2, records: [note(2)] })
      await new Promise((resolve) => setTimeout(resolve, 50))
      await tx.rollback()
    })
    await appended
    const records = await store.read('s1')
    expect(seqs(records)).toEqual([0, 1, 2])
    expect(records[1]!.body).toEqual(note(1, 'a \u0000 and \u{1F600}').body)
    await store.close()
    expect(await prepared()).toEqual([])
  })
})

describe('pgliteSessionStore on a data directory', () => {
  const dirs: string[] = []
  const children = new ChildProcesses()
  const fresh = () => {
    const dir = mkdtempSync(join(tmpdir(), 'rxagent-pglite-'))
    dirs.push(dir)
    return dir
  }
  afterAll(() => {
    children.killAll()
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })

  it('keeps its sessions across close and reopen; migrating again is a no-op', async () => {
    const dataDir = fresh()
    const first = await pgliteSessionStore({ dataDir })
    await createSession(first, 's1', 2)
    await first.close()
    const again = await pgliteSessionStore({ dataDir })
    expect(seqs(await again.read('s1'))).toEqual([0, 1, 2])
    await again.close()
    // The lock is gone with the store: the directory opens as a plain PGlite database.
    const db = await PGlite.create({ dataDir })
    const { rows } = await db.query<{ version: number }>('SELECT version FROM rxagent.migrations')
    await db.close()
    expect(rows.map((r) => r.version)).toEqual([1])
  }, 120_000)

  it('refuses a database migrated by a newer rxagent', async () => {
    const db = await PGlite.create()
    try {
      await pgliteSessionStore({ db, schema: 'newer' }).then((s) => s.close())
      await db.query(`INSERT INTO newer.migrations (version, name) VALUES (99, 'from the future')`)
      const error = await pgliteSessionStore({ db, schema: 'newer' }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(SessionSchemaError)
      expect((error as Error).message).toMatch(/newer\.migrations is at session schema version 99, newer than this rxagent knows \(1\)/)
    } finally {
      await db.close()
    }
  }, 120_000)

  it('refuses bad options clearly', async () => {
    await expect(pgliteSessionStore({} as never)).rejects.toThrow(/exactly one of dataDir .* or db/)
    await expect(pgliteSessionStore({ dataDir: '' })).rejects.toThrow(/options\.dataDir/)
    await expect(pgliteSessionStore({ dataDir: fresh(), schema: 'Bad-Name' })).rejects.toThrow(/options\.schema: expected a lower-case identifier/)
    await expect(pgliteSessionStore(null as never)).rejects.toThrow(/expected \{ dataDir \} or \{ db \}/)
  })

  it('one process per directory: a second process is refused; a lock left by a killed process is taken over', async () => {
    const dataDir = fresh()
    const holder = children.start('hold', dataDir)
    await holder.line(/^open (\d+)$/)
    const error = await pgliteSessionStore({ dataDir }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(DataDirLockedError)
    expect((error as Error).message).toContain(`is open in process ${holder.pid} (lock file ${join(dataDir, LOCK_FILE)})`)
    expect((error as Error).message).toContain('use PostgreSQL (rxagent/postgres) for many processes')
    await holder.kill()
    const store = await pgliteSessionStore({ dataDir })
    await createSession(store, 'after')
    // This process holds it now: another process is refused in turn.
    const second = children.start('hold', dataDir)
    expect(await second.exit()).toMatchObject({ code: 1 })
    expect(second.stderr()).toContain(`is open in process ${process.pid}`)
    await store.close()
  }, 120_000)

  it('a lock of another host is not taken over (its pid cannot be checked)', async () => {
    const dataDir = fresh()
    writeFileSync(join(dataDir, LOCK_FILE), JSON.stringify({ pid: 1, hostname: `not-${hostname()}`, token: 'x' }))
    await expect(pgliteSessionStore({ dataDir })).rejects.toThrow(/open in process 1 on host 'not-.*'.*delete the lock file/)
  })

  it('kill -9 during a stream of appends loses nothing committed; the log decodes and goes on (10 kill points)', async () => {
    const dataDir = fresh()
    let committed = 0
    for (let point = 0; point < 10; point++) {
      // Each writer is a fresh process: it first reports what it found (decoded and checked), then appends.
      const writer = children.start('append', dataDir)
      const found = JSON.parse((await writer.line(/^found (.*)$/))[1]!) as { length: number; problems: string[] }
      expect(found.problems).toEqual([])
      expect(found.length).toBeGreaterThanOrEqual(committed)
      // Killed a few commits later each time, at a moment the child does not choose (mid-append, most likely).
      const target = found.length + 1 + ((point * 7) % 5)
      await writer.line(/^committed (\d+)$/, (m) => Number(m[1]) >= target)
      await writer.kill()
      committed = Math.max(...writer.lines(/^committed (\d+)$/).map((m) => Number(m[1])))
    }
    const store = await pgliteSessionStore({ dataDir })
    const records = await store.read('crash')
    expect(seqs(records).length).toBeGreaterThanOrEqual(committed)
    expect(seqs(records)).toEqual(Array.from({ length: seqs(records).length }, (_, i) => i))
    await expect(store.append('crash', { expectedSeq: seqs(records).length, records: [note(seqs(records).length)] })).resolves.toMatchObject({ length: seqs(records).length + 1 })
    await store.close()
  }, 300_000)
})

