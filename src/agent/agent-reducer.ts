/**
 * The one reducer: an agent's state is its log folded by
 * {@link reduceAgentLog}, commands and run events alike.
 *
 * An entry changes fields of the root and nothing deeper: the new state is
 * the root copied field by field with those fields replaced ({@link change}),
 * frozen, sharing everything else with the one before. The one array an
 * entry grows or shrinks is built here, frozen — appending a message to a
 * long transcript is one array copy, never a walk of the messages (tool
 * results carry `details` of any depth: every message is frozen without
 * recursion, `deepFreeze`, before it enters).
 *
 * The one update that is not a log entry is the message being streamed
 * ({@link withStreamMessage}): a `messageUpdate` per token only swaps
 * `streamMessage` on a copy of the root (the history array is shared as is),
 * and the log records a streamed message once, as its final message.
 */
import { deepFreeze } from '../types/deep-freeze.js'
import type { AssistantMessage } from '../types/message.js'
import type { ModelSpec } from '../types/model.js'
import { settleTranscript } from '../types/settle.js'
import { appendMessages } from '../types/growing-transcript.js'
import type { AgentTool } from '../types/tool.js'
import type { AgentLogCommand, AgentLogEntry } from './agent-log.js'
import { initialAgentState, type AgentState, type PendingApproval } from './agent-state.js'

type Writable<T> = { -readonly [K in keyof T]: T[K] }

/**
 * `state` with `changes`, frozen: every field copied in the same order (all
 * states share one hidden class), then the changed ones. `state` itself when
 * no field changes (`Object.is`), so that nothing is published for it.
 *
 * Until this, each entry ran an immer `produce` (a proxy draft of the root,
 * its recipe, its finalization): 5 of them in a short run, about 30 µs each
 * with the code and data cold after a full garbage collection, 0.15 ms of a
 * restored Agent's 1.1 ms prompt (agent-restore 10 to 1,000 messages).
 */
function change(state: AgentState, changes: Partial<AgentState>): AgentState {
  let same = true
  for (const key in changes) {
    if (!Object.is(changes[key as keyof AgentState], state[key as keyof AgentState])) {
      same = false
      break
    }
  }
  if (same) return state
  const next: Writable<AgentState> = {
    systemPrompt: state.systemPrompt,
    model: state.model,
    tools: state.tools,
    messages: state.messages,
    isRunning: state.isRunning,
    streamMessage: state.streamMessage,
    pendingToolCalls: state.pendingToolCalls,
    pendingApprovals: state.pendingApprovals,
    steeringQueue: state.steeringQueue,
    followUpQueue: state.followUpQueue,
    error: state.error,
    availableModels: state.availableModels,
    planMode: state.planMode,
  }
  return Object.freeze(Object.assign(next, changes))
}

/** The tools named by a `tools` or `init` entry. */
export type ToolResolver = (names: readonly string[]) => readonly AgentTool[]

const frozen = <T>(items: T[]): readonly T[] => Object.freeze(items)
const EMPTY: readonly never[] = Object.freeze([])
/** `list` without the item at `at`, frozen; `list` itself when `at` is -1. */
const without = <T>(list: readonly T[], at: number): readonly T[] => (at < 0 ? list : frozen(list.filter((_, i) => i !== at)))

/** Whether two specs name the same model. */
export const sameModel = (a: ModelSpec, b: ModelSpec): boolean => a.provider === b.provider && a.modelId === b.modelId

/** The state an `init` entry starts from. */
export function stateOfInit(entry: Extract<AgentLogEntry | AgentLogCommand, { type: 'init' }>, tools: ToolResolver): AgentState {
  // Messages all the way down, without recursion (see the module comment).
  for (const message of entry.messages) deepFreeze(message)
  // Frozen as every value of the state is.
  deepFreeze(entry.model)
  return initialAgentState({ systemPrompt: entry.systemPrompt, model: entry.model, tools: tools(entry.tools), messages: entry.messages, availableModels: entry.availableModels })
}

/** The state after `entry`. Returns `state` itself when the entry changes nothing. */
export function reduceAgentLog(state: AgentState, entry: AgentLogEntry | AgentLogCommand, tools: ToolResolver): AgentState {
  switch (entry.type) {
    case 'init':
      return stateOfInit(entry, tools)
    case 'runStart':
    case 'runResumed':
    case 'agentStart':
      return change(state, { isRunning: true, error: undefined })
    case 'messageEnd': {
      const message = frozenMessage(entry.message)
      // A growing transcript: an exact-size copy of a shared backing array (a frozen array's own copy is slow).
      const messages = appendMessages(state.messages, [message])
      return change(state, message.role === 'assistant' ? { messages, streamMessage: undefined } : { messages })
    }
    case 'toolExecutionStart':
      return change(state, { pendingToolCalls: frozen([...state.pendingToolCalls, entry.toolCallId]) })
    case 'toolExecutionEnd': {
      const pending = without(state.pendingToolCalls, state.pendingToolCalls.indexOf(entry.toolCallId))
      return change(state, { pendingToolCalls: pending })
    }
    case 'agentEnd':
      return change(state, { ...endRun(state), error: entry.stopReason === 'error' || entry.stopReason === 'aborted' ? (entry.error ?? entry.stopReason) : undefined })
    case 'runFailed': {
      const reason = entry.settleReason
      const messages = reason === undefined ? state.messages : frozen(settleTranscript(state.messages, reason).map(frozenMessage))
      return change(state, { ...endRun(state), messages, error: entry.error })
    }
    case 'enqueue': {
      const message = frozenMessage(entry.message)
      return change(state, entry.queue === 'steering' ? { steeringQueue: frozen([...state.steeringQueue, message]) } : { followUpQueue: frozen([...state.followUpQueue, message]) })
    }
    case 'dequeue':
      if (entry.count === 0) return state
      return change(state, entry.queue === 'steering' ? { steeringQueue: frozen(state.steeringQueue.slice(entry.count)) } : { followUpQueue: frozen(state.followUpQueue.slice(entry.count)) })
    case 'clearQueue':
      return change(state, entry.queue === 'steering' ? { steeringQueue: EMPTY } : { followUpQueue: EMPTY })
    case 'model': {
      const model = frozenMessage(entry.model)
      return state.availableModels.some((m) => sameModel(m, model))
        ? change(state, { model })
        : change(state, { model, availableModels: frozen([...state.availableModels, model]) })
    }
    case 'tools': {
      return change(state, { tools: frozen([...tools(entry.tools)]) })
    }
    case 'systemPrompt':
      return change(state, { systemPrompt: entry.systemPrompt })
    case 'planMode':
      return change(state, { planMode: entry.on })
    case 'approvalRequested': {
      const pending: PendingApproval = Object.freeze({ toolCallId: entry.toolCallId, toolName: entry.toolName, args: frozenMessage(entry.args) })
      return change(state, { pendingApprovals: frozen([...state.pendingApprovals, pending]) })
    }
    case 'approvalDecided': {
      const pending = without(state.pendingApprovals, state.pendingApprovals.findIndex((p) => p.toolCallId === entry.toolCallId))
      return change(state, { pendingApprovals: pending })
    }
    case 'reset':
      return change(state, { ...endRun(state), messages: EMPTY, steeringQueue: EMPTY, followUpQueue: EMPTY, error: undefined })
    case 'turnStart':
    case 'turnEnd':
    case 'policyDecision':
      return state
  }
}

/** `value`, frozen all the way down without recursion (see the module comment). */
function frozenMessage<T>(value: T): T {
  deepFreeze(value)
  return value
}

/** What no run outlives: the streamed message, executing calls, approvals waiting (the changes to `state`). */
function endRun(state: AgentState): Partial<AgentState> {
  return {
    isRunning: false,
    streamMessage: undefined,
    ...(state.pendingToolCalls.length > 0 ? { pendingToolCalls: EMPTY } : {}),
    ...(state.pendingApprovals.length > 0 ? { pendingApprovals: EMPTY } : {}),
  }
}

/**
 * The transient update: `message` is being streamed (or, `undefined`, a retry
 * or fallback dropped it). Not a log entry; see the module comment.
 */
export function withStreamMessage(state: AgentState, message: AssistantMessage | undefined): AgentState {
  if (state.streamMessage === message) return state
  // Field by field rather than a spread: an object literal of a known shape is built on V8's fast path.
  return Object.freeze({
    systemPrompt: state.systemPrompt,
    model: state.model,
    tools: state.tools,
    messages: state.messages,
    isRunning: state.isRunning,
    streamMessage: message,
    pendingToolCalls: state.pendingToolCalls,
    pendingApprovals: state.pendingApprovals,
    steeringQueue: state.steeringQueue,
    followUpQueue: state.followUpQueue,
    error: state.error,
    availableModels: state.availableModels,
    planMode: state.planMode,
  })
}

/** Folds a whole log. */
export function foldAgentLog(entries: readonly AgentLogEntry[], tools: ToolResolver): AgentState {
  const [init, ...rest] = entries
  if (init?.type !== 'init') throw new Error('an agent log starts with an init entry')
  let state = stateOfInit(init, tools)
  for (const e of rest) state = reduceAgentLog(state, e, tools)
  return state
}
