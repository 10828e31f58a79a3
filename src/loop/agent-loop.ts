/**
 * The agent loop: prompts in, a cold Observable of events out. Each turn is
 * the composition of the stages in `operators/` (configured for a run in
 * `run-stages.ts`); this file only wires them and decides, between turns,
 * whether another one follows.
 */
import { asyncScheduler, defer, NEVER, Observable, type SchedulerLike, type Subscriber } from 'rxjs'
import type { ConvertToLlm, ModelRoute, OverflowRecovery, RetryOptions, ToolExecution, TransformContext } from '../types/run-config.js'
import type { ApproveTool } from '../policy/approval.js'
import type { Policies } from '../policy/policy.js'
import { initialState, isTurnState, nextState, runMessages, type AgentContext, type TurnItem, type TurnOperator, type TurnState } from '../turn/turn-state.js'
import type { AgentEvent } from '../types/event.js'
import type { AgentMessage, AssistantMessage } from '../types/message.js'
import { decodeContext, decodePrompts, type PromptInput } from '../types/input.js'
import type { ModelSpec } from '../types/model.js'
import type { StreamFn, StreamOptions } from '../types/request.js'
import type { AgentResult } from '../types/result.js'
import type { AgentTool } from '../types/tool.js'
import { emptyCost, emptyUsage } from '../types/usage.js'
import { MessageQueue, type MessageSource, type QueueMode } from './message-queue.js'
import { runTurns, type AfterTurn } from './run-turns.js'
import { RunAbort } from './run-abort.js'
import { DEFAULT_MAX_TOOL_CALLS_PER_MESSAGE, turnStages } from './run-stages.js'
import { linked } from '../rx/linked-observer.js'
import { validTranscript } from '../types/settle.js'
import { eventsTo, type EventRelay, type EventSink } from '../turn/event-relay.js'
import { resident, unused } from '../rx/resident.js'

export { DEFAULT_MAX_TOOL_CALLS_PER_MESSAGE }

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

/**
 * Composes any number of stages, left to right: RxJS's `pipe` is typed for
 * at most nine operators at a time, while every stage has the one type
 * `TurnOperator`, so a list of them composes without nesting.
 *
 * @example turn: (s) => composeTurn(s.preTurnPolicy, s.startTurn, myStage, s.transformContext, …)
 */
export function composeTurn(...stages: readonly TurnOperator[]): TurnOperator {
  return (source) => stages.reduce((items, stage) => stage(items), source)
}

/** The stages in their standard order. */
export function defaultTurn(s: TurnStages): TurnOperator {
  return composeTurn(
    s.preTurnPolicy,
    s.startTurn,
    s.transformContext,
    s.streamLlm,
    s.dispatchTools,
    s.endTurn,
    s.postTurnPolicy,
    s.pollSteering,
    s.decideContinuation,
    s.postLoopPolicy,
    s.pollFollowUp,
  )
}

/**
 * The run's events out; its last state ends it with `agentEnd`. A class, so
 * that its per-token `next` keeps its optimized code (see `linked`); a relay
 * of events (see `event-relay.ts`).
 */
class RunOutput implements EventRelay {
  readonly eventsTo: EventSink

  constructor(private readonly subscriber: Subscriber<AgentEvent>) {
    this.eventsTo = eventsTo(subscriber)
  }

  next(item: TurnItem): void {
    if (isTurnState(item)) this.finish(item)
    else this.eventsTo.next(item)
  }

  finish(state: TurnState): void {
    this.subscriber.next({ type: 'agentEnd', result: resultOf(state) })
    this.subscriber.complete()
  }
}

function resultOf(state: TurnState): AgentResult {
  const stop = state.stop
  const stopReason = stop?.reason ?? state.assistant?.stopReason ?? 'stop'
  return {
    messages: runMessages(state),
    stopReason,
    usage: state.usage,
    cost: state.cost,
    ...(stop?.message === undefined ? {} : { error: stop.message }),
    ...(stop?.by === undefined ? {} : { stoppedBy: stop.by }),
  }
}

/** What follows a turn under `config` (see `runTurns`): its own scope, so that a run's other locals are not kept with it. */
function afterTurn(config: AgentLoopConfig): (state: TurnState) => AfterTurn {
  const maxTurns = config.maxTurns ?? Number.POSITIVE_INFINITY
  return (state) => {
    if (state.stop !== undefined || state.continuation !== 'next') return { end: state }
    if (config.signal?.aborted === true) {
      return { end: nextState(state, { stop: { reason: 'aborted', message: 'the run was aborted between turns' } }) }
    }
    if (state.turnIndex + 1 >= maxTurns) {
      return { end: nextState(state, { stop: { reason: 'maxTurns', message: `stopped after ${maxTurns} turns (maxTurns)` } }) }
    }
    // What belonged to the finished turn is cleared.
    return {
      next: nextState(state, {
        turnIndex: state.turnIndex + 1,
        started: false,
        toolResults: [],
        forceNextTurn: false,
        assistant: undefined,
        llmMessages: undefined,
        continuation: undefined,
      }),
    }
  }
}

/** A run's queue of `source` (none without a source: nothing to buffer or poll). */
function queueOf(source: MessageSource | undefined, mode: QueueMode | undefined, name: string, scheduler: SchedulerLike, label: string): MessageQueue | undefined {
  return source === undefined ? undefined : new MessageQueue(source, mode, name, () => scheduler.now(), label)
}

/**
 * The context with its transcript made valid (see `repairTranscript`): once
 * per run, so that a transcript from outside (restored, edited) reaches no
 * `streamFn` broken. The context itself when it is valid.
 */
export function repaired(context: AgentContext): AgentContext {
  const messages = validTranscript(context.messages)
  return messages === context.messages ? context : { ...context, messages }
}

/**
 * A run over `context` (already decoded; repaired at each subscription with
 * `repair`, else already) with `prompts`. With `answer`, the first turn is a
 * resumed one: its answer is `answer` (its tool calls are dispatched without
 * a model call; see `agentLoopResume`), numbered `turnIndex`.
 */
export function runLoop(context: AgentContext, prompts: readonly AgentMessage[], config: AgentLoopConfig, answer?: AssistantMessage, repair = false, turnIndex = 0): Observable<AgentEvent> {
  // One Observable per run, no `defer` around it: a throw while the run is set up errors the subscriber as well.
  return new Observable<AgentEvent>((subscriber) => {
    const scheduler = config.scheduler ?? asyncScheduler
    const steering = queueOf(config.steering, config.steeringMode, 'steering', scheduler, 'steering source')
    const followUp = queueOf(config.followUp, config.followUpMode, 'followUp', scheduler, 'follow-up source')
    const abort = config.signal === undefined ? undefined : new RunAbort(config.signal)
    if (abort !== undefined) subscriber.add(abort)
    const turn = (config.turn ?? defaultTurn)(turnStages(config, scheduler, steering, followUp, abort?.aborted$))
    const initial = initialState(repair ? repaired(context) : context, config.model, prompts, emptyUsage, emptyCost)
    const first = answer === undefined ? (turnIndex === 0 ? initial : nextState(initial, { turnIndex })) : nextState(initial, { assistant: answer, turnIndex })
    // agentStart is emitted here rather than with `concat`: a concat would add a layer every event of the run passes through.
    subscriber.next({ type: 'agentStart' })
    if (subscriber.closed) return
    if (steering !== undefined) subscriber.add(steering.connect())
    if (followUp !== undefined) subscriber.add(followUp.connect())
    const output = new RunOutput(subscriber)
    if (config.signal?.aborted === true) {
      output.finish(nextState(first, { stop: { reason: 'aborted', message: 'the run was aborted before it started' } }))
      return
    }
    runTurns(first, turn, afterTurn(config), { checkProtocol: true }).subscribe(linked<TurnItem>(subscriber, output))
  })
}

/**
 * Runs the agent loop on `context` with new `prompts`. Cold: nothing happens
 * until subscribed, and each subscription is a separate run. Unsubscribing
 * cancels the model call and every running tool. A transcript that breaks
 * the tool-call invariants is repaired first (see `repairTranscript`).
 *
 * The prompts and the context are decoded here, once: a prompt may be a
 * string, and a user or tool-result message may have string `content` and no
 * `timestamp` (see {@link PromptInput}); anything else that is not a valid
 * message or tool throws.
 *
 * @returns The run's events, ending with `agentEnd` (whose `result` holds the
 * run's new messages, stop reason, usage and cost).
 * @throws InvalidInputError naming the path of a bad value (`invalid context at messages[0].content`).
 */
export function agentLoop(prompts: PromptInput, context: AgentContext, config: AgentLoopConfig): Observable<AgentEvent> {
  const now = (config.scheduler ?? asyncScheduler).now()
  const list = decodePrompts(prompts, 'agentLoop', now)
  const decoded = decodeContext(context, 'agentLoop', now)
  return runLoop(decoded, list, config, undefined, true)
}

/** An answer that did not finish (`aborted`, `error`): continuing asks the model again. */
export const isCutOff = (message: AssistantMessage): boolean => message.stopReason === 'aborted' || message.stopReason === 'error'

/**
 * Continues from the transcript as it is, without a new prompt: after a
 * tool result, a steering message added by hand, or an error. The last
 * message must not be a finished assistant message (the model would answer
 * itself); an answer cut off ({@link isCutOff}: a crash, an abort) is asked again.
 *
 * @throws InvalidInputError when the context does not decode (see {@link agentLoop}).
 */
export function agentLoopContinue(context: AgentContext, config: AgentLoopConfig): Observable<AgentEvent> {
  const decoded = decodeContext(context, 'agentLoopContinue', (config.scheduler ?? asyncScheduler).now())
  return defer(() => {
    const settled = repaired(decoded)
    const last = [...settled.messages].reverse().find((m) => m.role !== 'custom')
    if (last === undefined) throw new Error('agentLoopContinue: the transcript has no message to continue from')
    // An answer cut off (aborted, failed) is asked again; a finished one has had the last word.
    if (last.role === 'assistant' && !isCutOff(last)) {
      throw new Error("agentLoopContinue: the last message is the assistant's; add a user or tool result message first")
    }
    return runLoop(settled, [], config)
  })
}

// Hidden classes that outlive a run (see `resident`): the run's output, and what RxJS builds when
// an app subscribes to a run with an observer (a SafeSubscriber and its ConsumerObserver, which
// every event passes through).
resident(new RunOutput(unused))
resident(NEVER.subscribe({ next: () => undefined }))
