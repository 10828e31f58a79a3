/**
 * `rxagent/pglite`: the session store embedded in this process — PGlite
 * (PostgreSQL compiled to WebAssembly) on a directory, with the schema and
 * SQL of every SQL store (`sql-store.ts`). Zero set-up: real SQL, real
 * transactions, no server.
 *
 * - One process per directory: the directory is locked (`dir-lock.ts`); a
 *   second process gets a `DataDirLockedError` (use PostgreSQL for many).
 * - Durability: PGlite's `relaxedDurability` stays off, so a commit has
 *   reached the files (the operating system) when `append` resolves; a
 *   process killed with SIGKILL loses nothing committed. PGlite on Node does
 *   not fsync (its Node file system has no fsync), so an operating-system
 *   crash or power loss may lose the last commits.
 * - Live tails listen in process (PGlite's LISTEN / NOTIFY).
 * - Statements run prepared (`pglite-driver.ts`): PGlite's SQL costs this
 *   process's CPU.
 *
 * `@electric-sql/pglite` is an optional peer dependency, loaded when a store
 * is opened.
 */
import type { PGlite } from '@electric-sql/pglite'
import { describeValue } from '../types/codec.js'
import { invalidInput } from '../types/input.js'
import { lockDataDir, type DirLock } from './dir-lock.js'
import type { SqlLocation } from './sql/driver.js'
import { pgliteDriver } from './pglite-driver.js'
import { sqlNames } from './sql/driver.js'
import { migrate } from './sql/migrations.js'
import { sqlSessionStore, type SqlSessionStore } from './sql-store.js'

export { DataDirLockedError, LOCK_FILE } from './dir-lock.js'
export { SessionSchemaError, SCHEMA_VERSION } from './sql/migrations.js'
export type { SqlLocation, SqlSessionStore }

/** Where a PGlite store keeps its sessions: a directory it opens (and locks), or a PGlite database the caller opened. */
export type PgliteSessionStoreOptions = SqlLocation & ({ readonly dataDir: string; readonly db?: undefined } | { readonly db: PGlite; readonly dataDir?: undefined })

const ENTRY = 'pgliteSessionStore'

/** Loads PGlite, or says how to install it. */
async function loadPglite(): Promise<typeof import('@electric-sql/pglite')> {
  try {
    return await import('@electric-sql/pglite')
  } catch (error) {
    throw new Error(`${ENTRY} needs the optional peer dependency @electric-sql/pglite: npm install @electric-sql/pglite`, { cause: error })
  }
}

/**
 * Opens (creating and migrating when needed) the session store in
 * `options.dataDir`, or in the PGlite database `options.db` (which the store
 * then neither locks nor closes).
 *
 * @throws DataDirLockedError when another process has the directory open; SessionSchemaError when it was migrated by a newer rxagent; InvalidInputError for bad options.
 */
export async function pgliteSessionStore(options: PgliteSessionStoreOptions): Promise<SqlSessionStore> {
  if (typeof options !== 'object' || options === null) throw invalidInput(ENTRY, 'options', 'options', `expected { dataDir } or { db }, got ${describeValue(options)}`, options)
  const { dataDir, db: given } = options
  if ((dataDir === undefined) === (given === undefined)) {
    throw invalidInput(ENTRY, 'options', 'options', 'expected exactly one of dataDir (a directory to open) or db (an open PGlite)', options)
  }
  if (dataDir !== undefined && (typeof dataDir !== 'string' || dataDir === '')) {
    throw invalidInput(ENTRY, 'options', 'options.dataDir', `expected a directory path, got ${describeValue(dataDir)}`, dataDir)
  }
  const names = sqlNames(ENTRY, options)
  const pglite = await loadPglite()
  let lock: DirLock | undefined
  let db: PGlite
  if (given !== undefined) {
    db = given
  } else {
    lock = await lockDataDir(dataDir!)
    try {
      db = await pglite.PGlite.create({ dataDir: dataDir!, relaxedDurability: false })
    } catch (error) {
      lock.release()
      throw error
    }
  }
  const close = async () => {
    if (given !== undefined) return
    try {
      await db.close()
    } finally {
      lock?.release()
    }
  }
  const driver = pgliteDriver(pglite, db)
  try {
    await migrate(driver, names)
  } catch (error) {
    await close()
    throw error
  }
  return sqlSessionStore(driver, names, async () => {
    // Its statements go first: a database the caller owns stays open.
    if (given !== undefined) await driver.close()
    await close()
  })
}
