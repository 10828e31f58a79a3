// The stores of the DURABLE rows, one per worker process, made before any timing: the memory store,
// PGlite in a temp directory, PostgreSQL in a fresh database of the cluster run.mjs started
// (RXAGENT_BENCH_POSTGRES_URL; absent: the PostgreSQL rows are skipped). `closeStores()` closes
// them and removes what they left (temp directory, database).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const opened = []

const makers = {
  async memory() {
    const { memorySessionStore } = await import('../dist/src/sessions/index.js')
    const store = memorySessionStore()
    return { store, close: () => store.close() }
  },
  async pglite() {
    const { pgliteSessionStore } = await import('../dist/src/sessions/pglite-store.js')
    const dataDir = mkdtempSync(join(tmpdir(), 'rxagent-bench-pglite-'))
    const store = await pgliteSessionStore({ dataDir })
    return {
      store,
      close: async () => {
        await store.close()
        rmSync(dataDir, { recursive: true, force: true })
      },
    }
  },
  async postgres() {
    const url = process.env.RXAGENT_BENCH_POSTGRES_URL
    if (url === undefined || url === '') return { skipped: 'no PostgreSQL cluster (run.mjs starts one when the binaries are installed: apt-get install -y postgresql)' }
    const built = await import('../dist/src/sessions/postgres-store.js').catch((error) => error)
    if (built instanceof Error) return { skipped: `no PostgreSQL store in this build (dist/src/sessions/postgres-store.js: ${built.code ?? built.message.split('\n')[0]})` }
    const { default: pg } = await import('pg')
    const database = `bench_${process.pid}_${Date.now()}`
    const admin = new pg.Client({ connectionString: url })
    await admin.connect()
    await admin.query(`CREATE DATABASE ${database}`)
    await admin.end()
    const target = new URL(url)
    target.pathname = `/${database}`
    const store = await built.postgresSessionStore({ connectionString: target.href })
    return {
      store,
      close: async () => {
        await store.close()
        const drop = new pg.Client({ connectionString: url })
        await drop.connect()
        await drop.query(`DROP DATABASE IF EXISTS ${database}`)
        await drop.end()
      },
    }
  },
}

const cache = new Map()

/** The process's store of `kind` (`memory`, `pglite`, `postgres`), made once: `{ store }`, or `{ skipped }` saying why it cannot be had here. */
export function made(kind) {
  if (!cache.has(kind)) {
    cache.set(
      kind,
      makers[kind]().then((it) => {
        if (it.store !== undefined) opened.push(it)
        return it
      }),
    )
  }
  return cache.get(kind)
}

/** The process's store of `kind`. @throws when it cannot be had here (`made(kind).skipped` says why). */
export async function storeOf(kind) {
  const it = await made(kind)
  if (it.store === undefined) throw new Error(`no ${kind} store: ${it.skipped}`)
  return it.store
}

/** Closes every store this process made. */
export async function closeStores() {
  for (const made of opened.splice(0)) await made.close()
}
