/**
 * The process the crash and lease tests start (and kill). Run as
 * `node child.js '<config JSON>'` from a transpiled copy of the repository
 * (`test/support/child-build.ts`).
 *
 * It opens a session store (a PGlite directory or a PostgreSQL URL) and then,
 * by `mode`:
 * - `run`: reads the raw records (reported before anything is appended),
 *   opens the session with `Agent.open`, settles what the log left open (a
 *   pending approval is resolved, an interrupted run is continued), runs
 *   `extraRuns` more prompts of the scenario, flushes, closes;
 * - `read`: reports the raw records (of `sessionId`, or of each of `sessionIds`) and exits;
 * - `worker`: takes sessions from `sessionIds` (several at a time): opens
 *   each with `onBusy: 'error'`; a busy or conflicting session is skipped, a
 *   complete one too; otherwise runs one prompt and closes it.
 *
 * Everything it sees is a JSON line on stdout (written synchronously: a line
 * is out before the process goes on, so a SIGKILL after it loses nothing the
 * parent saw): `append` before every store append (and `appended` after),
 * `ack` for every value of `agent.session.durable$` with the entries it
 * acknowledges, `delta` per streamed text delta, `holding` when an approval is
 * deliberately left waiting, `raw` / `opened` / `done` with the log, and
 * `error` with anything that went wrong. Tools write their executions to the
 * `executions` file (see `scenario.ts`).
 */
import { createInterface } from 'node:readline'
import { filter, firstValueFrom } from 'rxjs'
import { Agent } from '../../../src/agent/agent.js'
import type { SessionAppend, SessionStore } from '../../../src/agent/session-store.js'
import type { AgentMessage } from '../../../src/types/message.js'
import { SYSTEM_PROMPT, scenarioModel, scenarioTools, type Script } from './scenario.js'

/** Which store a child opens. */
export type StoreConfig = { readonly kind: 'pglite'; readonly dataDir: string } | { readonly kind: 'postgres'; readonly connectionString: string }

/** What a child is told to do (argv[2], as JSON). */
export interface ChildConfig {
  readonly mode: 'run' | 'read' | 'worker'
  readonly store: StoreConfig
  readonly executions: string
  readonly script?: Script
  /** Milliseconds between streamed chunks (default 3). */
  readonly chunkDelayMs?: number
  // run
  readonly sessionId?: string
  readonly extraRuns?: number
  /** The n-th approval request this process sees (1-based) is left waiting: `holding` is reported once it is durable. */
  readonly holdApproval?: number
  /** Milliseconds before an approval is granted (default 5). */
  readonly approvalDelayMs?: number
  readonly holder?: string
  readonly lease?: { readonly ttlMs?: number; readonly onBusy?: 'error' | 'wait'; readonly waitMs?: number }
  /** After `done`, wait for a `close` line on stdin before closing. */
  readonly holdOpen?: boolean
  /** After closing the session, report the stored records (`readBack`). */
  readonly readBack?: boolean
  /** `false`: never call `session.close()` (the process must still exit once its work is over). */
  readonly closeSession?: boolean
  // worker
  readonly sessionIds?: readonly string[]
  readonly concurrency?: number
}

const emit = (line: Record<string, unknown>): void => {
  process.stdout.write(JSON.stringify({ ...line, ms: Date.now() }) + '\n')
}

const errorInfo = (error: unknown) => (error instanceof Error ? { name: error.name, message: error.message, cause: error.cause instanceof Error ? error.cause.message : undefined } : { name: 'unknown', message: String(error) })

async function openStore(config: StoreConfig): Promise<SessionStore> {
  if (config.kind === 'pglite') {
    const { pgliteSessionStore } = await import('../../../src/sessions/pglite-store.js')
    return pgliteSessionStore({ dataDir: config.dataDir })
  }
  const { postgresSessionStore } = await import('../../../src/sessions/postgres-store.js')
  return postgresSessionStore({ connectionString: config.connectionString })
}

/** The store, telling the parent when an append starts and when it committed. */
function tapped(store: SessionStore): SessionStore {
  return {
    kind: store.kind,
    append: async (sessionId: string, append: SessionAppend) => {
      emit({ t: 'append', sessionId, expectedSeq: append.expectedSeq, records: append.records.length })
      const appended = await store.append(sessionId, append)
      emit({ t: 'appended', sessionId, length: appended.length })
      return appended
    },
    read: (sessionId, options) => store.read(sessionId, options),
    events$: (sessionId, options) => store.events$(sessionId, options),
    info: (sessionId) => store.info(sessionId),
    list: (options) => store.list(options),
    delete: (sessionId) => store.delete(sessionId),
    acquireLease: (sessionId, holder, ttlMs) => store.acquireLease(sessionId, holder, ttlMs),
    releaseLease: (sessionId, holder) => store.releaseLease(sessionId, holder),
    close: () => store.close(),
  }
}

/** The last message that is not a custom one. */
function lastLlmMessage(messages: readonly AgentMessage[]): AgentMessage | undefined {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role !== 'custom') return messages[i]
  return undefined
}

/** Whether the transcript ends where the model still owes an answer. */
function needsContinue(messages: readonly AgentMessage[]): boolean {
  const last = lastLlmMessage(messages)
  if (last === undefined) return false
  return last.role !== 'assistant' || last.stopReason !== 'stop'
}

function agentOptions(config: ChildConfig, sessionId: string, store: SessionStore) {
  const model = scenarioModel(config.script ?? 'full', config.chunkDelayMs ?? 3)
  return {
    store,
    sessionId,
    systemPrompt: SYSTEM_PROMPT,
    model: model.model,
    streamFn: model.streamFn,
    tools: scenarioTools(config.executions, (execution) => emit({ t: 'tool', ...execution })),
    approveTool: 'resolveApproval' as const,
    transformContext: false as const,
    retry: false as const,
    ...(config.lease === undefined ? {} : { lease: config.lease }),
    ...(config.holder === undefined ? {} : { holder: config.holder }),
  }
}

const settled = (agent: Agent): Promise<unknown> => firstValueFrom(agent.state$.pipe(filter((s) => !s.isRunning && s.pendingApprovals.length === 0)))

async function run(config: ChildConfig, store: SessionStore): Promise<void> {
  const sessionId = config.sessionId!
  emit({ t: 'raw', records: await store.read(sessionId) })
  let agent: Agent
  try {
    agent = await Agent.open(agentOptions(config, sessionId, store))
  } catch (error) {
    emit({ t: 'openError', ...errorInfo(error) })
    process.exitCode = 3
    return
  }
  const session = agent.session!
  try {
    await work(config, agent)
  } finally {
    if (config.closeSession !== false) {
      await session.close().then(
        () => emit({ t: 'closed' }),
        (error: unknown) => emit({ t: 'error', where: 'close', ...errorInfo(error) }),
      )
    }
  }
  if (config.readBack === true) emit({ t: 'readBack', records: await store.read(sessionId) })
}

async function work(config: ChildConfig, agent: Agent): Promise<void> {
  const session = agent.session!
  emit({ t: 'opened', durableSeq: session.durableSeq, log: agent.log, messages: agent.state.messages, pendingApprovals: agent.state.pendingApprovals })
  let acked = session.durableSeq
  session.durable$.subscribe((seq) => {
    if (seq > acked) emit({ t: 'ack', seq, entries: agent.log.slice(acked, seq) })
    acked = Math.max(acked, seq)
  })
  let deltas = 0
  agent.subscribe((e) => {
    if (e.type === 'messageUpdate' && e.chunk.type === 'textDelta') emit({ t: 'delta', n: ++deltas })
    else if (e.type === 'agentEnd') emit({ t: 'runEnd', stopReason: e.result.stopReason, error: e.result.error })
  })
  let approvals = 0
  const seen = new Set<string>()
  agent.state$.subscribe((state) => {
    for (const pending of state.pendingApprovals) {
      if (seen.has(pending.toolCallId)) continue
      seen.add(pending.toolCallId)
      approvals++
      if (approvals === config.holdApproval) {
        session.flush().then(
          () => emit({ t: 'holding', toolCallId: pending.toolCallId, durableSeq: session.durableSeq }),
          (error: unknown) => emit({ t: 'error', where: 'flush', ...errorInfo(error) }),
        )
        continue
      }
      setTimeout(() => emit({ t: 'resolved', toolCallId: pending.toolCallId, ok: agent.resolveApproval(pending.toolCallId, { approved: true }) }), config.approvalDelayMs ?? 5)
    }
  })
  // Settle what the log left open, then the extra prompts.
  await settled(agent)
  if (needsContinue(agent.state.messages)) {
    try {
      const result = await agent.continue()
      emit({ t: 'continued', stopReason: result.stopReason })
    } catch (error) {
      // Reported (the parent counts it as a problem); the prompts below still run, to find what else breaks.
      emit({ t: 'error', where: 'continue', ...errorInfo(error) })
    }
  }
  for (let i = 0; i < (config.extraRuns ?? 0); i++) {
    const result = await agent.prompt(`go ${i + 1}`)
    emit({ t: 'prompted', stopReason: result.stopReason })
    await settled(agent)
  }
  await session.flush()
  emit({ t: 'done', durableSeq: session.durableSeq, log: agent.log, messages: agent.state.messages })
  if (config.holdOpen === true) await untilStdinLine('close')
}

function untilStdinLine(expected: string): Promise<void> {
  return new Promise((resolve) => {
    const lines = createInterface({ input: process.stdin })
    lines.on('line', (line) => {
      if (line.trim() !== expected) return
      lines.close()
      // A readline interface closed leaves stdin open (and the process alive).
      process.stdin.destroy()
      resolve()
    })
  })
}

async function worker(config: ChildConfig, store: SessionStore): Promise<void> {
  const queue = [...(config.sessionIds ?? [])]
  const one = async (sessionId: string) => {
    let agent: Agent
    try {
      agent = await Agent.open({ ...agentOptions(config, sessionId, store), lease: { onBusy: 'error', ...config.lease } })
    } catch (error) {
      const info = errorInfo(error)
      if (info.name === 'SessionLeaseError' || info.name === 'SessionConflictError') emit({ t: 'skip', sessionId, reason: info.name })
      else emit({ t: 'error', where: `open ${sessionId}`, ...info })
      return
    }
    try {
      if (agent.log.some((e) => e.type === 'agentEnd')) {
        emit({ t: 'skip', sessionId, reason: 'complete' })
        return
      }
      const result = await agent.prompt('go')
      await agent.session!.flush()
      emit({ t: 'completed', sessionId, stopReason: result.stopReason })
    } catch (error) {
      emit({ t: 'error', where: `run ${sessionId}`, ...errorInfo(error) })
    } finally {
      await agent.session!.close()
    }
  }
  const lanes = Array.from({ length: config.concurrency ?? 1 }, async () => {
    for (let id = queue.shift(); id !== undefined; id = queue.shift()) await one(id)
  })
  await Promise.all(lanes)
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as ChildConfig
  const raw = await openStore(config.store)
  const store = tapped(raw)
  emit({ t: 'started', pid: process.pid })
  try {
    if (config.mode === 'read') for (const sessionId of config.sessionIds ?? [config.sessionId!]) emit({ t: 'raw', sessionId, records: await store.read(sessionId) })
    else if (config.mode === 'worker') await worker(config, store)
    else await run(config, store)
  } finally {
    await store.close()
  }
  emit({ t: 'exit' })
}

main().catch((error: unknown) => {
  emit({ t: 'error', where: 'main', ...errorInfo(error) })
  process.exitCode = 1
})

