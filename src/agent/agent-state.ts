/**
 * The state an Agent exposes, derived from its events by one reducer.
 *
 * immer does the structural work: a finished message is appended to the
 * history without copying the messages themselves, and every snapshot is
 * frozen. The one exception is the message being streamed: a `messageUpdate`
 * only swaps `streamMessage` on a shallow copy of the root (the history array
 * is shared as is), because an immer `produce` per token would cost more than
 * the whole rest of the runtime.
 *
 * immer's auto-freeze is recursive, and tool results carry `details` of any
 * depth (a tool's output, possibly echoing a model's): every message is
 * frozen without recursion (`deepFreeze`) before it enters a draft, and immer
 * skips what is frozen already.
 */
import { produce } from 'immer'
import type { AgentEvent } from '../types/event.js'
import type { AgentMessage, AssistantMessage } from '../types/message.js'
import type { ModelSpec } from '../types/model.js'
import type { AgentTool } from '../types/tool.js'
import { deepFreeze } from '../types/deep-freeze.js'

export interface AgentState {
  readonly systemPrompt: string
  readonly model: ModelSpec
  readonly tools: readonly AgentTool[]
  readonly messages: readonly AgentMessage[]
  readonly isRunning: boolean
  /** The assistant message being streamed, as of its last chunk. */
  readonly streamMessage: AssistantMessage | undefined
  /** Ids of the tool calls executing now. */
  readonly pendingToolCalls: readonly string[]
  /** What ended the last run badly, in words. */
  readonly error: string | undefined
  readonly availableModels: readonly ModelSpec[]
  readonly planMode: boolean
}

export function initialAgentState(fields: Pick<AgentState, 'systemPrompt' | 'model' | 'tools' | 'messages' | 'availableModels'>): AgentState {
  // Messages all the way down, without recursion (see the module comment).
  for (const message of fields.messages) deepFreeze(message)
  // Tools shallowly: they hold codecs and functions that are not ours to freeze.
  return Object.freeze({ ...fields, tools: Object.freeze([...fields.tools]), messages: Object.freeze([...fields.messages]), availableModels: Object.freeze([...fields.availableModels]), isRunning: false, streamMessage: undefined, pendingToolCalls: Object.freeze([]), error: undefined, planMode: false })
}

/** The state after `event`. Returns `state` itself when the event changes nothing. */
export function reduceAgentState(state: AgentState, event: AgentEvent): AgentState {
  switch (event.type) {
    case 'messageUpdate':
    case 'streamRetry':
    case 'modelFallback':
      return Object.freeze({ ...state, streamMessage: event.type === 'messageUpdate' ? event.message : undefined })
    case 'agentStart':
      return produce(state, (d) => {
        d.isRunning = true
        d.error = undefined
      })
    case 'messageStart':
      return event.message.role === 'assistant' ? Object.freeze({ ...state, streamMessage: event.message }) : state
    // The three events a tool batch repeats per call are plain copies rather than immer
    // drafts: a message with thousands of calls makes thousands of them, and immer's
    // auto-freeze walks the whole array each time (quadratic, and 50 s for 10,000 calls).
    case 'messageEnd':
      deepFreeze(event.message)
      return Object.freeze({
        ...state,
        messages: Object.freeze([...state.messages, event.message]),
        streamMessage: event.message.role === 'assistant' ? undefined : state.streamMessage,
      })
    case 'toolExecutionStart':
      return Object.freeze({ ...state, pendingToolCalls: Object.freeze([...state.pendingToolCalls, event.toolCallId]) })
    case 'toolExecutionEnd': {
      const at = state.pendingToolCalls.indexOf(event.toolCallId)
      if (at < 0) return state
      return Object.freeze({ ...state, pendingToolCalls: Object.freeze(state.pendingToolCalls.filter((_, i) => i !== at)) })
    }
    case 'agentEnd':
      return produce(state, (d) => {
        d.isRunning = false
        d.streamMessage = undefined
        d.pendingToolCalls = []
        const r = event.result
        d.error = r.stopReason === 'error' || r.stopReason === 'aborted' ? (r.error ?? r.stopReason) : undefined
      })
    default:
      return state
  }
}
