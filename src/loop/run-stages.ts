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
 * and `pollSteering` without a source are `identity`.
 *
 * Internal: not exported from the package.
 */
import { NEVER, Observable, type SchedulerLike } from 'rxjs'
import { decideContinuation } from '../../operators/decide-continuation.js'
import { dispatchTools } from '../../operators/dispatch-tools.js'
import { endTurn } from '../../operators/end-turn.js'
import { pollFollowUp } from '../../operators/poll-follow-up.js'
import { pollSteering } from '../../operators/poll-steering.js'
import { postLoopPolicy } from '../../operators/post-loop-policy.js'
import { postTurnPolicy } from '../../operators/post-turn-policy.js'
import { preTurnPolicy } from '../../operators/pre-turn-policy.js'
import { startTurn } from '../../operators/start-turn.js'
import { streamLlm } from '../../operators/stream-llm.js'
import { transformContext } from '../../operators/transform-context.js'
import type { AgentLoopConfig, TurnStages } from './agent-loop.js'
import type { MessageQueue } from './message-queue.js'

/** How many tool calls of one message run by default (see `maxToolCallsPerMessage`). */
export const DEFAULT_MAX_TOOL_CALLS_PER_MESSAGE = 128

/** An Observable that emits once when `signal` aborts (at once if it already has). */
function aborted(signal: AbortSignal): Observable<void> {
  return new Observable<void>((subscriber) => {
    if (signal.aborted) {
      subscriber.next()
      return
    }
    const onAbort = (): void => subscriber.next()
    signal.addEventListener('abort', onAbort, { once: true })
    return () => signal.removeEventListener('abort', onAbort)
  })
}

/**
 * The stages of a run under `config`: `steering` and `followUp` are the run's
 * queues (none without a source).
 */
export function turnStages(config: AgentLoopConfig, scheduler: SchedulerLike, steering: MessageQueue | undefined, followUp: MessageQueue | undefined): TurnStages {
  const abort$ = config.signal === undefined ? undefined : aborted(config.signal)
  const abortOption = abort$ === undefined ? {} : { abort: abort$ }
  const policies = config.policies ?? {}
  return {
    preTurnPolicy: preTurnPolicy(policies.preTurn, abortOption),
    startTurn: startTurn(),
    transformContext: transformContext({
      ...(config.transformContext === undefined ? {} : { transform: config.transformContext }),
      ...(config.convertToLlm === undefined ? {} : { convertToLlm: config.convertToLlm }),
      ...abortOption,
    }),
    streamLlm: streamLlm({
      streamFn: config.streamFn,
      scheduler,
      ...(config.streamOptions === undefined ? {} : { options: config.streamOptions }),
      ...(config.retry === undefined ? {} : { retry: config.retry }),
      ...(config.fallback === undefined ? {} : { fallback: config.fallback }),
      ...(config.recoverOverflow === undefined ? {} : { recoverOverflow: config.recoverOverflow }),
      ...abortOption,
      ...(config.maxArgumentDepth === undefined ? {} : { maxArgumentDepth: config.maxArgumentDepth }),
    }),
    dispatchTools: dispatchTools({
      scheduler,
      ...(policies.preDispatch === undefined ? {} : { preDispatch: policies.preDispatch }),
      ...(config.approveTool === undefined ? {} : { approveTool: config.approveTool }),
      ...(config.approvalRequired === undefined ? {} : { approvalRequired: config.approvalRequired }),
      ...(config.toolExecution === undefined ? {} : { execution: config.toolExecution }),
      ...(config.toolTimeoutMs === undefined ? {} : { toolTimeoutMs: config.toolTimeoutMs }),
      maxCallsPerMessage: config.maxToolCallsPerMessage ?? DEFAULT_MAX_TOOL_CALLS_PER_MESSAGE,
      ...abortOption,
      ...(steering !== undefined && config.steeringDelivery === 'interrupt' ? { interruptOnSteering: steering.poll } : {}),
    }),
    endTurn: endTurn(),
    postTurnPolicy: postTurnPolicy(policies.postTurn, abortOption),
    pollSteering: pollSteering(steering?.poll),
    decideContinuation: decideContinuation(),
    postLoopPolicy: postLoopPolicy(policies.postLoop, abortOption),
    pollFollowUp: pollFollowUp(followUp?.poll),
    abort: abort$ ?? NEVER,
  }
}
