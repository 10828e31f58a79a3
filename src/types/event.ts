/**
 * Everything a run tells its subscribers, tagged by `type`. The order is fixed
 * and documented in the README ("Event order"); marble tests pin it down.
 */
import * as t from 'io-ts'
import { NonNegativeInteger, NonNegativeNumber, struct, taggedUnion } from './codec.js'
import { ProviderErrorInfo } from './provider-error.js'
import { ModelSpec } from './model.js'
import { ProviderChunk } from './chunk.js'
import { AgentMessage, AssistantMessage, ToolResultMessage } from './message.js'
import { AgentResult } from './result.js'
import { ToolOutput } from './tool.js'

export const AgentStartEvent = t.type({ type: t.literal('agentStart') }, 'AgentStartEvent')
export const AgentEndEvent = t.type({ type: t.literal('agentEnd'), result: AgentResult }, 'AgentEndEvent')
export const TurnStartEvent = t.type({ type: t.literal('turnStart'), turnIndex: NonNegativeInteger }, 'TurnStartEvent')
/** `message` is absent only when the turn stopped before the model was called (e.g. `transformContext` failed). */
export const TurnEndEvent = struct(
  'TurnEndEvent',
  { type: t.literal('turnEnd'), turnIndex: NonNegativeInteger, toolResults: t.readonlyArray(ToolResultMessage) },
  { message: AssistantMessage },
)
export const MessageStartEvent = t.type({ type: t.literal('messageStart'), message: AgentMessage }, 'MessageStartEvent')
/**
 * One chunk folded into the assistant message being streamed. `chunk` is the
 * delta itself (what a UI appends); `message` is the snapshot after it,
 * computed on first read and frozen.
 */
export const MessageUpdateEvent = t.type(
  { type: t.literal('messageUpdate'), message: AssistantMessage, chunk: ProviderChunk, contentIndex: NonNegativeInteger },
  'MessageUpdateEvent',
)
/**
 * The model call failed with a transient error and is made again after
 * `delayMs`. Everything streamed since `messageStart` is discarded: `message`
 * is that discarded attempt (stopReason `error`); the updates that follow
 * rebuild the message from empty. No second `messageStart` is emitted.
 */
export const StreamRetryEvent = t.type(
  {
    type: t.literal('streamRetry'),
    attempt: NonNegativeInteger,
    delayMs: NonNegativeNumber,
    error: ProviderErrorInfo,
    message: AssistantMessage,
  },
  'StreamRetryEvent',
)
/**
 * The model failed with a transient error that outlived its retries, and the
 * next model of the fallback chain takes over the same turn (a `streamRetry`
 * discarding the failed attempt follows). One logical assistant message
 * still reaches the transcript, named and priced by the model that finished it.
 * `message` is the failed attempt.
 */
export const ModelFallbackEvent = t.type(
  { type: t.literal('modelFallback'), from: ModelSpec, to: ModelSpec, error: ProviderErrorInfo, message: AssistantMessage },
  'ModelFallbackEvent',
)
/** What a context compaction dropped from what the model sees (the transcript itself is unchanged). */
export const CompactionEvent = struct(
  'CompactionEvent',
  {
    type: t.literal('compaction'),
    /** `overflow`: the provider rejected the context and the turn is retried with a smaller one. */
    reason: t.keyof({ window: null, overflow: null }),
    droppedMessages: NonNegativeInteger,
    droppedTokens: NonNegativeInteger,
    keptMessages: NonNegativeInteger,
    keptTokens: NonNegativeInteger,
    budget: NonNegativeInteger,
  },
  {},
)
export const MessageEndEvent = t.type({ type: t.literal('messageEnd'), message: AgentMessage }, 'MessageEndEvent')
/**
 * A tool call starts. `args` are the arguments it runs with (after rewrites
 * by pre-dispatch policies or the approver, decoded); `modelArgs`, present
 * only when they differ, are the model's own. A call answered without
 * running (rejected, skipped, invalid) reports the model's arguments.
 */
export const ToolExecutionStartEvent = struct(
  'ToolExecutionStartEvent',
  { type: t.literal('toolExecutionStart'), toolCallId: t.string, toolName: t.string, args: t.unknown },
  { modelArgs: t.unknown },
)
export const ToolExecutionUpdateEvent = t.type(
  { type: t.literal('toolExecutionUpdate'), toolCallId: t.string, toolName: t.string, partialResult: ToolOutput },
  'ToolExecutionUpdateEvent',
)
export const ToolExecutionEndEvent = t.type(
  { type: t.literal('toolExecutionEnd'), toolCallId: t.string, toolName: t.string, result: ToolOutput, isError: t.boolean },
  'ToolExecutionEndEvent',
)
export const ToolApprovalRequestEvent = t.type(
  { type: t.literal('toolApprovalRequest'), toolCallId: t.string, toolName: t.string, args: t.unknown },
  'ToolApprovalRequestEvent',
)
export const ToolApprovalEndEvent = struct(
  'ToolApprovalEndEvent',
  {
    type: t.literal('toolApprovalEnd'),
    toolCallId: t.string,
    toolName: t.string,
    approved: t.boolean,
    /** True when the approver replaced the arguments. */
    rewritten: t.boolean,
  },
  { reason: t.string },
)
/** Which of the four slots a policy ran in. */
export const PolicySlot = t.keyof({ preTurn: null, preDispatch: null, postTurn: null, postLoop: null }, 'PolicySlot')
export type PolicySlot = t.TypeOf<typeof PolicySlot>
/** What a policy decided, other than continue: `stop` and `inject` (any slot but pre-dispatch), `skip` and `rewrite` (pre-dispatch). */
export const PolicyAction = t.keyof({ stop: null, inject: null, skip: null, rewrite: null }, 'PolicyAction')
export type PolicyAction = t.TypeOf<typeof PolicyAction>
/** A policy did something other than continue. */
export const PolicyDecisionEvent = struct(
  'PolicyDecisionEvent',
  {
    type: t.literal('policyDecision'),
    slot: PolicySlot,
    policy: t.string,
    action: PolicyAction,
  },
  { reason: t.string, toolCallId: t.string },
)

export const AgentEvent = taggedUnion(
  'type',
  [
    AgentStartEvent,
    AgentEndEvent,
    TurnStartEvent,
    TurnEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    StreamRetryEvent,
    ModelFallbackEvent,
    CompactionEvent,
    MessageEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    ToolExecutionEndEvent,
    ToolApprovalRequestEvent,
    ToolApprovalEndEvent,
    PolicyDecisionEvent,
  ],
  'AgentEvent',
)
export type AgentEvent = t.TypeOf<typeof AgentEvent>
export type AgentStartEvent = t.TypeOf<typeof AgentStartEvent>
export type AgentEndEvent = t.TypeOf<typeof AgentEndEvent>
export type TurnStartEvent = t.TypeOf<typeof TurnStartEvent>
export type TurnEndEvent = t.TypeOf<typeof TurnEndEvent>
export type MessageStartEvent = t.TypeOf<typeof MessageStartEvent>
export type MessageUpdateEvent = t.TypeOf<typeof MessageUpdateEvent>
export type MessageEndEvent = t.TypeOf<typeof MessageEndEvent>
export type StreamRetryEvent = t.TypeOf<typeof StreamRetryEvent>
export type ModelFallbackEvent = t.TypeOf<typeof ModelFallbackEvent>
export type CompactionEvent = t.TypeOf<typeof CompactionEvent>
export type ToolExecutionStartEvent = t.TypeOf<typeof ToolExecutionStartEvent>
export type ToolExecutionUpdateEvent = t.TypeOf<typeof ToolExecutionUpdateEvent>
export type ToolExecutionEndEvent = t.TypeOf<typeof ToolExecutionEndEvent>
export type ToolApprovalRequestEvent = t.TypeOf<typeof ToolApprovalRequestEvent>
export type ToolApprovalEndEvent = t.TypeOf<typeof ToolApprovalEndEvent>
export type PolicyDecisionEvent = t.TypeOf<typeof PolicyDecisionEvent>
/** The events `accumulateMessage` emits for one streamed assistant message. */
export type AssistantStreamEvent =
  | (MessageStartEvent & { readonly message: AssistantMessage })
  | MessageUpdateEvent
  | StreamRetryEvent
  | ModelFallbackEvent
  | (MessageEndEvent & { readonly message: AssistantMessage })
