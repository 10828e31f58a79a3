/**
 * The state an Agent exposes: the fold of its log (`agent-reducer.ts`).
 * Every snapshot is frozen and shares what did not change with the one
 * before it; the message being streamed lives in its own field, so a
 * snapshot while streaming never copies the history.
 */
import { emptyTranscript } from '../types/growing-transcript.js'
import { holdLazily, type Transcript } from '../types/lazy-transcript.js'
import type { AgentMessage, AssistantMessage } from '../types/message.js'
import type { ModelSpec } from '../types/model.js'
import type { AgentTool } from '../types/tool.js'

/** A tool call waiting for an approval decision (see `Agent.resolveApproval`). */
export interface PendingApproval {
  readonly toolCallId: string
  readonly toolName: string
  /** The arguments the call would run with. */
  readonly args: Readonly<Record<string, unknown>>
}

export interface AgentState {
  readonly systemPrompt: string
  readonly model: ModelSpec
  readonly tools: readonly AgentTool[]
  readonly messages: readonly AgentMessage[]
  readonly isRunning: boolean
  /** The assistant message being streamed, as of its last chunk (not in the log: see `agent-log.ts`). */
  readonly streamMessage: AssistantMessage | undefined
  /** Ids of the tool calls executing now. */
  readonly pendingToolCalls: readonly string[]
  /** Tool calls waiting for an approval decision, in request order. */
  readonly pendingApprovals: readonly PendingApproval[]
  /** Steering messages queued and not yet delivered, oldest first. */
  readonly steeringQueue: readonly AgentMessage[]
  /** Follow-up messages queued and not yet delivered, oldest first. */
  readonly followUpQueue: readonly AgentMessage[]
  /** What ended the last run badly, in words. */
  readonly error: string | undefined
  readonly availableModels: readonly ModelSpec[]
  readonly planMode: boolean
}

/**
 * The state before any entry but `init`: nothing running, nothing queued.
 * A frozen `messages` is kept as is (not copied), so that the facts found
 * while checking it (see `src/types/transcript-memo.ts`) are found again for
 * the first run in O(1).
 */
export function initialAgentState(fields: Pick<AgentState, 'systemPrompt' | 'model' | 'tools' | 'messages' | 'availableModels'>): AgentState {
  return Object.freeze({
    systemPrompt: fields.systemPrompt,
    model: fields.model,
    tools: Object.freeze([...fields.tools]),
    // An empty one gets a backing, which the first run's loop shares (see `emptyTranscript`).
    messages: fields.messages.length === 0 ? emptyTranscript() : Object.isFrozen(fields.messages) ? fields.messages : Object.freeze([...fields.messages]),
    isRunning: false,
    streamMessage: undefined,
    pendingToolCalls: Object.freeze([]),
    pendingApprovals: Object.freeze([]),
    steeringQueue: Object.freeze([]),
    followUpQueue: Object.freeze([]),
    error: undefined,
    availableModels: Object.freeze([...fields.availableModels]),
    planMode: false,
  })
}

/**
 * A snapshot whose `messages` is `transcript`, made into its frozen array on
 * first read (`lazy-transcript.ts`): the other fields from `fields`, but
 * `streamMessage`; the same keys in the same order as any snapshot.
 */
export function lazyAgentState(fields: Omit<AgentState, 'messages'>, transcript: Transcript, streamMessage: AssistantMessage | undefined): AgentState {
  const state: Record<string, unknown> = { systemPrompt: fields.systemPrompt, model: fields.model, tools: fields.tools }
  holdLazily(state, transcript)
  state['isRunning'] = fields.isRunning
  state['streamMessage'] = streamMessage
  state['pendingToolCalls'] = fields.pendingToolCalls
  state['pendingApprovals'] = fields.pendingApprovals
  state['steeringQueue'] = fields.steeringQueue
  state['followUpQueue'] = fields.followUpQueue
  state['error'] = fields.error
  state['availableModels'] = fields.availableModels
  state['planMode'] = fields.planMode
  return Object.freeze(state) as unknown as AgentState
}
