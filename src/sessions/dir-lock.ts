/**
 * One process per PGlite data directory: a lock file in the directory holding
 * the owner's pid and host. PGlite is PostgreSQL in this process's memory
 * writing files directly; two processes on one directory would corrupt it.
 *
 * - The lock file is created exclusively (`wx`): one opener wins.
 * - A lock of a pid that no longer runs on this host is stale and taken over
 *   (one taker at a time, through an exclusive `takeover` directory).
 * - A live holder, or a holder on another host (whose pid cannot be checked),
 *   is refused with an error naming it and the lock file.
 * - The lock is removed at release, and at process exit if still held.
 */
import { closeSync, mkdirSync, openSync, readFileSync, rmdirSync, statSync, unlinkSync, writeSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'

/** The lock file's name inside the data directory. */
export const LOCK_FILE = 'rxagent-pglite.lock'

/** A takeover directory older than this is left from a crash during a takeover: removed. */
const STALE_TAKEOVER_MS = 10_000

interface LockOwner {
  readonly pid: number
  readonly hostname: string
  readonly token: string
}

/** A held lock. */
export interface DirLock {
  readonly path: string
  /** Removes the lock file if it is still this lock's. Idempotent. */
  release(): void
}

/** The data directory is open in another process. */
export class DataDirLockedError extends Error {
  override readonly name = 'DataDirLockedError'
  constructor(
    readonly dataDir: string,
    readonly pid: number,
    readonly host: string,
    readonly lockFile: string,
  ) {
    const where = host === hostname() ? `process ${pid}` : `process ${pid} on host '${host}'`
    const gone = host === hostname() ? '' : `; if that process is gone, delete the lock file`
    super(
      `pgliteSessionStore: the data directory ${dataDir} is open in ${where} (lock file ${lockFile}${gone}). ` +
        `PGlite serves one process: use PostgreSQL (rxagent/postgres) for many processes`,
    )
  }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function readOwner(path: string): LockOwner | undefined {
  try {
    const owner = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockOwner>
    if (typeof owner.pid === 'number' && typeof owner.hostname === 'string' && typeof owner.token === 'string') return owner as LockOwner
  } catch {
    // Missing, or half-written by a process killed while writing it: treated as stale below.
  }
  return undefined
}

function create(path: string, owner: LockOwner): boolean {
  let fd: number
  try {
    fd = openSync(path, 'wx')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  }
  try {
    writeSync(fd, JSON.stringify(owner))
  } finally {
    closeSync(fd)
  }
  return true
}

/** Runs `fn` as the only taker-over of `path`'s stale lock; `false` when another process is taking over now. */
function asTaker(path: string, fn: () => void): boolean {
  const guard = `${path}.takeover`
  try {
    mkdirSync(guard)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    if (Date.now() - statSync(guard, { throwIfNoEntry: false })!.mtimeMs < STALE_TAKEOVER_MS) return false
    rmdirSync(guard)
    mkdirSync(guard)
  }
  try {
    fn()
  } finally {
    rmdirSync(guard)
  }
  return true
}

/** A lock file that does not parse and is younger than this may be being written: waited for, not taken over. */
const WRITING_MS = 2_000

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Locks `dataDir` (created if missing) for this process.
 * @throws DataDirLockedError when another live process (or one on another host) holds it.
 */
export async function lockDataDir(dataDir: string): Promise<DirLock> {
  mkdirSync(dataDir, { recursive: true })
  const path = join(dataDir, LOCK_FILE)
  const owner: LockOwner = { pid: process.pid, hostname: hostname(), token: randomUUID() }
  const deadline = Date.now() + 30_000
  for (;;) {
    if (create(path, owner)) break
    const holder = readOwner(path)
    if (holder !== undefined && (holder.hostname !== owner.hostname || alive(holder.pid))) {
      throw new DataDirLockedError(dataDir, holder.pid, holder.hostname, path)
    }
    const mtime = holder === undefined ? statSync(path, { throwIfNoEntry: false })?.mtimeMs : undefined
    let taken = false
    const waiting = mtime !== undefined && Date.now() - mtime < WRITING_MS
    // Stale: its process is gone (or it was never fully written). Take it over, one taker at a time.
    if (!waiting) {
      asTaker(path, () => {
        if (readOwner(path)?.token !== holder?.token) return // Someone took it over meanwhile: look again.
        try {
          unlinkSync(path)
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
        }
        taken = create(path, owner)
      })
    }
    if (taken) break
    if (Date.now() > deadline) throw new Error(`pgliteSessionStore: could not take the lock ${path}: it stayed unreadable or kept being taken over for 30 s`)
    await pause(10)
  }
  let held = true
  const release = () => {
    if (!held) return
    held = false
    process.removeListener('exit', release)
    if (readOwner(path)?.token === owner.token) unlinkSync(path)
  }
  process.on('exit', release)
  return { path, release }
}
