/**
 * rxagent: a reactive runtime for LLM agent loops.
 *
 * - Data model: io-ts codecs for content, messages, usage, models, stream
 *   chunks, events; static types derived from them.
 * - `agentLoop` / `agentLoopContinue`: a run as a cold Observable of events.
 * - `defineTool`: tools whose parameters (io-ts, a Standard Schema such as
 *   Zod, or JSON Schema) give both the JSON Schema and the argument decoder.
 * - Policies and approval: the loop's four policy slots and the approval gate.
 *
 * Stages live in `rxagent/operators`; the test kit in `rxagent/marbles`.
 *
 * Explicit lists, no `export *`: every public name is chosen, and
 * test/public-api.test.ts pins them. Internals (the linked observer,
 * `nextState`, the message queue, reducers) are imported from their files.
 */
export {
  decode,
  decodeOrThrow,
  JsonObject,
  NonNegativeInteger,
  NonNegativeNumber,
  type DecodeIssue,
  DecodeError,
} from './types/codec.js'
export {
  extractText,
  TextContent,
  ThinkingContent,
  ToolCallContent,
  ImageSource,
  ImageContent,
  ExtensionContent,
  Content,
  UserContent,
  AssistantContent,
  text,
  imageBase64,
  imageUrl,
} from './types/content.js'
export {
  usage,
  addUsage,
  addCost,
  cacheHitRate,
  costOf,
  Usage,
  Cost,
  CostRates,
  CostTier,
  ratesFor,
  emptyUsage,
  emptyCost,
  mergeUsage,
  mergeCost,
} from './types/usage.js'
export { modelSpec, thinkingBudget, ThinkingLevel, ThinkingBudgets, ModelSpec } from './types/model.js'
export { StopReason } from './types/stop-reason.js'
export {
  defineCustomMessage,
  agentMessageCodec,
  userMessage,
  assistantMessage,
  toolCallsOf,
  UserMessage,
  AssistantMessage,
  ToolResultMessage,
  LlmMessage,
  CustomMessage,
  AgentMessage,
  type CustomMessageKind,
  type CustomMessageOf,
  type RegisteredKind,
  isLlmMessage,
} from './types/message.js'
export {
  providerErrorInfo,
  ProviderErrorKind,
  ProviderErrorInfo,
  isTransientKind,
  ProviderError,
} from './types/provider-error.js'
export {
  ChunkStopReason,
  MessageStartChunk,
  TextDeltaChunk,
  ThinkingDeltaChunk,
  ThinkingSignatureChunk,
  ThinkingRedactedChunk,
  ToolUseStartChunk,
  ToolUseArgsDeltaChunk,
  ToolUseEndChunk,
  ExtensionChunk,
  RetryChunk,
  StopChunk,
  UsageChunk,
  ProviderChunk,
} from './types/chunk.js'
export {
  ToolOutput,
  ToolSchema,
  type ToolReturn,
  type ToolExecuteContext,
  type AgentTool,
  type SyncDecodingTool,
  type ToolDecodeResult,
  toolSchemaOf,
} from './types/tool.js'
export { StreamOptions, LlmRequest, type StreamFn } from './types/request.js'
export { AgentResult } from './types/result.js'
export {
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
  PolicySlot,
  PolicyDecisionEvent,
  AgentEvent,
  type AssistantStreamEvent,
} from './types/event.js'
export { settleTranscript, repairTranscript, describeRepair, InvalidTranscriptError, type TranscriptRepair, type RepairedTranscript } from './types/settle.js'
export {
  type PolicyVerdict,
  type PreDispatchVerdict,
  Verdict,
  type RunView,
  type PreTurnView,
  type PreDispatchView,
  type PostTurnView,
  type PostLoopView,
  type Policy,
  type PreTurnPolicy,
  type PreDispatchPolicy,
  type PostTurnPolicy,
  type PostLoopPolicy,
  type Policies,
} from './policy/policy.js'
export { type ApprovalDecision, type ApprovalRequest, type ApproveTool, Approval } from './policy/approval.js'
export {
  defineTool,
  toolResult,
  type ToolDefinition,
  type StandardToolDefinition,
  type JsonSchemaToolDefinition,
  type JsonSchemaParameters,
} from './tools/define-tool.js'
export type { StandardToolSchema, StandardSchemaV1, StandardJSONSchemaV1 } from './tools/standard-schema.js'
export { withDescription, toJsonSchema } from './tools/json-schema.js'
export { runTool, type ToolRunEvent, type RunToolOptions } from './tools/run-tool.js'
export {
  withMessages,
  type AgentContext,
  type LoopStop,
  type TurnState,
  type TurnItem,
  type TurnOperator,
  isTurnState,
} from './turn/turn-state.js'
export { TurnProtocolError } from './turn/turn-protocol.js'
export { defaultTurn, composeTurn, agentLoop, agentLoopContinue, type AgentLoopConfig, type TurnStages } from './loop/agent-loop.js'
export { agentLoopResume, type ResumeOptions } from './loop/agent-loop-resume.js'
export { fromAsyncIterable } from './rx/from-async-iterable.js'
export type { MessageSource, QueueMode } from './loop/message-queue.js'
export { agentResult, transcriptFromEvents } from './loop/transcript.js'
export { estimateTokens, estimateContextTokens, type EstimateTokens } from './context/estimate-tokens.js'
export {
  slidingWindow,
  compactionOf,
  slidingWindowRecovery,
  type CompactionReport,
  type WindowResult,
  type WindowInfo,
  type SlidingWindowOptions,
  type SlidingWindow,
} from './context/sliding-window.js'
export {
  type ApprovalMode,
  type PromptInput,
  type CallOptions,
  type AgentOptions,
  type AgentRun,
  AgentBusyError,
  StructuredOutputError,
  type StructuredOptions,
  type StructuredRun,
  DEFAULT_PLAN_MODE_ADDENDUM,
  Agent,
  type RestoreOptions,
} from './agent/agent.js'
export { AgentSession, SessionClosedError } from './agent/agent-session.js'
export { DEFAULT_LEASE_TTL_MS, type AgentOpenOptions, type SessionLeaseOptions } from './agent/session-open.js'
export { SessionWriteError } from './agent/session-writer.js'
export {
  SessionConflictError,
  SessionDeletedError,
  SessionLeaseError,
  SessionRecord,
  SessionRecordBody,
  StreamRecord,
  TimedRecord,
  type LeaseOutcome,
  type SessionAppend,
  type SessionAppended,
  type SessionInfo,
  type SessionLease,
  type SessionListOptions,
  type SessionStore,
} from './agent/session-store.js'
export {
  ToolMetrics,
  TurnMetrics,
  TurnMetricsEvent,
  ModelChangeEvent,
  ListenerErrorEvent,
  EventStamp,
  AgentOwnEvent,
  AgentRunEvent,
} from './agent/agent-events.js'
export type { AgentState, PendingApproval } from './agent/agent-state.js'
export { AGENT_LOG_FORMAT, AgentLogEntry, decodeAgentLog, StreamMarks } from './agent/agent-log.js'
export {
  Checkpoint,
  CHECKPOINT_FORMAT,
  decodeCheckpoint,
  type CheckpointInfo,
  type CheckpointStore,
  InMemoryCheckpointStore,
} from './agent/checkpoint.js'
export { InvalidInputError, AgentMessageInput } from './types/input.js'
export { turnMetrics, type MetricsCollector } from './agent/metrics.js'
export { subAgentTool, type SubAgentChild, type SubAgentFollower, type SubAgentToolOptions } from './agent/sub-agent.js'
export { maxTurnsPolicy } from './policy/builtin/max-turns.js'
export { budgetPolicy, type BudgetLimits } from './policy/builtin/budget.js'
export { toolDenyList, type DenyRule } from './policy/builtin/tool-deny-list.js'
export { loopDetection, type LoopDetectionOptions } from './policy/builtin/loop-detection.js'
