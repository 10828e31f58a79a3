/**
 * The agent loop: prompts in, a cold Observable of events out. Each turn is
 * the composition of the stages in `operators/` (configured for a run in
 * `run-stages.ts`); this file only wires them and decides, between turns,
 * whether another one follows.
 */
import { asyncScheduler, defer, NEVER, Observable, type SchedulerLike, type Subscriber } from 'rxjs'
import { draftState, initialState, isTurnState, nextState, runMessages, type AgentContext, type TurnItem, type TurnOperator, type TurnState } from '../turn/turn-state.js'
import type { AgentEvent } from '../types/event.js'
import type { AgentMessage, AssistantMessage } from '../types/message.js'
import { decodeContext, decodePrompts, newShape, type PromptInput } from '../types/input.js'
import { adoptedTranscript } from '../types/growing-transcript.js'
import type { AgentResult } from '../types/result.js'
import { emptyCost, emptyUsage } from '../types/usage.js'
import { MessageQueue, type MessageSource, type QueueMode } from './message-queue.js'
import { runTurns, type AfterTurn } from './run-turns.js'
import { isAborted, RunAbort } from './run-abort.js'
import { DEFAULT_MAX_TOOL_CALLS_PER_MESSAGE, turnStages } from './run-stages.js'
import { linked } from '../rx/linked-observer.js'
import { validTranscript } from '../types/settle.js'
import { eventsTo, type EventRelay, type EventSink } from '../turn/event-relay.js'
import { resident, unused } from '../rx/resident.js'
import { deepFreeze } from '../types/deep-freeze.js'
import type { AgentLoopConfig, TurnStages } from './agent-loop-config.js'

export { DEFAULT_MAX_TOOL_CALLS_PER_MESSAGE }
export type { AgentLoopConfig, TurnStages } from './agent-loop-config.js'

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
    if (config.signal !== undefined && isAborted(config.signal)) {
      return { end: nextState(state, { stop: { reason: 'aborted', message: 'the run was aborted between turns' } }) }
    }
    if (state.turnIndex + 1 >= maxTurns) {
      return { end: nextState(state, { stop: { reason: 'maxTurns', message: `stopped after ${maxTurns} turns (maxTurns)` } }) }
    }
    // What belonged to the finished turn is cleared.
    const next = draftState(state)
    next.turnIndex = state.turnIndex + 1
    next.started = false
    next.toolResults = []
    next.forceNextTurn = false
    next.assistant = undefined
    next.llmMessages = undefined
    next.continuation = undefined
    return { next: Object.freeze(next) }
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
    if (config.signal !== undefined && isAborted(config.signal)) {
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
 * message or tool throws. The transcript is read then too: change
 * `context.messages` after this call and a run may or may not see it (a
 * transcript without tool calls is copied here); pass a new context instead.
 * A prompt message is frozen (all the way down), as an Agent freezes every
 * message its transcript takes in: the transcripts the run sends start with
 * it, and what is remembered about a transcript (its check, each message's
 * request text) is kept for frozen messages only.
 *
 * @returns The run's events, ending with `agentEnd` (whose `result` holds the
 * run's new messages, stop reason, usage and cost).
 * @throws InvalidInputError naming the path of a bad value (`invalid context at messages[0].content`).
 */
export function agentLoop(prompts: PromptInput, context: AgentContext, config: AgentLoopConfig): Observable<AgentEvent> {
  const now = (config.scheduler ?? asyncScheduler).now()
  const list = decodePrompts(prompts, 'agentLoop', now)
  // An unfrozen prompt at the head of every request made each turn check the whole transcript and
  // convert the prompt again. WIRE TOOLS (50 turns), building the 51 requests: see `replay.ts`.
  for (const m of list) deepFreeze(m)
  const shape = newShape()
  const decoded = decodeContext(context, 'agentLoop', now, shape)
  // The decoding pass read every message, and found no tool call or result: the transcript is
  // valid as it is (nothing to repair), and the run takes it as a transcript of its own (a copy,
  // which appending the prompts made anyway) whose custom messages are known. The validity walk
  // and the scan for custom messages were a walk each over the history: LONG (5,000 fresh
  // messages, after a full GC; 5 runs under callgrind, bench/worker.mjs's gc() before each): 26.6M ->
  // 19.7M instructions; first delta after a 400 ms warm-up, 4 alternating processes of 30 runs:
  // median 0.95 -> 0.83 ms.
  if (shape.complete && !shape.toolCalls && decoded.messages.length > 0) {
    return runLoop({ ...decoded, messages: adoptedTranscript(decoded.messages, shape.firstCustom) }, list, config)
  }
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
// And the app's own observer, an object literal `{ next, error, complete }`: its map too is
// reached by weak transitions, and `Observable.subscribe` is optimized for it. Measured (TOOLS
// 200, a full GC before each of 12 runs, --trace-deopt, 4 processes each): that code thrown
// away for it before one of runs 2–11 in every process, now in none; its TurboFan compile time
// over those runs (3 more processes each) 4–133 ms, now 0.
resident({ next: () => undefined, error: () => undefined, complete: () => undefined })
