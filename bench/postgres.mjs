// A throwaway PostgreSQL cluster for the DURABLE rows: `initdb` into a temp directory, a free port
// on 127.0.0.1, started with `pg_ctl`, stopped and removed at the end (also when the process exits).
// From the installed binaries (PATH, then /usr/lib/postgresql/*/bin); as root, as the `postgres` user.
import { execFileSync, spawnSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export const installHint = 'apt-get install -y postgresql'

/** The directory holding `initdb` and `pg_ctl`, or undefined. */
export function postgresBinaries() {
  const onPath = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' })
  if (onPath.status === 0 && onPath.stdout.trim() !== '') {
    const dir = onPath.stdout.trim().replace(/\/initdb$/, '')
    if (existsSync(join(dir, 'pg_ctl'))) return dir
  }
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const versions = readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a))
  return versions.length > 0 ? join(root, versions[0], 'bin') : undefined
}

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })

/**
 * Starts a cluster; resolves to `{ url, stop(), dataDir }` (`url`: a connection string to the `postgres`
 * database as the `postgres` superuser, trust authentication), or `{ skipped }` saying why not.
 * `settings`: more server settings (`{ max_connections: 200 }`).
 */
export async function startCluster({ settings = {} } = {}) {
  const bin = postgresBinaries()
  if (bin === undefined) return { skipped: `no PostgreSQL binaries (initdb, pg_ctl) found: ${installHint}` }
  const dir = mkdtempSync(join(tmpdir(), 'rxagent-bench-pg-'))
  const data = join(dir, 'data')
  const root = process.getuid?.() === 0
  if (root) chownSync(dir, Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })))
  // initdb refuses to run as root: run the binaries as `postgres` then.
  const run = (tool, args) => {
    const [file, argv] = root ? ['runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]] : [join(bin, tool), args]
    const out = spawnSync(file, argv, { encoding: 'utf8', cwd: dir })
    if (out.status !== 0) throw new Error(`${tool} failed (${out.status}): ${out.stderr || out.stdout}`)
  }
  const port = await freePort()
  let stopped = false
  const stop = () => {
    if (stopped) return
    stopped = true
    try {
      if (existsSync(join(data, 'postmaster.pid'))) run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop'])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
  process.once('exit', stop)
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      stop()
      process.exit(128 + (signal === 'SIGINT' ? 2 : 15))
    })
  }
  try {
    run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync'])
    run('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=on${Object.entries(settings).map(([k, v]) => ` -c ${k}=${v}`).join('')}`, '-w', 'start'])
  } catch (error) {
    stop()
    return { skipped: `could not start a PostgreSQL cluster: ${error.message.split('\n')[0]}` }
  }
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, stop, dataDir: data }
}
