/**
 * One run as a DBOS workflow (`rxagent.run`), executed by a worker:
 *
 * 1. `rxagent.begin` (a step): opens the session (creating it, or settling a
 *    run an earlier workflow left unfinished) and records the log length the
 *    run starts at.
 * 2. The agent is rebuilt from the log as it stood then
 *    (`Agent.openReplaying`) with its model and tools as steps
 *    (`durable-steps.ts`), its approvals as DBOS messages, and the steering
 *    and follow-up messages clients sent it (DBOS messages on
 *    `rxagent.input`) received after every turn: a step (`rxagent.inbox`)
 *    reads how many were sent, and each is received with `DBOS.recv`. In a first
 *    execution every step runs; in a recovery the completed ones answer from
 *    their records, so the run logs what it logged before (checked, not
 *    appended twice) and goes on from where the dead worker stopped.
 * 3. When the run ends, a last look (`rxagent.inbox.last`, under the
 *    session's lock, see `tables.ts`): messages sent meanwhile are received
 *    and continue the session in this workflow; none, and the run is done
 *    taking input (a client sending later queues a new run).
 */
import * as t from 'io-ts'
import { catchError, from, NEVER, type Observable, type ObservableInput, type OperatorFunction } from 'rxjs'
import type { Pool } from 'pg'
import { Agent } from '../agent/agent.js'
import { ApprovalDecisionCodec } from '../agent/agent-log.js'
import type { AgentOptions } from '../agent/agent-options.js'
import { ReplayGate } from '../agent/session-replay.js'
import type { SessionStore } from '../agent/session-store.js'
import type { ApprovalDecision, ApproveTool } from '../policy/approval.js'
import { Verdict, type Policies, type PolicyVerdict } from '../policy/policy.js'
import { errorText } from '../types/codec.js'
import { AgentMessage } from '../types/message.js'
import type { AgentResult } from '../types/result.js'
import { durableStreamFn, durableTool } from './durable-steps.js'
import type { DbosApi } from './sdk.js'
import { closeRun, endRun, sentCount, type InboxMessage } from './tables.js'
import type { DbosAgentDefinition, DbosRunOutcome } from './types.js'

/** The workflow's argument (JSON: DBOS records it). `prompts` empty: continue the session. */
export interface RunInput {
  readonly sessionId: string
  readonly agent: string
  readonly prompts: readonly AgentMessage[]
}

/** What a worker gives its workflows. */
export interface WorkerContext {
  readonly dbos: DbosApi
  readonly store: SessionStore
  readonly pool: Pool
  readonly agents: ReadonlyMap<string, DbosAgentDefinition>
  /** The lease holder: the worker's id (a worker restarted with its id takes its leases back at once). */
  readonly holder: string
  readonly leaseTtlMs: number
  /**
   * Calls `abort` when run `runId`'s workflow is cancelled (`DbosAgentClient.abort`,
   * or DBOS's `cancelWorkflow`) while this worker executes it; returns the
   * function that stops watching.
   */
  readonly onCancel: (runId: string, abort: () => void) => () => void
}

/** The DBOS message topic an approval decision for `toolCallId` is sent on. */
export const approvalTopic = (toolCallId: string): string => `rxagent.approval:${toolCallId}`

/** The DBOS message topic steering and follow-up messages are sent to a run on (an {@link InboxMessage} each). */
export const INPUT_TOPIC = 'rxagent.input'

const InboxMessageCodec = t.type({ queue: t.keyof({ steering: null, followUp: null }), message: AgentMessage })

/** How long a run waits for a message it was counted as sent (it was sent before the count committed: it is there at once). */
const INPUT_WAIT_S = 60

/** How long one wait for an approval decision lasts before it is recorded as none and waited for again. */
const APPROVAL_WAIT_S = 3600

/** Executes run `runId` (see the module comment). */
export async function executeRun(ctx: WorkerContext, runId: string, input: RunInput): Promise<DbosRunOutcome> {
  const { sessionId } = input
  try {
    const definition = ctx.agents.get(input.agent)
    if (definition === undefined) throw new Error(`no agent named '${input.agent}' is registered with this worker (it has ${[...ctx.agents.keys()].map((n) => `'${n}'`).join(', ') || 'none'})`)
    const options = await definition.options(sessionId)
    const lease = { ttlMs: ctx.leaseTtlMs, onBusy: 'wait' as const, waitMs: ctx.leaseTtlMs * 3 }
    const begin = await ctx.dbos.runStep(() => beginRun(ctx, sessionId, options, lease), { name: 'rxagent.begin' })
    const gate = new ReplayGate(begin.startSeq)
    let agent: Agent | undefined
    let received = 0
    /** Receives the messages sent to this run up to the `sent`-th, in the order they were sent, and queues each on the agent. */
    const receive = async (sent: number): Promise<void> => {
      while (received < sent) {
        const body = await ctx.dbos.recv<unknown>(INPUT_TOPIC, INPUT_WAIT_S)
        // Counted but not there (cannot happen: the send commits before its count): stop waiting rather than hang.
        if (body === null) return
        received++
        if (!InboxMessageCodec.is(body)) continue
        const { queue, message }: InboxMessage = body
        if (queue === 'steering') agent!.steer(message)
        else agent!.followUp(message)
      }
    }
    const abortRun = (): void => void agent?.abort()
    const lookAtInbox: PolicyCheck = () =>
      from(
        ctx.dbos
          .runStep(() => sentCount(ctx.pool, runId), { name: 'rxagent.inbox' })
          .then(receive)
          .then(() => Verdict.continue),
      ).pipe(abortedIfCancelled(abortRun))
    agent = await Agent.openReplaying(
      {
        ...options,
        store: ctx.store,
        sessionId,
        holder: ctx.holder,
        lease,
        streamFn: durableStreamFn(ctx.dbos, options.streamFn, gate),
        ...(options.tools === undefined ? {} : { tools: options.tools.map((tool) => durableTool(ctx.dbos, tool, (callId) => `${sessionId}:${runId}:${callId}`)) }),
        ...approvals(ctx.dbos, options.approveTool, abortRun),
        policies: withInbox(options.policies, lookAtInbox),
      },
      gate,
    )
    let result: AgentResult | undefined
    // Cancelled: the run ends here as aborted (every tool call answered, logged); DBOS refuses the steps after that.
    const unwatch = ctx.onCancel(runId, () => void agent!.abort())
    try {
      result = await startRun(agent, input.prompts)
      for (;;) {
        const last = await ctx.dbos.runStep(() => closeRun(ctx.pool, sessionId, runId, received), { name: 'rxagent.inbox.last' })
        if (last.done) break
        await receive(last.sent)
        result = (await startRun(agent, [])) ?? result
      }
      await agent.session!.flush()
    } finally {
      unwatch()
      await agent.session!.close()
    }
    return outcome(sessionId, runId, result)
  } catch (error) {
    // A run that cannot go on takes no more input: what comes later starts a run of its own.
    await endRun(ctx.pool, runId).catch(() => undefined)
    throw error
  }
}

/** The first step: the session opened (created, or a run left unfinished settled) and closed again; its log length. */
async function beginRun(ctx: WorkerContext, sessionId: string, options: AgentOptions, lease: { ttlMs: number; onBusy: 'wait'; waitMs: number }): Promise<{ readonly startSeq: number }> {
  const agent = await Agent.open({ ...options, store: ctx.store, sessionId, holder: ctx.holder, lease })
  try {
    // A run suspended for approvals by a workflow that failed: nobody waits for its decisions any more.
    if (agent.state.pendingApprovals.length > 0) await agent.abort()
    await agent.session!.flush()
    return { startSeq: agent.session!.durableSeq }
  } finally {
    await agent.session!.close()
  }
}

/** Starts the run: the prompts, or (none) whatever the session has to continue; `undefined` when there is nothing. */
async function startRun(agent: Agent, prompts: readonly AgentMessage[]): Promise<AgentResult | undefined> {
  if (prompts.length > 0) return agent.prompt(prompts)
  try {
    return await agent.continue()
  } catch (error) {
    if (errorText(error).includes('nothing to continue')) return undefined
    throw error
  }
}

type PolicyCheck = () => ObservableInput<PolicyVerdict>

/** The user's policies, and a look at the inbox after every turn and before the run ends (steering for the next turn, follow-ups). */
function withInbox(policies: Policies | undefined, look: PolicyCheck): Policies {
  const policy = { name: 'rxagent.dbos.inbox', evaluate: look }
  return { ...policies, postTurn: [...(policies?.postTurn ?? []), policy], postLoop: [...(policies?.postLoop ?? []), policy] }
}

/**
 * `approveTool: 'resolveApproval'` becomes a wait for a DBOS message (sent by
 * `DbosAgentClient.resolveApproval` from any process, at any time: a
 * recovered workflow waits again). An `approveTool` function is kept: it runs
 * inside the workflow, so it must decide from its request alone.
 */
function approvals(dbos: DbosApi, approveTool: AgentOptions['approveTool'], abortRun: () => void): Pick<AgentOptions, 'approveTool'> {
  if (approveTool !== 'resolveApproval') return approveTool === undefined ? {} : { approveTool }
  const ask: ApproveTool = (request) => from(waitForDecision(dbos, request.toolCall.id)).pipe(abortedIfCancelled(abortRun))
  return { approveTool: ask }
}

/** Whether `error` is DBOS's "this workflow has been cancelled" (`DBOSWorkflowCancelledError`, code 24). */
function isWorkflowCancelled(error: unknown): boolean {
  return error instanceof Error && (error.constructor.name === 'DBOSWorkflowCancelledError' || (error as { dbosErrorCode?: unknown }).dbosErrorCode === 24)
}

/**
 * A DBOS call of a run's workflow (an approval's `recv`, the inbox step) that
 * fails because the workflow was cancelled: DBOS can say so before the
 * worker's watch (`onCancel`, polled) does. Then the run is aborted as
 * `onCancel` aborts it, and the call never answers (the abort tears it down):
 * the run ends `aborted`, not with the call's failure taken as an approver's
 * rejection or a policy's error. Any other failure goes on as before.
 */
export function abortedIfCancelled<T>(abortRun: () => void): OperatorFunction<T, T> {
  return catchError((error: unknown): Observable<T> => {
    if (!isWorkflowCancelled(error)) throw error
    // Not from inside the failing call's own notification: the abort unsubscribes it.
    queueMicrotask(abortRun)
    return NEVER
  })
}

async function waitForDecision(dbos: DbosApi, toolCallId: string): Promise<ApprovalDecision> {
  for (;;) {
    const received = await dbos.recv<unknown>(approvalTopic(toolCallId), APPROVAL_WAIT_S)
    if (received === null) continue
    return ApprovalDecisionCodec.is(received) ? received : { approved: false, reason: 'the decision sent for this call was not a valid approval decision' }
  }
}

function outcome(sessionId: string, runId: string, result: AgentResult | undefined): DbosRunOutcome {
  if (result === undefined) return { sessionId, runId, stopReason: 'none' }
  return result.error === undefined ? { sessionId, runId, stopReason: result.stopReason } : { sessionId, runId, stopReason: result.stopReason, error: result.error }
}
