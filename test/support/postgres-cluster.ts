/**
 * A throwaway PostgreSQL cluster for a test file, from the installed
 * binaries: `initdb` into a temporary directory, started on a free port of
 * 127.0.0.1 (and a Unix socket in the same directory) with `fsync=on`,
 * stopped and removed after the file (and at process exit, whatever
 * happened). As root, the cluster runs as the `postgres` user (PostgreSQL
 * refuses to run as root).
 *
 * Where the binaries are missing, {@link describePostgres} skips its suite
 * with a title saying what to install: never a failure, never a silent pass.
 *
 *   describePostgres('postgresSessionStore', (cluster) => {
 *     it('…', async () => { const url = await cluster().createDatabase() })
 *   })
 */
import { afterAll, beforeAll, describe } from 'vitest'
import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'

/** What installs the binaries on Debian / Ubuntu (what `.ci/run` does). */
export const INSTALL_HINT = 'apt-get install -y postgresql'

/** `initdb` and `pg_ctl`: on PATH, else the newest /usr/lib/postgresql/<version>/bin; `undefined` when neither has them. */
export function postgresBinaries(): { initdb: string; pgCtl: string } | undefined {
  const onPath = (name: string) => spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim()
  const initdb = onPath('initdb')
  const pgCtl = onPath('pg_ctl')
  if (initdb !== '' && pgCtl !== '') return { initdb, pgCtl }
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const versions = readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb')) && existsSync(join(root, v, 'bin', 'pg_ctl')))
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0]
  return newest === undefined ? undefined : { initdb: join(root, newest, 'bin', 'initdb'), pgCtl: join(root, newest, 'bin', 'pg_ctl') }
}

/** A running cluster. */
export interface PostgresCluster {
  /** A connection string to `database` (default `postgres`) as the superuser `postgres`. */
  url(database?: string): string
  /** Creates a fresh database and returns its connection string. */
  createDatabase(): Promise<string>
  /** Stops the cluster (immediately) and removes its directory. Idempotent. */
  stop(): void
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))))
    })
  })

/** Starts a cluster (see the module comment). */
export async function startPostgres(): Promise<PostgresCluster> {
  const binaries = postgresBinaries()
  if (binaries === undefined) throw new Error(`PostgreSQL binaries not found: ${INSTALL_HINT}`)
  const dir = mkdtempSync(join(tmpdir(), 'rxagent-pg-'))
  const data = join(dir, 'data')
  const root = process.getuid?.() === 0
  if (root) {
    const { uid, gid } = (() => {
      const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim())
      return { uid: id('-u'), gid: id('-g') }
    })()
    chownSync(dir, uid, gid)
    chmodSync(dir, 0o700)
  }
  const run = (file: string, args: string[]) => (root ? execFileSync('runuser', ['-u', 'postgres', '--', file, ...args], { stdio: 'pipe' }) : execFileSync(file, args, { stdio: 'pipe' }))
  let stopped = false
  const stop = () => {
    if (stopped) return
    stopped = true
    process.removeListener('exit', stop)
    try {
      run(binaries.pgCtl, ['stop', '-D', data, '-m', 'immediate', '-w'])
    } catch {
      // Not running (it failed to start, or was stopped already).
    }
    rmSync(dir, { recursive: true, force: true })
  }
  process.on('exit', stop)
  try {
    run(binaries.initdb, ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync'])
    let port = 0
    for (let attempt = 0; ; attempt++) {
      port = await freePort()
      const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=on -c max_connections=200`
      try {
        run(binaries.pgCtl, ['start', '-D', data, '-w', '-t', '120', '-l', join(dir, 'log'), '-o', options])
        break
      } catch (error) {
        if (attempt >= 2) throw error // The port was taken between choosing and starting: try another, twice.
      }
    }
    let databases = 0
    const url = (database = 'postgres') => `postgresql://postgres@127.0.0.1:${port}/${database}`
    return {
      url,
      stop,
      async createDatabase() {
        const name = `test_${process.pid}_${++databases}`
        const admin = new pg.Client({ connectionString: url() })
        await admin.connect()
        try {
          await admin.query(`CREATE DATABASE ${name}`)
        } finally {
          await admin.end()
        }
        return url(name)
      },
    }
  } catch (error) {
    stop()
    throw error
  }
}

/**
 * `describe(name, fn)` with a cluster started before its tests and stopped
 * after them; `describe.skip` with the install command in its title when
 * PostgreSQL is not installed.
 */
export function describePostgres(name: string, fn: (cluster: () => PostgresCluster) => void): void {
  if (postgresBinaries() === undefined) {
    console.warn(`${name}: skipped, PostgreSQL is not installed (${INSTALL_HINT})`)
    // The body still runs so that every test is listed (and counted) as skipped; none of them runs, so the
    // cluster getter is never called — if it were, it would say why rather than hand out a fake cluster.
    const absent = (): PostgresCluster => {
      throw new Error(`PostgreSQL is not installed (${INSTALL_HINT})`)
    }
    describe.skip(`${name} (skipped: PostgreSQL is not installed; ${INSTALL_HINT})`, () => fn(absent))
    return
  }
  describe(name, () => {
    let cluster: PostgresCluster | undefined
    beforeAll(async () => {
      cluster = await startPostgres()
    }, 180_000)
    afterAll(() => cluster?.stop())
    fn(() => {
      if (cluster === undefined) throw new Error('the PostgreSQL cluster did not start')
      return cluster
    })
  })
}
