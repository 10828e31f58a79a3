/** The data model's public names; `src/index.ts` re-exports them from their files. Internals stay in their files. */
export { decode, decodeOrThrow, DecodeError, JsonObject, NonNegativeInteger, NonNegativeNumber, type DecodeIssue } from './codec.js'
export {
  AssistantContent,
  Content,
  ExtensionContent,
  extractText,
  ImageContent,
  imageBase64,
  ImageSource,
  imageUrl,
  text,
  TextContent,
  ThinkingContent,
  ToolCallContent,
  UserContent,
} from './content.js'
export { addCost, addUsage, cacheHitRate, Cost, CostRates, CostTier, costOf, ratesFor, emptyCost, emptyUsage, mergeCost, mergeUsage, usage, Usage } from './usage.js'
export { ModelSpec, modelSpec, thinkingBudget, ThinkingBudgets, ThinkingLevel } from './model.js'
export { StopReason } from './stop-reason.js'
export {
  agentMessageCodec,
  AgentMessage,
  AssistantMessage,
  assistantMessage,
  CustomMessage,
  defineCustomMessage,
  isLlmMessage,
  LlmMessage,
  toolCallsOf,
  ToolResultMessage,
  UserMessage,
  userMessage,
  type CustomMessageKind,
  type CustomMessageOf,
  type RegisteredKind,
} from './message.js'
export { isTransientKind, ProviderError, ProviderErrorInfo, providerErrorInfo, ProviderErrorKind } from './provider-error.js'
export {
  ChunkStopReason,
  ExtensionChunk,
  MessageStartChunk,
  ProviderChunk,
  RetryChunk,
  StopChunk,
  TextDeltaChunk,
  ThinkingDeltaChunk,
  ThinkingRedactedChunk,
  ThinkingSignatureChunk,
  ToolUseArgsDeltaChunk,
  ToolUseEndChunk,
  ToolUseStartChunk,
  UsageChunk,
} from './chunk.js'
export { ToolOutput, ToolSchema, toolSchemaOf, type AgentTool, type ToolExecuteContext, type ToolReturn } from './tool.js'
export { LlmRequest, StreamOptions, type StreamFn } from './request.js'
export { AgentResult } from './result.js'
export {
  AgentEndEvent,
  AgentEvent,
  AgentStartEvent,
  CompactionEvent,
  MessageEndEvent,
  MessageStartEvent,
  MessageUpdateEvent,
  ModelFallbackEvent,
  PolicyDecisionEvent,
  PolicySlot,
  StreamRetryEvent,
  ToolApprovalEndEvent,
  ToolApprovalRequestEvent,
  ToolExecutionEndEvent,
  ToolExecutionStartEvent,
  ToolExecutionUpdateEvent,
  TurnEndEvent,
  TurnStartEvent,
  type AssistantStreamEvent,
} from './event.js'
export { settleTranscript, repairTranscript, describeRepair, InvalidTranscriptError, type TranscriptRepair, type RepairedTranscript } from './settle.js'
export { InvalidInputError, AgentMessageInput, UserMessageInput, ToolResultMessageInput, type PromptInput } from './input.js'
