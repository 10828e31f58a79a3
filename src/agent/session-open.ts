/**
 * `Agent.open`: takes a session's lease, reads its records, restores the
 * agent from its log (or starts a new one), settles a run its last process
 * left in the middle, and attaches the writer that commits every entry from
 * then on. Only the `SessionStore` port is used: the stores live elsewhere.
 *
 * Settling a run cut off mid-way (the log has `runStart` and no end):
 * - waiting for approvals (`approvalRequested` without `approvalDecided`):
 *   nothing is appended. The run is suspended: `state.pendingApprovals`
 *   lists the calls; `resolveApproval` resumes it (the same run, logged as
 *   `runResumed`), `abort` gives it up.
 * - otherwise: the message that was streaming is rebuilt from the stream
 *   records after the last entry and logged as `aborted` (when it has
 *   content), then `runFailed` ({@link PROCESS_STOPPED}) gives every
 *   unanswered tool call an error result. Both are committed before `open`
 *   resolves; `continue()` goes on. Tool calls whose results were committed
 *   are not run again.
 */
import * as t from 'io-ts'
import { asyncScheduler, firstValueFrom, timer, type SchedulerLike } from 'rxjs'
import { MessageFold } from '../stream/message-fold.js'
import type { ProviderChunk } from '../types/chunk.js'
import { NonNegativeNumber, describeValue } from '../types/codec.js'
import { decodeInput, invalidInput } from '../types/input.js'
import type { AssistantMessage } from '../types/message.js'
import type { ModelSpec } from '../types/model.js'
import { FunctionValue } from '../types/tool.js'
import type { AgentOptions } from './agent-options.js'
import { AgentSession } from './agent-session.js'
import { AgentLogEntry, decodeAgentLog, isAgentLogEntry } from './agent-log.js'
import { wasDecoded } from './decoded-records.js'
import type { AgentStore } from './agent-store.js'
import type { Runner } from './agent-run.js'
import { PROCESS_STOPPED, replayOfEntries, type LogReplay } from './log-replay.js'
import { SessionLeaseError, StreamRecord, type SessionRecord, type SessionStore } from './session-store.js'
import { SessionWriter } from './session-writer.js'
import { replayRouter, type ReplayGate } from './session-replay.js'

/** How long a lease lasts unless renewed (it is renewed every third of it). */
export const DEFAULT_LEASE_TTL_MS = 15_000

/** The lease `Agent.open` takes: one writer per session. */
export interface SessionLeaseOptions {
  /** Default {@link DEFAULT_LEASE_TTL_MS}; renewed every `ttlMs / 3` on the agent's scheduler. A holder that died loses it after this. */
  readonly ttlMs?: number
  /** When another holder has it: `error` (default) rejects with a `SessionLeaseError`; `wait` polls until it is free, for at most `waitMs`. */
  readonly onBusy?: 'error' | 'wait'
  /** How long `wait` waits (default: `ttlMs`, long enough for a dead holder's lease to expire). */
  readonly waitMs?: number
}

/**
 * What `Agent.open` takes: the agent's options and where its session is.
 * For an existing session, the log decides the agent's id, system prompt,
 * model and transcript: `systemPrompt` and `model` are used only for a new
 * session (change them with `setSystemPrompt` / `setModel`, which are
 * logged), and `messages`, or an `id` other than the logged one, is an error.
 */
export type AgentOpenOptions = AgentOptions & {
  readonly store: SessionStore
  readonly sessionId: string
  readonly lease?: SessionLeaseOptions
  /** Who this process is, in the lease (default `hostname:pid:random`). */
  readonly holder?: string
}

/** What `Agent.open` hands over of the agent it built. */
export interface SessionParts<A> {
  readonly agent: A
  readonly store: AgentStore
  readonly runs: Runner
  readonly scheduler: SchedulerLike
  /** Marks the replayed log's last boundary (for checkpoints), once settled. */
  readonly settled: () => void
  readonly attach: (session: AgentSession) => void
  /** Aborts the live run and resolves when idle. */
  readonly abort: () => Promise<void>
}

/** Builds the agent: new (`replay` undefined) or from a replayed log. */
export type BuildAgent<A> = (options: AgentOptions, replay: LogReplay | undefined) => SessionParts<A>

const OpenCodec = t.intersection([
  t.type({
    store: t.type({ kind: t.string, append: FunctionValue, read: FunctionValue, acquireLease: FunctionValue, releaseLease: FunctionValue }, 'SessionStore'),
    sessionId: t.refinement(t.string, (s) => s.length > 0, 'NonEmptyString'),
  }),
  t.partial({
    lease: t.partial({ ttlMs: t.refinement(NonNegativeNumber, (n) => n > 0, 'PositiveNumber'), onBusy: t.keyof({ error: null, wait: null }), waitMs: NonNegativeNumber }),
    holder: t.refinement(t.string, (s) => s.length > 0, 'NonEmptyString'),
  }),
])

/**
 * See the module comment. With `replay` (internal: a durable-execution engine
 * running a run again, see `session-replay.ts`), the agent is rebuilt from the
 * first `replay.startSeq` entries and nothing is settled.
 * @throws InvalidInputError for bad options or a bad record (naming the session and its position); SessionLeaseError when the session is leased by another holder.
 */
export async function openSession<A>(options: AgentOpenOptions, build: BuildAgent<A>, replay?: ReplayGate): Promise<A> {
  decodeInput(OpenCodec, options, 'Agent.open', 'options')
  const { store, sessionId, lease = {}, holder: givenHolder, ...agentOptions } = options
  const scheduler = options.scheduler ?? asyncScheduler
  const ttlMs = lease.ttlMs ?? DEFAULT_LEASE_TTL_MS
  const holder = givenHolder ?? (await defaultHolder())
  await acquireLease(store, sessionId, holder, { ttlMs, onBusy: lease.onBusy ?? 'error', waitMs: lease.waitMs ?? ttlMs }, scheduler)
  try {
    const records = await store.read(sessionId)
    const restored = records.length === 0 ? undefined : restoredLog(records, options, replay?.startSeq)
    const parts = build(agentOptions, restored?.replay)
    let session: AgentSession | undefined
    const writer = new SessionWriter({ store, sessionId, holder, scheduler: parts.scheduler, onFailure: (error) => session?.failed(error) }, restored === undefined ? 0 : restored.committed.length)
    session = new AgentSession(sessionId, store, holder, writer, sessionAgent(parts), ttlMs)
    if (restored === undefined) writer.entry(parts.store.log[0]!)
    if (replay !== undefined && restored !== undefined) {
      const route = replayRouter(sessionId, restored.committed, replay, restored.stream?.afterSeq, {
        entry: (entry) => writer.entry(entry),
        chunk: (chunk) => writer.chunk(chunk),
        diverged: (error) => parts.runs.current?.fail(error.message),
      })
      parts.store.log$.subscribe(route.entry)
      parts.store.chunks = (chunk) => route.chunk(chunk, parts.store.log.length)
    } else {
      parts.store.log$.subscribe((entry) => writer.entry(entry))
      parts.store.chunks = (chunk) => writer.chunk(chunk)
    }
    parts.attach(session)
    if (restored !== undefined && replay === undefined) settle(parts, restored.stream)
    parts.settled()
    await writer.flush()
    session.startRenewal()
    return parts.agent
  } catch (error) {
    await store.releaseLease(sessionId, holder).catch(() => undefined)
    throw error
  }
}

function sessionAgent<A>(parts: SessionParts<A>): ConstructorParameters<typeof AgentSession>[4] {
  return {
    scheduler: parts.scheduler,
    live: () => {
      if (parts.runs.current === undefined) return undefined
      return { waitsForApproval: parts.store.state.pendingApprovals.length > 0, abort: parts.abort, detach: (why) => parts.runs.reset(why) }
    },
    failRun: (error) => parts.runs.current?.fail(error),
  }
}

/** Settles a run the log leaves in its middle (see the module comment). */
function settle<A>(parts: SessionParts<A>, stream: { readonly at: number; readonly chunks: readonly ProviderChunk[] } | undefined): void {
  const state = parts.store.state
  if (!state.isRunning || state.pendingApprovals.length > 0) return
  const partial = stream === undefined ? undefined : partialAnswer(stream.chunks, state.model, stream.at)
  if (partial !== undefined) parts.store.append({ type: 'messageEnd', message: partial })
  parts.store.append(PROCESS_STOPPED)
}

/**
 * The message a stream left, folded from its chunks (`messageStart` first;
 * a `retry` discards the attempt so far), ended as `aborted`; `undefined`
 * when nothing of it had content.
 */
export function partialAnswer(chunks: readonly ProviderChunk[], model: ModelSpec, at: number): AssistantMessage | undefined {
  let fold: MessageFold | undefined
  let broken = false
  for (const chunk of chunks) {
    if (chunk.type === 'messageStart' || chunk.type === 'retry') {
      fold = new MessageFold(chunk.type === 'retry' ? (chunk.model ?? model) : model, at)
      broken = typeof fold.push(chunk.type === 'retry' ? { type: 'messageStart', id: '', model: '' } : chunk) === 'string'
    } else if (fold !== undefined && !broken) {
      // A chunk the fold refuses ends what can be rebuilt: the message as far as it was valid is kept.
      broken = typeof fold.push(chunk) === 'string'
    }
  }
  if (fold === undefined) return undefined
  const message = fold.finish({ reason: 'aborted', message: 'the process stopped while this message streamed' })
  return message.content.length > 0 ? message : undefined
}

interface Restored {
  /** The log to fold: all committed entries, or the first `startSeq` of them. */
  readonly replay: LogReplay
  /** Every committed entry. */
  readonly committed: readonly AgentLogEntry[]
  /** The chunks streamed after the last entry. */
  readonly stream: { readonly at: number; readonly afterSeq: number; readonly chunks: readonly ProviderChunk[] } | undefined
}

/** The session's records, decoded (a bad one named by its position), as a replayable log and the chunks streamed after its last entry. */
function restoredLog(records: readonly SessionRecord[], options: AgentOpenOptions, startSeq?: number): Restored {
  const { sessionId } = options
  const entries: AgentLogEntry[] = []
  let stream: { at: number; afterSeq: number; chunks: ProviderChunk[] } | undefined
  for (const record of records) {
    const what = `record at position ${record.position} of session '${sessionId}'`
    const body: unknown = record.body
    // A record of this library's stores was checked on its way out; another store's, here (`is` first: decoding is for the error's paths).
    const checked = wasDecoded(record)
    if ((body as { type?: unknown } | null)?.type === 'stream') {
      const decoded = checked || StreamRecord.is(body) ? (body as StreamRecord) : decodeInput(StreamRecord, body, 'Agent.open', what)
      if (decoded.afterSeq !== entries.length) continue
      stream ??= { at: record.at, afterSeq: decoded.afterSeq, chunks: [] }
      stream.chunks.push(...decoded.chunks)
      continue
    }
    // The first entry through `decodeAgentLog`: a newer log format is named as such.
    const entry = entries.length === 0 ? decodeAgentLog([body], 'Agent.open', what)[0]! : checked || isAgentLogEntry(body) ? (body as AgentLogEntry) : decodeInput(AgentLogEntry, body, 'Agent.open', what)
    if (entry.seq !== entries.length) throw invalidInput('Agent.open', what, '.seq', `expected log entry ${entries.length}, got ${describeValue(entry.seq)}`, entry.seq)
    entries.push(entry)
    stream = undefined
  }
  if (entries.length === 0) throw invalidInput('Agent.open', `session '${sessionId}'`, '', 'it has stream records but no log entries', records.length)
  if (startSeq !== undefined && (startSeq < 1 || startSeq > entries.length)) {
    throw invalidInput('Agent.open', `session '${sessionId}'`, '', `a run to execute again starts at entry ${startSeq}, but the log has ${entries.length}`, startSeq)
  }
  const replay = replayOfEntries(startSeq === undefined ? entries : entries.slice(0, startSeq), options.tools ?? [], 'Agent.open')
  const init = replay.init
  if (options.messages !== undefined) {
    throw invalidInput('Agent.open', 'options', '.messages', `session '${sessionId}' exists (${entries.length} log entries): its transcript comes from its log; messages are only for a new session`, options.messages.length)
  }
  if (options.id !== undefined && options.id !== init.agentId) {
    throw invalidInput('Agent.open', 'options', '.id', `session '${sessionId}' belongs to agent '${init.agentId}', not '${options.id}'`, options.id)
  }
  return { replay, committed: entries, stream }
}

async function acquireLease(store: SessionStore, sessionId: string, holder: string, lease: Required<SessionLeaseOptions>, scheduler: SchedulerLike): Promise<void> {
  const deadline = scheduler.now() + lease.waitMs
  for (;;) {
    const outcome = await store.acquireLease(sessionId, holder, lease.ttlMs)
    if (outcome.acquired) return
    const { heldBy } = outcome
    const now = scheduler.now()
    if (lease.onBusy === 'error' || now >= deadline) {
      const waited = lease.onBusy === 'wait' ? ` (waited ${lease.waitMs} ms)` : ''
      throw new SessionLeaseError(sessionId, heldBy, `Agent.open: session '${sessionId}' is leased by '${heldBy.holder}' until ${new Date(heldBy.expiresAt).toISOString()}${waited}`)
    }
    await firstValueFrom(timer(Math.max(1, Math.min(lease.ttlMs / 3, heldBy.expiresAt - now, deadline - now)), scheduler))
  }
}

/** `hostname:pid:random` where there is a process, `browser:random` where not. */
async function defaultHolder(): Promise<string> {
  const random = Math.random().toString(36).slice(2, 10)
  const proc = (globalThis as { process?: { pid?: number; versions?: { node?: string } } }).process
  if (proc?.versions?.node === undefined) return `browser:${random}`
  let host = 'host'
  try {
    host = (await import('node:os')).hostname()
  } catch {
    // A runtime without `node:os`: the pid and the random part still tell holders apart.
  }
  return `${host}:${proc.pid ?? 0}:${random}`
}
