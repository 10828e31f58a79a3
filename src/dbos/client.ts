/**
 * `dbosAgentClient`: talks to a cluster from any process — a web server that
 * runs no agents — through DBOS's client (no DBOS runtime in the process).
 * Prompts queue runs; steering and follow-ups are DBOS messages to the
 * session's open run (or, when none is open, the prompt of a new run);
 * approval decisions are DBOS messages to the run waiting for them.
 */
import { randomUUID } from 'node:crypto'
import * as t from 'io-ts'
import type { Pool } from 'pg'
import { ApprovalDecisionCodec } from '../agent/agent-log.js'
import type { SessionStore } from '../agent/session-store.js'
import { loadPg } from '../sessions/load-pg.js'
import { postgresSessionStore } from '../sessions/postgres-store.js'
import type { ApprovalDecision } from '../policy/approval.js'
import { errorText } from '../types/codec.js'
import { decodeInput, decodePrompts, invalidInput, type AgentMessageInput } from '../types/input.js'
import type { AgentMessage } from '../types/message.js'
import { approvalTopic, INPUT_TOPIC, type RunInput } from './run-workflow.js'
import { loadDbos } from './sdk.js'
import { addRun, endRun, isDone, migrate, openRuns, sendInput, underStartLock, type InboxMessage } from './tables.js'
import {
  connectionStringOf,
  DEFAULT_APP,
  RUN_QUEUE,
  RUN_WORKFLOW,
  type DbosAgentClient,
  type DbosAgentClientOptions,
  type DbosRunOutcome,
  type SubmittedInput,
} from './types.js'
import { releaseAll } from './release-all.js'

const NonEmpty = t.refinement(t.string, (s) => s.length > 0, 'NonEmptyString')
const OptionsCodec = t.intersection([t.type({ pg: t.union([t.string, t.type({ connectionString: t.string })]) }), t.partial({ appName: t.string })])

/** See the module comment. @throws InvalidInputError for bad options; Error when DBOS or PostgreSQL cannot be reached. */
export async function dbosAgentClient(options: DbosAgentClientOptions): Promise<DbosAgentClient> {
  decodeInput(OptionsCodec, options, 'dbosAgentClient', 'options')
  const url = connectionStringOf(options.pg)
  const { sdk } = await loadDbos('dbosAgentClient')
  const pg = await loadPg('dbosAgentClient')
  const pool: Pool = new pg.Pool({ connectionString: url, max: 4 })
  pool.on('error', () => undefined)
  await migrate(pool)
  await underStartLock(pool, () => sdk.DBOS.migrate(url))
  const dbos = await sdk.DBOSClient.create({ systemDatabaseUrl: url, applicationName: options.appName ?? DEFAULT_APP })
  const store = options.store ?? (await postgresSessionStore({ connectionString: url }))

  const queueRun = async (sessionId: string, agent: string, prompts: readonly AgentMessage[]): Promise<SubmittedInput> => {
    const runId = `${sessionId}/run-${randomUUID()}`
    await addRun(pool, sessionId, agent, runId)
    const input: RunInput = { sessionId, agent, prompts }
    await dbos.enqueue({ queueName: RUN_QUEUE, workflowName: RUN_WORKFLOW, workflowID: runId, queuePartitionKey: sessionId }, input)
    return { sessionId, runId }
  }
  /** Whether run `runId`'s workflow has ended where it could not mark itself done (cancelled; its worker failed to say so): it will receive nothing. */
  const isOver = async (runId: string): Promise<boolean> => {
    const status = (await dbos.getWorkflow(runId))?.status
    return status !== undefined && OVER.has(status)
  }
  const messageOf = (message: string | AgentMessageInput, entry: string): AgentMessage => {
    const messages = decodePrompts(message, entry, Date.now())
    if (messages.length !== 1) throw invalidInput(entry, 'message', '', `expected one message, got ${messages.length}`, message)
    return messages[0]!
  }
  const input = async (queue: 'steering' | 'followUp', sessionId: string, message: string | AgentMessageInput, entry: string): Promise<SubmittedInput> => {
    decodeInput(NonEmpty, sessionId, entry, 'sessionId')
    const decoded = messageOf(message, entry)
    const body: InboxMessage = { queue, message: decoded }
    const { agent, runId } = await sendInput(pool, sessionId, (run) => dbos.send(run, body, INPUT_TOPIC), isOver)
    // No run open: the message starts one (steering with nothing to steer, or a follow-up after the last run ended).
    return runId === undefined ? queueRun(sessionId, agent, [decoded]) : { sessionId, runId }
  }

  return {
    store,
    async prompt(sessionId, agent, prompt) {
      decodeInput(NonEmpty, sessionId, 'dbosAgentClient.prompt', 'sessionId')
      decodeInput(NonEmpty, agent, 'dbosAgentClient.prompt', 'agent')
      return queueRun(sessionId, agent, decodePrompts(prompt, 'dbosAgentClient.prompt', Date.now()))
    },
    steer: (sessionId, message) => input('steering', sessionId, message, 'dbosAgentClient.steer'),
    followUp: (sessionId, message) => input('followUp', sessionId, message, 'dbosAgentClient.followUp'),
    async resolveApproval(sessionId: string, toolCallId: string, decision: ApprovalDecision) {
      decodeInput(NonEmpty, sessionId, 'dbosAgentClient.resolveApproval', 'sessionId')
      decodeInput(NonEmpty, toolCallId, 'dbosAgentClient.resolveApproval', 'toolCallId')
      const decided = decodeInput(ApprovalDecisionCodec, decision, 'dbosAgentClient.resolveApproval', 'decision')
      if (!(await waitsForApproval(store, sessionId, toolCallId))) return false
      let live: string | undefined
      for (const run of await openRuns(pool, sessionId)) {
        if (await isOver(run)) continue
        live = run
        break
      }
      if (live === undefined) return false
      await dbos.send(live, decided, approvalTopic(toolCallId), `approval:${sessionId}:${toolCallId}`)
      return true
    },
    async abort(sessionId: string) {
      decodeInput(NonEmpty, sessionId, 'dbosAgentClient.abort', 'sessionId')
      let aborted = false
      for (const run of await openRuns(pool, sessionId)) {
        if (await isOver(run)) continue
        await dbos.cancelWorkflow(run)
        aborted = true
      }
      return aborted
    },
    async outcome(runId, outcomeOptions = {}): Promise<DbosRunOutcome> {
      const sessionId = runId.slice(0, runId.lastIndexOf('/run-'))
      const handle = dbos.retrieveWorkflow<DbosRunOutcome>(runId)
      const timeoutMs = outcomeOptions.timeoutMs
      try {
        const result = timeoutMs === undefined ? handle.getResult() : Promise.race([handle.getResult(), timeout(timeoutMs, runId)])
        return await result
      } catch (error) {
        if (error instanceof OutcomeTimeout) throw error
        const status = await dbos.getWorkflow(runId).catch(() => undefined)
        if (status?.status !== 'CANCELLED') return { sessionId, runId, stopReason: 'error', error: errorText(error) }
        // DBOS reports the cancel at once; a worker that was executing the run ends it (logged) a moment later: wait for that, within bounds.
        const started = ((await dbos.listWorkflowSteps(runId).catch(() => undefined)) ?? []).length > 0
        if (!started) await endRun(pool, runId)
        else for (const until = Date.now() + Math.min(timeoutMs ?? ABORT_SETTLE_MS, ABORT_SETTLE_MS); !(await isDone(pool, runId)) && Date.now() < until; ) await sleep(50)
        return { sessionId, runId, stopReason: 'aborted', error: 'the run was aborted (its workflow was cancelled)' }
      }
    },
    close() {
      // Each step runs even when one before it failed (see `releaseAll`).
      return releaseAll('dbosAgentClient.close', [
        ['closing the DBOS client', () => dbos.destroy()],
        ['closing the session store', async () => (options.store === undefined ? store.close() : undefined)],
        ['ending the connection pool', () => pool.end()],
      ])
    },
  }
}

/** How long `outcome` waits, at most, for a worker to end a run that was cancelled while it executed it. */
const ABORT_SETTLE_MS = 15_000
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** DBOS workflow statuses of a run that will never receive a message. */
const OVER: ReadonlySet<string> = new Set(['SUCCESS', 'ERROR', 'CANCELLED', 'MAX_RECOVERY_ATTEMPTS_EXCEEDED'])

/** `outcome` waited longer than its `timeoutMs`. */
export class OutcomeTimeout extends Error {
  override readonly name = 'OutcomeTimeout'
}

function timeout(ms: number, runId: string): Promise<never> {
  return new Promise((_, reject) => {
    const timer = setTimeout(() => reject(new OutcomeTimeout(`run '${runId}' did not end within ${ms} ms`)), ms)
    timer.unref()
  })
}

/** Whether the session's log has an approval request for `toolCallId` that no decision answered yet. */
async function waitsForApproval(store: SessionStore, sessionId: string, toolCallId: string): Promise<boolean> {
  let waiting = false
  for (const record of await store.read(sessionId)) {
    const body = record.body
    if (body.type === 'approvalRequested' && body.toolCallId === toolCallId) waiting = true
    if (body.type === 'approvalDecided' && body.toolCallId === toolCallId) waiting = false
  }
  return waiting
}
