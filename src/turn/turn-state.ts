/**
 * The value that flows through a turn's operators. A turn is a run of
 * `TurnItem`s: agent events, passed through untouched, and exactly one
 * `TurnState`, always last, which each stage replaces with its successor.
 * The pipeline of stages is subscribed once per run and sees the turns one
 * after another: a stage answers each state it receives with that turn's
 * events and exactly one state (checked: see `turn-protocol.ts`).
 */
import type { OperatorFunction } from 'rxjs'
import type { AgentEvent } from '../types/event.js'
import type { AgentMessage, AssistantMessage, ToolResultMessage, LlmMessage } from '../types/message.js'
import type { ModelSpec } from '../types/model.js'
import type { StopReason } from '../types/stop-reason.js'
import type { AgentTool } from '../types/tool.js'
import { addCost, addUsage, emptyCost, emptyUsage, type Cost, type Usage } from '../types/usage.js'
import { resident } from '../rx/resident.js'
import { appendMessages, messagesFrom } from '../types/growing-transcript.js'
import { holdLazily, lazilyAppended, lazyTranscriptOf, transcriptLength, type Transcript } from '../types/lazy-transcript.js'
import type { Writable } from '../types/writable.js'

export { hasNoCustomMessages } from '../types/growing-transcript.js'

/** What a run works on: the system prompt, the transcript and the tools. */
export interface AgentContext {
  readonly systemPrompt: string
  readonly messages: readonly AgentMessage[]
  readonly tools: readonly AgentTool[]
}

/** Why the loop ends after this turn. */
export interface LoopStop {
  readonly reason: StopReason
  /** In words: the error, or why a policy or the caller stopped the run. */
  readonly message?: string
  /** The policy that stopped the run, for `policyStop`. */
  readonly by?: string
}

/** The loop's state at one point of one turn. Frozen; stages build the next one. */
export interface TurnState {
  readonly type: 'turnState'
  readonly turnIndex: number
  readonly context: AgentContext
  readonly model: ModelSpec
  /** Index in `context.messages` where this run's own messages begin. */
  readonly runStart: number
  /** Messages that join the transcript when the turn starts (prompts, steering, follow-ups, injected). */
  readonly pending: readonly AgentMessage[]
  /** Set by `startTurn`. */
  readonly started: boolean
  /** What this turn sends to the model, set by `transformContext`. */
  readonly llmMessages?: readonly LlmMessage[]
  /** This turn's answer, set by `streamLlm`. */
  readonly assistant?: AssistantMessage
  /** This turn's tool results in call order, set by `dispatchTools`. */
  readonly toolResults: readonly ToolResultMessage[]
  /** Totals of this run. */
  readonly usage: Usage
  readonly cost: Cost
  /** Set when the loop must end after this turn. */
  readonly stop?: LoopStop
  /** Set by a stage that wants another turn even without tool calls (a post-turn injection). */
  readonly forceNextTurn?: boolean
  /** After the turn: whether the loop goes on (`next`) or would end here (`idle`). Set by `decideContinuation`. */
  readonly continuation?: 'next' | 'idle'
}

/** What flows between a turn's operators. */
export type TurnItem = AgentEvent | TurnState

/** A stage of a turn: the unit users insert, replace or wrap. */
export type TurnOperator = OperatorFunction<TurnItem, TurnItem>

/** Whether `item` is the state rather than an event. */
export const isTurnState = (item: TurnItem): item is TurnState => item.type === 'turnState'

/**
 * The state with `changes` applied, frozen. Every state has every field, in
 * the same order (absent ones hold `undefined`), and is copied field by field:
 * then all states share one hidden class, and this costs about a quarter of a
 * spread of a frozen object. It runs a dozen times per turn. A state holds only
 * the fields of {@link TurnState}: keep your own data in an operator's closure.
 */
export function nextState(state: TurnState, changes: Partial<Omit<TurnState, 'type'>>): TurnState {
  return stateWith(state, state.context, changes)
}

/** {@link nextState} with `context` as well (`changes` may still replace it). */
function stateWith(state: TurnState, context: AgentContext, changes: Partial<Omit<TurnState, 'type'>>): TurnState {
  return Object.freeze(Object.assign(draftState(state, context), changes))
}

/**
 * `state`'s copy (with `context`), not yet frozen: a stage of the runtime sets the fields it changes
 * and freezes it, the state {@link nextState} makes, without a `changes` literal and `Object.assign`'s
 * copy of it (about 440 instructions a state, six states a tool turn; with the other stages' own
 * states: TOOLS 200 turns, callgrind, 40 warm-up runs, then 4 after two full GCs each, node
 * --single-threaded: 51.78 -> 51.19 M instructions a run). Internal: not exported from the package.
 */
export function draftState(state: TurnState, context: AgentContext = state.context): Writable<TurnState> {
  return {
    type: 'turnState',
    turnIndex: state.turnIndex,
    context,
    model: state.model,
    runStart: state.runStart,
    pending: state.pending,
    started: state.started,
    llmMessages: state.llmMessages,
    assistant: state.assistant,
    toolResults: state.toolResults,
    usage: state.usage,
    cost: state.cost,
    stop: state.stop,
    forceNextTurn: state.forceNextTurn,
    continuation: state.continuation,
  }
}

/**
 * Appends to a frozen array without touching it. A spread, not `concat`: V8's
 * `concat` leaves its fast path for frozen arrays, and on a frozen 400-message
 * transcript it takes about 1.6 µs against 0.5 µs for the spread.
 */
export function appended<T>(items: readonly T[], more: readonly T[]): readonly T[] {
  if (more.length === 0) return items
  return Object.freeze([...items, ...more])
}

/**
 * The state with `messages` at the end of the transcript. A long transcript
 * becomes a lazy one (`lazy-transcript.ts`): no copy of the history until
 * a stage reads `context.messages`.
 */
export function withMessages(state: TurnState, messages: readonly AgentMessage[]): TurnState {
  return messages.length === 0 ? state : withMessagesAnd(state, messages, noChanges)
}

const noChanges: Partial<Omit<TurnState, 'type'>> = Object.freeze({})

/**
 * {@link withMessages} and then {@link nextState} with `changes`, as one new
 * state rather than two: a tool turn did this twice (its answer, its results).
 * Internal: not exported from the package.
 */
export function withMessagesAnd(state: TurnState, messages: readonly AgentMessage[], changes: Partial<Omit<TurnState, 'type'>>): TurnState {
  return Object.freeze(Object.assign(draftWithMessages(state, messages), changes))
}

/** {@link draftState} with `messages` at the end of the transcript (see {@link withMessages}). Internal. */
export function draftWithMessages(state: TurnState, messages: readonly AgentMessage[]): Writable<TurnState> {
  const context = state.context
  if (messages.length === 0) return draftState(state, context)
  const lazy = lazilyAppended(context, messages)
  const appended =
    lazy !== undefined
      ? lazyContext(context.systemPrompt, lazy, context.tools)
      : { systemPrompt: context.systemPrompt, messages: appendMessages(context.messages, messages), tools: context.tools }
  return draftState(state, appended)
}

/** A context whose `messages` is `transcript`, made into an array when read (`holdLazily`); same keys, same order. */
function lazyContext(systemPrompt: string, transcript: Transcript, tools: readonly AgentTool[]): AgentContext {
  const context: { systemPrompt: string; tools?: readonly AgentTool[] } = { systemPrompt }
  holdLazily(context, transcript)
  context.tools = tools
  return context as AgentContext
}

/** The state with this turn's assistant message recorded, counted and appended. */
export function withAssistant(state: TurnState, message: AssistantMessage): TurnState {
  const usage = addUsage(state.usage, message.usage)
  const cost = addCost(state.cost, message.cost)
  const next = draftWithMessages(state, [message])
  next.assistant = message
  next.usage = usage
  next.cost = cost
  return Object.freeze(next)
}

/** This run's messages so far. */
export function runMessages(state: TurnState): readonly AgentMessage[] {
  const lazy = lazyTranscriptOf(state.context)
  return lazy !== undefined ? lazy.from(state.runStart) : messagesFrom(state.context.messages, state.runStart)
}

/** The first state of a run. */
export function initialState(context: AgentContext, model: ModelSpec, pending: readonly AgentMessage[], usage: Usage, cost: Cost): TurnState {
  const first: TurnState = {
    type: 'turnState',
    turnIndex: 0,
    context,
    model,
    runStart: transcriptLength(context),
    pending,
    started: false,
    toolResults: [],
    usage,
    cost,
  }
  return nextState(first, {})
}

/** What every policy sees of `state`. */
export function runViewOf(state: TurnState): {
  turnIndex: number
  messages: readonly AgentMessage[]
  model: ModelSpec
  usage: Usage
  cost: Cost
} {
  return { turnIndex: state.turnIndex, messages: state.context.messages, model: state.model, usage: state.usage, cost: state.cost }
}

// A frozen state's hidden class is a transition that the unfrozen class holds weakly: with no state
// alive (a full GC between two runs) it was collected, and every optimized function that reads a
// state (nextState, stateWith, runViewOf, hasUnansweredCalls, CallBatch's complete…) was thrown
// away ("weak objects") and compiled again in the next run. One frozen state kept for the process
// keeps the class. TOOLS 200 turns, two full GCs before each of 6 runs, callgrind, node
// --single-threaded: 148.6 -> 102.1 M instructions a run (TurboFan's share 69 -> 32 M);
// weak-objects marks over runs 2-9: 17 -> 1-2.
resident(nextState(initialState({ systemPrompt: '', messages: [], tools: [] }, { provider: 'resident', modelId: 'resident', thinkingLevel: 'off' }, [], emptyUsage, emptyCost), { started: true }))
