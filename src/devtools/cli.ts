/**
 * `rxagent devtools [--store <spec>] [--port <n>] [--host <h>]`: opens a
 * session store and serves the devtools page over it until interrupted.
 * `npm run devtools` runs it on the demo's store.
 *
 * Store specs: `pglite:<dir>` (default `pglite:.rxagent/demo-session`, the
 * demo's), `postgres://…` / `postgresql://…`. Their drivers are optional
 * peers, loaded only when asked for.
 */
import type { SessionStore } from '../agent/session-store.js'
import { serveDevtools, type DevtoolsServer } from './server.js'

/** Where `npm run devtools` looks by default: the demo keeps its session there. */
export const DEFAULT_DEVTOOLS_STORE = 'pglite:.rxagent/demo-session'
/** The port `rxagent devtools` listens on unless told otherwise. */
export const DEFAULT_DEVTOOLS_PORT = 4477

/** What `rxagent devtools --help` prints. */
export const DEVTOOLS_USAGE = `usage: rxagent devtools [--store <spec>] [--port <n>] [--host <h>]

Serves the devtools page (sessions, run timelines, messages, approvals) over a session store.

  --store <spec>   pglite:<dir>                 a PGlite store kept in <dir> (default: ${DEFAULT_DEVTOOLS_STORE})
                   postgres://user@host/db      a PostgreSQL store (also postgresql://)
  --port <n>       the port to listen on (default ${DEFAULT_DEVTOOLS_PORT}; 0 for a free one)
  --host <h>       the address to listen on (default 127.0.0.1)
`

/** What the command line asked for. */
export interface DevtoolsArgs {
  readonly store: string
  readonly port: number
  readonly host: string
  readonly help: boolean
}

/** A command line that cannot be run: the message says what is wrong; the usage follows it. */
export class UsageError extends Error {
  override readonly name = 'UsageError'
}

/** Parses `devtools`'s arguments (after the command name). @throws UsageError naming the flag. */
export function parseDevtoolsArgs(argv: readonly string[]): DevtoolsArgs {
  let store = DEFAULT_DEVTOOLS_STORE
  let port = DEFAULT_DEVTOOLS_PORT
  let host = '127.0.0.1'
  let help = false
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined]
    const value = (): string => {
      const v = inline ?? argv[++i]
      if (v === undefined || v === '') throw new UsageError(`${flag} needs a value`)
      return v
    }
    switch (flag) {
      case '--store':
        store = value()
        break
      case '--port': {
        const v = value()
        port = Number(v)
        if (!/^\d+$/.test(v) || port > 65535) throw new UsageError(`--port must be a whole number from 0 to 65535, got '${v}'`)
        break
      }
      case '--host':
        host = value()
        break
      case '-h':
      case '--help':
        help = true
        break
      default:
        throw new UsageError(`unknown argument '${arg}'`)
    }
  }
  return { store, port, host, help }
}

/** The stores a spec can name, each loaded only when asked for. */
export interface StoreOpeners {
  readonly pglite: (dataDir: string) => Promise<SessionStore>
  readonly postgres: (connectionString: string) => Promise<SessionStore>
}

/** Opens the store `spec` names. @throws UsageError for a spec of no known kind. */
export async function openStore(spec: string, openers: StoreOpeners): Promise<SessionStore> {
  if (spec.startsWith('pglite:')) {
    const dir = spec.slice('pglite:'.length)
    if (dir === '') throw new UsageError(`--store pglite:<dir> needs a directory, got '${spec}'`)
    return openers.pglite(dir)
  }
  if (/^postgres(ql)?:\/\//.test(spec)) return openers.postgres(spec)
  throw new UsageError(`--store must be pglite:<dir> or postgres://…, got '${spec}'`)
}

/** Serves the devtools as the command line asks, until the process is interrupted (then closes the server and the store). */
export async function runDevtools(args: DevtoolsArgs, openers: StoreOpeners, print: (line: string) => void = console.log): Promise<{ server: DevtoolsServer; store: SessionStore; stop: () => Promise<void> }> {
  const store = await openStore(args.store, openers)
  let server: DevtoolsServer
  try {
    server = await serveDevtools({ store, port: args.port, host: args.host })
  } catch (error) {
    await store.close()
    throw error
  }
  print(`rxagent devtools: ${server.url} (${store.kind} store ${args.store.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@')})`)
  const stop = async () => {
    await server.close()
    await store.close()
  }
  return { server, store, stop }
}
