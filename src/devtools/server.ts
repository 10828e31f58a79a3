/**
 * `serveDevtools`: a small `node:http` server for the devtools page — the
 * page's static files and the JSON / server-sent-events API over a
 * {@link SessionStore} (`api.ts`). No framework, no build step.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { listen } from '../node/listen.js'
import { InvalidInputError } from '../types/input.js'
import { errorText } from '../types/codec.js'
import { DevtoolsApi, HttpError, sendJson } from './api.js'
import { decodeDevtoolsOptions, type DevtoolsOptions } from './options.js'
import { loadStaticFiles, type StaticFile } from './static-files.js'

/** A running devtools server. */
export interface DevtoolsServer {
  /** The page's address, `http://host:port/`. */
  readonly url: string
  /** Stops listening, ends the live tails and open connections. Idempotent. Does not close the store. */
  close(): Promise<void>
}

function segmentsOf(pathname: string): string[] {
  return pathname
    .split('/')
    .filter((s) => s !== '')
    .map((s) => {
      try {
        return decodeURIComponent(s)
      } catch {
        throw new HttpError(400, `the path segment '${s}' is not valid percent-encoding`)
      }
    })
}

function serveFile(res: ServerResponse, file: StaticFile): void {
  res.writeHead(200, { 'content-type': file.type, 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' })
  res.end(file.body)
}

/** A request that says it comes from another site's page: refused (the API answers approvals). */
function crossSite(req: IncomingMessage): boolean {
  const origin = req.headers.origin
  if (origin === undefined || origin === 'null') return origin === 'null'
  try {
    return new URL(origin).host !== req.headers.host
  } catch {
    return true
  }
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]'])
const isLoopback = (host: string): boolean => LOOPBACK_NAMES.has(host) || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host)

/** On a loopback address, a request naming another host reached it through a name rebound to this machine (DNS rebinding): refused. */
function foreignHost(req: IncomingMessage): boolean {
  const header = req.headers.host
  if (header === undefined) return true
  try {
    return !isLoopback(new URL(`http://${header}`).hostname)
  } catch {
    return true
  }
}

/**
 * Serves the devtools page for the sessions in `options.store`: their
 * list, each run drawn as a timeline (live while it streams), the message
 * inspector and per-run charts; pending approvals of the sessions in
 * `options.agents` can be answered from the page.
 *
 * ```ts
 * const devtools = await serveDevtools({ store, agents: { [sessionId]: agent }, port: 4477 })
 * console.log(`devtools: ${devtools.url}`)
 * ```
 *
 * @throws InvalidInputError naming the option (`store.events$`, `port`…) when the options do not decode; rejects with the listen error (a port in use).
 */
export async function serveDevtools(options: DevtoolsOptions): Promise<DevtoolsServer> {
  const { store, agents, openAgent, port = 0, host = '127.0.0.1' } = decodeDevtoolsOptions(options)
  const files = await loadStaticFiles()
  const api = new DevtoolsApi(store, agents, openAgent)

  const loopback = isLoopback(host)
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://devtools.invalid')
    const answer = async (): Promise<void> => {
      if (loopback && foreignHost(req)) throw new HttpError(403, `this server listens on ${host} and answers requests for localhost only, not for '${req.headers.host ?? ''}'`)
      if (crossSite(req)) throw new HttpError(403, `requests from another site's page (origin ${req.headers.origin ?? ''}) are refused`)
      const segments = segmentsOf(url.pathname)
      if (segments[0] === 'api') return api.handle(req, res, segments.slice(1), url.searchParams)
      const file = files.get(url.pathname)
      if (file !== undefined && (req.method === 'GET' || req.method === 'HEAD')) return serveFile(res, file)
      throw new HttpError(404, `not found: ${url.pathname}`)
    }
    answer().catch((error: unknown) => {
      const status = error instanceof HttpError ? error.status : error instanceof InvalidInputError ? 400 : 500
      if (res.headersSent) res.end()
      else sendJson(res, status, { error: errorText(error) })
    })
  })

  const origin = await listen(server, port, host)
  let closing: Promise<void> | undefined
  return {
    url: `${origin}/`,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        api.closeTails()
        server.close(() => resolve())
        server.closeAllConnections()
      }).then(() => api.closeOpened())),
  }
}

/**
 * The page's address for one session (`url` of a {@link DevtoolsServer}, or where `rxagent devtools` listens): opening it shows that session.
 *
 * ```ts
 * console.log(`see this run: ${devtoolsSessionUrl(devtools.url, sessionId)}`)
 * ```
 */
export function devtoolsSessionUrl(url: string, sessionId: string): string {
  const base = new URL(url)
  base.hash = `/session/${encodeURIComponent(sessionId)}`
  return base.href
}
