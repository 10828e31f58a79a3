/**
 * Every OpenTelemetry name `rxagent/otel` writes, in one place: the GenAI
 * semantic conventions are still in Development status and their names move
 * between releases, so a rename is one edit here.
 *
 * Follows the GenAI conventions as of semantic-conventions v1.41 (agent,
 * inference and tool spans; client metrics). The span events for retries,
 * fallbacks, compactions, approvals and policy decisions are rxagent's own
 * (`rxagent.*`): the conventions define none for them.
 */

/** Attribute names. */
export const ATTR = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  responseId: 'gen_ai.response.id',
  /** Seconds from the model call's start to its first content chunk (streamed calls; the attempt that answered). */
  responseTimeToFirstChunk: 'gen_ai.response.time_to_first_chunk',
  responseFinishReasons: 'gen_ai.response.finish_reasons',
  /** All input tokens, cache reads and writes included (rxagent's `usage.input` excludes them). */
  usageInputTokens: 'gen_ai.usage.input_tokens',
  usageOutputTokens: 'gen_ai.usage.output_tokens',
  usageCacheReadTokens: 'gen_ai.usage.cache_read.input_tokens',
  usageCacheCreationTokens: 'gen_ai.usage.cache_creation.input_tokens',
  conversationId: 'gen_ai.conversation.id',
  agentName: 'gen_ai.agent.name',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  tokenType: 'gen_ai.token.type',
  /** Opt-in content (`captureContent`): JSON, in the conventions' message format. */
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  toolCallArguments: 'gen_ai.tool.call.arguments',
  toolCallResult: 'gen_ai.tool.call.result',
  errorType: 'error.type',
  /** rxagent's own, on span events and the run span. */
  stopReason: 'rxagent.stop_reason',
  turnIndex: 'rxagent.turn.index',
  attempt: 'rxagent.retry.attempt',
  delayMs: 'rxagent.retry.delay_ms',
  errorMessage: 'rxagent.error.message',
  fallbackFrom: 'rxagent.fallback.from_model',
  fallbackTo: 'rxagent.fallback.to_model',
  compactionReason: 'rxagent.compaction.reason',
  droppedMessages: 'rxagent.compaction.dropped_messages',
  droppedTokens: 'rxagent.compaction.dropped_tokens',
  keptMessages: 'rxagent.compaction.kept_messages',
  keptTokens: 'rxagent.compaction.kept_tokens',
  budget: 'rxagent.compaction.budget',
  approved: 'rxagent.approval.approved',
  reason: 'rxagent.reason',
  policySlot: 'rxagent.policy.slot',
  policyName: 'rxagent.policy.name',
  policyAction: 'rxagent.policy.action',
} as const

/** Values of `gen_ai.operation.name`. */
export const OPERATION = { invokeAgent: 'invoke_agent', chat: 'chat', executeTool: 'execute_tool' } as const

/** Values of `gen_ai.token.type`. */
export const TOKEN_TYPE = { input: 'input', output: 'output' } as const

/** Span event names (rxagent's own). */
export const EVENT = {
  retry: 'rxagent.retry',
  fallback: 'rxagent.fallback',
  compaction: 'rxagent.compaction',
  approvalRequest: 'rxagent.approval.request',
  approvalEnd: 'rxagent.approval.end',
  policyDecision: 'rxagent.policy.decision',
} as const

/** `error.type` for a run or call ended by an abort (the conventions leave it to the instrumentation). */
export const ABORTED = 'aborted'
/** `error.type` for a tool call whose result is an error. */
export const TOOL_ERROR = 'tool_error'

/** The client metrics, with the bucket boundaries the conventions advise (the conventions' per-chunk `time_per_output_chunk` is not recorded: a histogram point per delta). */
export const METRIC = {
  tokenUsage: {
    name: 'gen_ai.client.token.usage',
    unit: '{token}',
    description: 'Number of input and output tokens used.',
    buckets: [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864],
  },
  operationDuration: {
    name: 'gen_ai.client.operation.duration',
    unit: 's',
    description: 'GenAI operation duration.',
    buckets: [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92],
  },
  timeToFirstChunk: {
    name: 'gen_ai.client.operation.time_to_first_chunk',
    unit: 's',
    description: 'Time to receive the first chunk of a streamed response, from the request.',
    buckets: [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92],
  },
} as const

/** The name of the default tracer and meter. */
export const INSTRUMENTATION_NAME = 'rxagent'

/** rxagent's stop reasons as the conventions' finish reasons (`toolUse` → `tool_call`, the rest as they are). */
export function finishReason(stopReason: string): string {
  return stopReason === 'toolUse' ? 'tool_call' : stopReason
}
