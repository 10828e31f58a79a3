/**
 * What `serveDevtools` takes, decoded once at the entry: the store to read,
 * the live agents that can answer approvals, where to listen.
 */
import * as t from 'io-ts'
import type { ApprovalDecision } from '../policy/approval.js'
import type { SessionStore } from '../agent/session-store.js'
import { JsonObject, NonNegativeInteger, struct } from '../types/codec.js'
import { decodeInput } from '../types/input.js'
import { FunctionValue } from '../types/tool.js'

/** What the devtools need of a live agent: answering its pending approvals (an `Agent` fits). */
export interface DevtoolsAgent {
  resolveApproval(toolCallId: string, decision: ApprovalDecision): boolean
}

/** An agent `openAgent` opened: answers approvals, says when its run is over, and closes its session (an `Agent` from `Agent.open` fits). */
export interface OpenedAgent extends DevtoolsAgent {
  waitForIdle(): Promise<void>
  readonly session?: { close(): Promise<void> } | undefined
}

/** The live agents by session id: a record, a `Map`, or a lookup function. */
export type DevtoolsAgents = Readonly<Record<string, DevtoolsAgent>> | ReadonlyMap<string, DevtoolsAgent> | ((sessionId: string) => DevtoolsAgent | undefined)

/** What {@link serveDevtools} takes. */
export interface DevtoolsOptions {
  /** The sessions to show (any {@link SessionStore}: memory, PGlite, PostgreSQL). The server does not close it. */
  readonly store: SessionStore
  /** Live agents whose pending approvals the page may answer, by session id. */
  readonly agents?: DevtoolsAgents
  /**
   * Opens a session no registered agent holds, to answer its pending approval
   * here — typically `(sessionId) => Agent.open({ store, sessionId, streamFn, tools })`:
   * the run resumes in this process (it needs the model and the tools). The
   * session's lease decides: while another process holds it, the answer is
   * refused (409) naming the holder. The session is closed when its run ends, or with the server.
   */
  readonly openAgent?: (sessionId: string) => Promise<OpenedAgent>
  /** Default 0: a free port (read it from `url`). */
  readonly port?: number
  /** Default `127.0.0.1`: the page answers approvals, so it listens on loopback unless told otherwise. */
  readonly host?: string
}

const Port = new t.Type<number, number, unknown>(
  'Port (0–65535)',
  (u): u is number => NonNegativeInteger.is(u) && u <= 65535,
  (u, c) => (NonNegativeInteger.is(u) && u <= 65535 ? t.success(u) : t.failure(u, c)),
  t.identity,
)

const StoreShape = t.type({ kind: t.string, read: FunctionValue, events$: FunctionValue, info: FunctionValue, list: FunctionValue }, 'SessionStore')

const AgentShape = t.type({ resolveApproval: FunctionValue }, 'DevtoolsAgent')

const Agents = new t.Type<DevtoolsAgents, DevtoolsAgents, unknown>(
  'Record<string, DevtoolsAgent> | Map<string, DevtoolsAgent> | ((sessionId) => DevtoolsAgent | undefined)',
  (u): u is DevtoolsAgents => typeof u === 'function' || u instanceof Map || t.record(t.string, AgentShape).is(u),
  (u, c) => {
    if (typeof u === 'function') return t.success(u as DevtoolsAgents)
    if (u instanceof Map) {
      for (const [key, agent] of u) {
        if (typeof key !== 'string') return t.failure(key, c, `a session id (a string) as the map's key, got ${typeof key}`)
        const checked = AgentShape.validate(agent, t.appendContext(c, key, AgentShape, agent))
        if (checked._tag === 'Left') return checked
      }
      return t.success(u as ReadonlyMap<string, DevtoolsAgent>)
    }
    return t.record(t.string, AgentShape).validate(u, c) as t.Validation<DevtoolsAgents>
  },
  t.identity,
)

const Options = struct('DevtoolsOptions', { store: StoreShape }, { agents: Agents, openAgent: FunctionValue, port: Port, host: t.string })

/** Decodes `serveDevtools`'s options. @throws InvalidInputError naming the path (`store.events$`, `port`…). */
export function decodeDevtoolsOptions(u: unknown): DevtoolsOptions {
  decodeInput(Options, u, 'serveDevtools', 'options')
  return u as DevtoolsOptions
}

/** The live agent holding `sessionId`, if one was registered. */
export function agentFor(agents: DevtoolsAgents | undefined, sessionId: string): DevtoolsAgent | undefined {
  if (agents === undefined) return undefined
  if (typeof agents === 'function') return agents(sessionId)
  if (agents instanceof Map) return agents.get(sessionId)
  return Object.prototype.hasOwnProperty.call(agents, sessionId) ? (agents as Readonly<Record<string, DevtoolsAgent>>)[sessionId] : undefined
}

const ApprovalAnswerShape = struct('ApprovalAnswer', { approved: t.boolean }, { args: JsonObject, reason: t.string })

/**
 * Decodes the body of `POST /api/sessions/:id/approvals/:toolCallId`: `{ approved: true, args? }` (run it, possibly with other arguments) or `{ approved: false, reason? }`.
 * @throws InvalidInputError naming the path (`body.approved`).
 */
export function decodeApprovalAnswer(u: unknown, entry: string): ApprovalDecision {
  const answer = decodeInput(ApprovalAnswerShape, u, entry, 'body', 'body')
  if (answer.approved) return answer.args === undefined ? { approved: true } : { approved: true, args: answer.args }
  return answer.reason === undefined ? { approved: false } : { approved: false, reason: answer.reason }
}
