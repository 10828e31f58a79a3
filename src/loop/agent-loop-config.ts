/**
 * What `agentLoop` is configured with: the run's {@link AgentLoopConfig}
 * (model, provider, retries, tools, policies, queues, abort) and the
 * {@link TurnStages} a turn is composed of. The loop itself is in
 * `agent-loop.ts`, which exports these types too.
 */
import type { Observable, SchedulerLike } from 'rxjs'
import type { ApproveTool } from '../policy/approval.js'
import type { Policies } from '../policy/policy.js'
import type { TurnOperator, TurnState } from '../turn/turn-state.js'
import type { ModelSpec } from '../types/model.js'
import type { StreamFn, StreamOptions } from '../types/request.js'
import type { ConvertToLlm, ModelRoute, OverflowRecovery, RetryOptions, ToolExecution, TransformContext } from '../types/run-config.js'
import type { AgentTool } from '../types/tool.js'
import type { MessageSource, QueueMode } from './message-queue.js'

/** Everything a run needs besides its context. */
export interface AgentLoopConfig {
  readonly model: ModelSpec
  /** The provider: request in, chunks out. */
  readonly streamFn: StreamFn
  readonly streamOptions?: StreamOptions
  /**
   * Retries of transient provider errors (rate limit, overloaded, server,
   * network, timeout): see {@link retryStream}. Default: 4 attempts with
   * exponential backoff; `false` turns retries off.
   */
  readonly retry?: RetryOptions | false
  /** Models that take over a turn whose call failed with a retryable error after its retries (see `callModel`). */
  readonly fallback?: readonly ModelRoute[]
  /** A smaller context for a turn the provider rejected as too long (asked once per turn). */
  readonly recoverOverflow?: (state: TurnState) => OverflowRecovery | undefined
  /** Default: drop custom messages. */
  readonly convertToLlm?: ConvertToLlm
  /** Rewrites what the model sees each turn (not the transcript). */
  readonly transformContext?: TransformContext
  /** Messages that redirect the agent while it works. Polled after each turn's tool batch (see `steeringDelivery`). */
  readonly steering?: MessageSource
  readonly steeringMode?: QueueMode
  /**
   * `afterBatch` (default): steering is taken when the turn's tool calls have
   * all finished. `interrupt`: also after each tool call finishes; if a message
   * is waiting, the calls still running are cancelled and those not started are
   * skipped (each with a result saying so).
   */
  readonly steeringDelivery?: 'afterBatch' | 'interrupt'
  /** Messages that continue the run when it would otherwise end. */
  readonly followUp?: MessageSource
  readonly followUpMode?: QueueMode
  readonly policies?: Policies
  /** Asked before a tool call runs (every call, or those `approvalRequired` selects). */
  readonly approveTool?: ApproveTool
  /** Which tools `approveTool` is asked about (default: all); the others run without approval events. */
  readonly approvalRequired?: (tool: AgentTool) => boolean
  /** Default: concurrent, unlimited. */
  readonly toolExecution?: ToolExecution
  /** Default timeout of a tool call, in milliseconds (a tool's own `timeoutMs` wins). */
  readonly toolTimeoutMs?: number
  /**
   * At most this many tool calls of one assistant message run; each call
   * beyond it gets an error result ("Tool call not executed: the message has
   * N tool calls; at most 128 run per message"). Default
   * {@link DEFAULT_MAX_TOOL_CALLS_PER_MESSAGE} (128); `Infinity` for no cap.
   */
  readonly maxToolCallsPerMessage?: number
  /**
   * How deep a tool call's parsed arguments may nest (default 64, the
   * arguments object being level 1). Deeper arguments are not run: the model
   * is told "its arguments are nested deeper than 64 levels".
   */
  readonly maxArgumentDepth?: number
  /** The run stops with `maxTurns` instead of starting turn number `maxTurns + 1`. */
  readonly maxTurns?: number
  /** Where time comes from: timestamps, timeouts. Pass the TestScheduler's for virtual time. */
  readonly scheduler?: SchedulerLike
  /**
   * Aborting it ends the run gracefully, whatever it is waiting for (the
   * model, a retry's backoff, a tool, a policy, the approver, the context
   * transform): the partial answer is kept with stopReason `aborted`, every
   * tool call gets a result, what was pending is cancelled, and `turnEnd` and
   * `agentEnd` are still emitted. (Unsubscribing instead cancels at once and
   * emits nothing more.)
   */
  readonly signal?: AbortSignal
  /**
   * Builds the turn from its stages; the default is {@link defaultTurn}. Use
   * it to insert, replace or wrap operators.
   */
  readonly turn?: (stages: TurnStages) => TurnOperator
}

/**
 * The stages of a turn, configured for one run, in their standard order.
 * A turn must pass `startTurn`, `streamLlm`, `dispatchTools` and
 * `decideContinuation` in that order; a pipeline that leaves one out or
 * reorders them fails the run with a `TurnProtocolError` naming the stage.
 */
export interface TurnStages {
  /** Pre-turn policies: may stop the run before the turn starts, or inject messages. */
  readonly preTurnPolicy: TurnOperator
  /** `turnStart`; pending messages join the transcript. */
  readonly startTurn: TurnOperator
  /** What the model sees this turn (`transformContext`, `convertToLlm`). */
  readonly transformContext: TurnOperator
  /** Calls the model and streams its answer. */
  readonly streamLlm: TurnOperator
  /** Runs the answer's tool calls (policies, approval, execution); one result per call. */
  readonly dispatchTools: TurnOperator
  /** `turnEnd`. */
  readonly endTurn: TurnOperator
  /** Post-turn policies: may stop the run, or inject messages (and force another turn). */
  readonly postTurnPolicy: TurnOperator
  /** Takes the steering messages that arrived; they join the next turn. */
  readonly pollSteering: TurnOperator
  /** Decides whether the loop goes on (`continuation`): tool calls, pending messages or a forced turn. */
  readonly decideContinuation: TurnOperator
  /** Post-loop policies, when the loop would end: may stop it, or inject messages and go on. */
  readonly postLoopPolicy: TurnOperator
  /** Follow-up messages, when the loop would end: the loop goes on with them. */
  readonly pollFollowUp: TurnOperator
  /**
   * The run's abort: emits once when `signal` aborts (at once if it already
   * has), never without a signal. The stages above already stop waiting on
   * it; give it to your own stages that wait (`untilAborted(s.abort, …)`,
   * or the `abort` option of a stage you build yourself).
   */
  readonly abort: Observable<void>
}
