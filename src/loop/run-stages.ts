/**
 * The stages of one run's turn, configured from its `AgentLoopConfig` (see
 * `TurnStages`), and the run's abort.
 *
 * Built at each subscription, because a run owns its steering and follow-up
 * queues and `config.turn` may keep per-run state in what it builds. What
 * depends on no option at all (`startTurn`, `endTurn`, `decideContinuation`,
 * `pollFollowUp` without a source, `transformContext` without options) is
 * one operator shared by every run: a stage keeps a run's state in its
 * subscription, never in the operator. The policy stages without policies
 * and `pollSteering` without a source are `identity`. Measured with 1,000
 * FANOUT runs of `agentLoop` alive at once (heap after a full GC, per run):
 * 12.7 → 9.7 KB with the shared stages and the run set up without closures
 * that keep its stages, 8.4 → 8.2 KB without the steering stage, 8.2 → 7.9
 * KB with the options no longer spread from conditional literals (see `turnStages`).
 *
 * Internal: not exported from the package.
 */
import { NEVER, type Observable, type SchedulerLike } from 'rxjs'
import { decideContinuation } from '../../operators/decide-continuation.js'
import { dispatchTools, type DispatchToolsOptions } from '../../operators/dispatch-tools.js'
import { endTurn } from '../../operators/end-turn.js'
import { pollFollowUp } from '../../operators/poll-follow-up.js'
import { pollSteering } from '../../operators/poll-steering.js'
import { postLoopPolicy } from '../../operators/post-loop-policy.js'
import { postTurnPolicy } from '../../operators/post-turn-policy.js'
import { preTurnPolicy } from '../../operators/pre-turn-policy.js'
import { startTurn } from '../../operators/start-turn.js'
import { streamLlm, type StreamLlmOptions } from '../../operators/stream-llm.js'
import { transformContext, type TransformContextOptions } from '../../operators/transform-context.js'
import type { AbortOption } from '../../operators/until-aborted.js'
import type { Policies } from '../policy/policy.js'
import type { AgentLoopConfig, TurnStages } from './agent-loop.js'
import type { MessageQueue } from './message-queue.js'

/** How many tool calls of one message run by default (see `maxToolCallsPerMessage`). */
export const DEFAULT_MAX_TOOL_CALLS_PER_MESSAGE = 128

const noAbort: AbortOption = {}
const noPolicies: Policies = {}

/**
 * The stages of a run under `config`: `steering` and `followUp` are the run's
 * queues (none without a source), `abort$` its abort (`RunAbort`; none without a signal). Each
 * stage's options are one literal with every field, unset ones `undefined`:
 * not spread from conditional literals (each spread of a `{}`-or-field literal
 * is one more object per run), and not filled in field by field either: a
 * field added after the literal gives the object a hidden class of its own,
 * which died with the run at a full GC and took with it the optimized code
 * that had read it (`CallBatch.release`, `--trace-deopt`, agent-tools 200 with
 * a full GC before each run). The price is a few unset fields per run: FANOUT
 * 1,000 runs alive, peak heap 26.4 -> 26.7-26.9 MB (`bench/worker.mjs rxagent
 * fanout 1000 3`, two rounds each, with the per-turn literals of `streamLlm`).
 */
export function turnStages(
  config: AgentLoopConfig,
  scheduler: SchedulerLike,
  steering: MessageQueue | undefined,
  followUp: MessageQueue | undefined,
  abort$: Observable<void> | undefined,
): TurnStages {
  const abortOption: AbortOption = abort$ === undefined ? noAbort : { abort: abort$ }
  const policies = config.policies ?? noPolicies

  const context: TransformContextOptions = { transform: config.transformContext, convertToLlm: config.convertToLlm, abort: abort$ }

  const llm: StreamLlmOptions = {
    streamFn: config.streamFn,
    scheduler,
    options: config.streamOptions,
    retry: config.retry,
    fallback: config.fallback,
    recoverOverflow: config.recoverOverflow,
    abort: abort$,
    maxArgumentDepth: config.maxArgumentDepth,
  }

  const tools: DispatchToolsOptions = {
    scheduler,
    maxCallsPerMessage: config.maxToolCallsPerMessage ?? DEFAULT_MAX_TOOL_CALLS_PER_MESSAGE,
    preDispatch: policies.preDispatch,
    approveTool: config.approveTool,
    approvalRequired: config.approvalRequired,
    execution: config.toolExecution,
    toolTimeoutMs: config.toolTimeoutMs,
    abort: abort$,
    interruptOnSteering: steering !== undefined && config.steeringDelivery === 'interrupt' ? steering.poll : undefined,
  }

  return {
    preTurnPolicy: preTurnPolicy(policies.preTurn, abortOption),
    startTurn: startTurn(),
    transformContext: transformContext(context),
    streamLlm: streamLlm(llm),
    dispatchTools: dispatchTools(tools),
    endTurn: endTurn(),
    postTurnPolicy: postTurnPolicy(policies.postTurn, abortOption),
    pollSteering: pollSteering(steering?.poll),
    decideContinuation: decideContinuation(),
    postLoopPolicy: postLoopPolicy(policies.postLoop, abortOption),
    pollFollowUp: pollFollowUp(followUp?.poll),
    abort: abort$ ?? NEVER,
  }
}
