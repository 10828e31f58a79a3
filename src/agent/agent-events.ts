/**
 * The events an `Agent` emits: every loop event, plus the agent's own
 * (metrics, model changes), each stamped with the agent id, the run id and
 * the turn index it belongs to.
 */
import * as t from 'io-ts'
import { NonNegativeInteger, NonNegativeNumber, struct, taggedUnion } from '../types/codec.js'
import { AgentEvent } from '../types/event.js'
import { ModelSpec } from '../types/model.js'
import { Cost, Usage } from '../types/usage.js'

/** One tool call's timing within a turn. */
export const ToolMetrics = t.type(
  { toolCallId: t.string, toolName: t.string, durationMs: NonNegativeNumber, isError: t.boolean },
  'ToolMetrics',
)
export type ToolMetrics = t.TypeOf<typeof ToolMetrics>

/** What a turn cost in time and tokens. Times come from the agent's scheduler. */
export const TurnMetrics = struct(
  'TurnMetrics',
  {
    turnIndex: NonNegativeInteger,
    /** From the start of the turn's model call to its end (retries and fallbacks included). */
    llmDurationMs: NonNegativeNumber,
    tools: t.readonlyArray(ToolMetrics),
    /** The turn's assistant message's usage and cost. */
    usage: Usage,
    cost: Cost,
  },
  {
    /** From the start of the model call to the first content chunk; absent when none came. */
    timeToFirstTokenMs: NonNegativeNumber,
    /** Output tokens per second of streaming (first content chunk to the end). */
    outputTokensPerSecond: NonNegativeNumber,
  },
)
export type TurnMetrics = t.TypeOf<typeof TurnMetrics>

export const TurnMetricsEvent = t.type({ type: t.literal('turnMetrics'), metrics: TurnMetrics }, 'TurnMetricsEvent')
export type TurnMetricsEvent = t.TypeOf<typeof TurnMetricsEvent>

/** The agent's model changed (cycling, or `setModel`). */
export const ModelChangeEvent = t.type({ type: t.literal('modelChange'), from: ModelSpec, to: ModelSpec }, 'ModelChangeEvent')
export type ModelChangeEvent = t.TypeOf<typeof ModelChangeEvent>

/** A listener or forwarder threw; the agent and the other listeners went on. */
export const ListenerErrorEvent = t.type({ type: t.literal('listenerError'), listener: t.string, error: t.string, eventType: t.string }, 'ListenerErrorEvent')
export type ListenerErrorEvent = t.TypeOf<typeof ListenerErrorEvent>

/** Where an event belongs: the agent, its run (`null` outside a run), the turn. */
export const EventStamp = t.type({ agentId: t.string, runId: t.union([t.string, t.null]), turnIndex: NonNegativeInteger }, 'EventStamp')
export type EventStamp = t.TypeOf<typeof EventStamp>

/** Every event an Agent emits. */
export const AgentOwnEvent = taggedUnion('type', [TurnMetricsEvent, ModelChangeEvent, ListenerErrorEvent], 'AgentOwnEvent')
export type AgentOwnEvent = t.TypeOf<typeof AgentOwnEvent>
export const AgentRunEvent = t.intersection([t.union([AgentEvent, AgentOwnEvent]), EventStamp], 'AgentRunEvent')
export type AgentRunEvent = t.TypeOf<typeof AgentRunEvent>
