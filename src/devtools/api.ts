/**
 * The devtools' JSON endpoints over a {@link SessionStore}:
 *
 * - `GET  /api/info`: the store's kind, the sessions held by registered live agents
 * - `GET  /api/sessions?q=&limit=`: sessions, newest update first; `q` matches a substring of the session or agent id
 * - `GET  /api/sessions/:id`: the session's info and its timeline (`timeline.ts`)
 * - `GET  /api/sessions/:id/records?from=&limit=`: its records after position `from`
 * - `GET  /api/sessions/:id/events?from=` (or `Last-Event-ID`): the live tail as server-sent events, `id:` the position
 * - `POST /api/sessions/:id/approvals/:toolCallId` `{ approved: true, args? } | { approved: false, reason? }`: answers a pending approval through the live agent (registered, or opened with `openAgent` when the session's lease is free)
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { Subscription } from 'rxjs'
import type { SessionRecord, SessionStore } from '../agent/session-store.js'
import { errorText } from '../types/codec.js'
import { SessionLeaseError } from '../agent/session-store.js'
import { agentFor, decodeApprovalAnswer, type DevtoolsAgent, type DevtoolsAgents, type OpenedAgent } from './options.js'
import { sessionTimeline } from './timeline.js'

/** An answer other than 200, with what went wrong. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

/** At most this many records per `read` while a whole session is read. */
const PAGE = 1000
/** Largest request body accepted (an approval's arguments). */
const MAX_BODY = 1 << 20

/** Answers with `value` as JSON. */
export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value)
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' })
  res.end(body)
}

function count(params: URLSearchParams, name: string, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = params.get(name)
  if (raw === null || raw === '') return fallback
  const n = Number(raw)
  if (!Number.isInteger(n) || n < 0) throw new HttpError(400, `query parameter '${name}' must be a non-negative integer, got '${raw}'`)
  return Math.min(n, max)
}

async function readAll(store: SessionStore, sessionId: string): Promise<SessionRecord[]> {
  const all: SessionRecord[] = []
  for (;;) {
    const page = await store.read(sessionId, { from: all.at(-1)?.position ?? 0, limit: PAGE })
    all.push(...page)
    if (page.length < PAGE) return all
  }
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const type = req.headers['content-type'] ?? ''
  // A JSON content type cannot be sent cross-site without a preflight, which this server never grants.
  if (!/^application\/json\b/i.test(type)) throw new HttpError(415, `the body must be JSON (content-type: application/json), got '${type}'`)
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > MAX_BODY) throw new HttpError(413, `the body is larger than ${MAX_BODY} bytes`)
    chunks.push(chunk)
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'))
  } catch (error) {
    throw new HttpError(400, `the body is not valid JSON: ${errorText(error)}`)
  }
}

/** The API's state: the store, the live agents, the open live tails (closed with the server). */
export class DevtoolsApi {
  readonly tails = new Set<{ readonly res: ServerResponse; readonly sub: Subscription }>()
  /** Sessions `openAgent` opened here, until their run ends. */
  readonly opened = new Map<string, Promise<OpenedAgent>>()

  constructor(
    readonly store: SessionStore,
    readonly agents: DevtoolsAgents | undefined,
    readonly openAgent: ((sessionId: string) => Promise<OpenedAgent>) | undefined,
  ) {}

  private live(sessionId: string): boolean {
    return agentFor(this.agents, sessionId) !== undefined || this.opened.has(sessionId)
  }

  /** The agent that answers `sessionId`'s approvals: a registered one, one opened here before, or one `openAgent` opens now. */
  private async agentFor(sessionId: string): Promise<DevtoolsAgent> {
    const registered = agentFor(this.agents, sessionId)
    if (registered !== undefined) return registered
    const opened = this.opened.get(sessionId)
    if (opened !== undefined) return opened
    if (this.openAgent === undefined) {
      throw new HttpError(409, `no live agent holds session '${sessionId}' here: pass it to serveDevtools({ agents: { '${sessionId}': agent } }), or give serveDevtools an openAgent, to answer its approvals from the page`)
    }
    const opening = this.openAgent(sessionId)
    this.opened.set(sessionId, opening)
    try {
      return await opening
    } catch (error) {
      this.opened.delete(sessionId)
      if (error instanceof SessionLeaseError) {
        const by = error.heldBy === undefined ? 'another process' : `'${error.heldBy.holder}' (until ${new Date(error.heldBy.expiresAt).toISOString()})`
        throw new HttpError(409, `session '${sessionId}' is held by ${by}: answer from that process, or register its agent with serveDevtools({ agents })`)
      }
      throw error
    }
  }

  private async release(sessionId: string): Promise<void> {
    const opening = this.opened.get(sessionId)
    this.opened.delete(sessionId)
    await (await opening?.catch(() => undefined))?.session?.close().catch(() => undefined)
  }

  /** Closes the sessions opened here (a run still waiting for an approval stays pending in the log). */
  async closeOpened(): Promise<void> {
    await Promise.all([...this.opened.keys()].map((id) => this.release(id)))
  }

  /** Answers `req` (its path split into decoded segments after `/api`). */
  async handle(req: IncomingMessage, res: ServerResponse, segments: readonly string[], params: URLSearchParams): Promise<void> {
    const method = req.method ?? 'GET'
    const [first, id, sub, toolCallId, ...rest] = segments
    if (first === 'info' && segments.length === 1 && method === 'GET') return sendJson(res, 200, this.info())
    if (first !== 'sessions' || rest.length > 0) throw new HttpError(404, `no such endpoint: ${method} /api/${segments.join('/')}`)
    if (id === undefined && method === 'GET') return sendJson(res, 200, await this.list(params))
    if (id !== undefined && sub === undefined && method === 'GET') return sendJson(res, 200, await this.session(id))
    if (id !== undefined && sub === 'records' && toolCallId === undefined && method === 'GET') {
      return sendJson(res, 200, await this.store.read(id, { from: count(params, 'from', 0), limit: count(params, 'limit', PAGE, PAGE) }))
    }
    if (id !== undefined && sub === 'events' && toolCallId === undefined && method === 'GET') return this.tail(req, res, id, params)
    if (id !== undefined && sub === 'approvals' && toolCallId !== undefined && method === 'POST') return sendJson(res, 200, await this.answer(req, id, toolCallId))
    throw new HttpError(method === 'GET' || method === 'POST' ? 404 : 405, `no such endpoint: ${method} /api/${segments.join('/')}`)
  }

  info(): { readonly storeKind: string; readonly liveSessions: readonly string[]; readonly opensSessions: boolean } {
    const { agents } = this
    const live = agents === undefined || typeof agents === 'function' ? [] : agents instanceof Map ? [...agents.keys()] : Object.keys(agents)
    return { storeKind: this.store.kind, liveSessions: [...new Set([...live, ...this.opened.keys()])], opensSessions: this.openAgent !== undefined }
  }

  async list(params: URLSearchParams) {
    const q = (params.get('q') ?? '').trim().toLowerCase()
    const limit = count(params, 'limit', 100, 1000)
    const prefix = params.get('prefix') ?? undefined
    const sessions = await this.store.list({ ...(prefix === undefined ? {} : { prefix }), limit: q === '' ? limit : 1000 })
    const found = q === '' ? sessions : sessions.filter((s) => s.sessionId.toLowerCase().includes(q) || s.agentId.toLowerCase().includes(q))
    return found.slice(0, limit).map((s) => ({ ...s, live: this.live(s.sessionId) }))
  }

  async session(sessionId: string) {
    const info = await this.store.info(sessionId)
    if (info === undefined) throw new HttpError(404, `no session '${sessionId}' in the ${this.store.kind} store`)
    const timeline = sessionTimeline(sessionId, await readAll(this.store, sessionId))
    return { info: { ...info, live: this.live(sessionId) }, timeline }
  }

  async answer(req: IncomingMessage, sessionId: string, toolCallId: string) {
    const decision = decodeApprovalAnswer(await readBody(req), `POST /api/sessions/${sessionId}/approvals/${toolCallId}`)
    const agent = await this.agentFor(sessionId)
    const opened = this.opened.get(sessionId)
    const answered = agent.resolveApproval(toolCallId, decision)
    if (opened !== undefined) {
      // Opened here: once the resumed run is over (or at once, when nothing was answered) the session is given back, its lease released.
      if (answered) void (agent as OpenedAgent).waitForIdle().then(() => this.release(sessionId), () => this.release(sessionId))
      else void this.release(sessionId)
    }
    if (!answered) throw new HttpError(404, `session '${sessionId}' has no pending approval for tool call '${toolCallId}'`)
    return { answered: true, toolCallId, approved: decision.approved }
  }

  tail(req: IncomingMessage, res: ServerResponse, sessionId: string, params: URLSearchParams): void {
    const lastEventId = req.headers['last-event-id']
    const from = typeof lastEventId === 'string' && /^\d+$/.test(lastEventId) ? Number(lastEventId) : count(params, 'from', 0)
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive' })
    res.write(': rxagent devtools\n\n')
    const sub = new Subscription()
    const entry = { res, sub }
    this.tails.add(entry)
    const done = (): void => {
      sub.unsubscribe()
      this.tails.delete(entry)
    }
    // The response closes when the page goes away (or the server ends it): the store's tail is released.
    res.on('close', done)
    sub.add(
      this.store.events$(sessionId, { from }).subscribe({
        next: (record) => res.write(`id: ${record.position}\nevent: record\ndata: ${JSON.stringify(record)}\n\n`),
        error: (error: unknown) => {
          res.end(`event: failed\ndata: ${JSON.stringify({ error: errorText(error) })}\n\n`)
          done()
        },
        complete: () => {
          res.end()
          done()
        },
      }),
    )
  }

  /** Ends every live tail (the server is closing). */
  closeTails(): void {
    for (const { res, sub } of this.tails) {
      sub.unsubscribe()
      res.end()
    }
    this.tails.clear()
  }
}
