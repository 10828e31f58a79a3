/**
 * The attributes the run's events put on its spans: a model call's usage, the
 * span events of a retry, a fallback, a compaction, an approval and a policy
 * decision, and an `execute_tool` span's opening attributes.
 */
import type { Attributes } from '@opentelemetry/api'
import type {
  CompactionEvent,
  ModelFallbackEvent,
  PolicyDecisionEvent,
  StreamRetryEvent,
  ToolApprovalEndEvent,
  ToolExecutionStartEvent,
} from '../types/event.js'
import type { Usage } from '../types/usage.js'
import { jsonString } from './content.js'
import { ATTR, OPERATION } from './semconv.js'

/** A call's or a run's token usage (input counts the cache's reads and writes too). */
export const usageAttributes = (usage: Usage): Attributes => ({
  [ATTR.usageInputTokens]: usage.input + usage.cacheRead + usage.cacheWrite,
  [ATTR.usageOutputTokens]: usage.output,
  [ATTR.usageCacheReadTokens]: usage.cacheRead,
  [ATTR.usageCacheCreationTokens]: usage.cacheWrite,
})

/** The `retry` event of a model call. */
export const retryAttributes = (e: StreamRetryEvent): Attributes => ({
  [ATTR.attempt]: e.attempt,
  [ATTR.delayMs]: e.delayMs,
  [ATTR.errorType]: e.error.kind,
  [ATTR.errorMessage]: e.error.message,
})

/** The `fallback` event of a model call. */
export const fallbackAttributes = (e: ModelFallbackEvent): Attributes => ({
  [ATTR.fallbackFrom]: e.from.modelId,
  [ATTR.fallbackTo]: e.to.modelId,
  [ATTR.errorType]: e.error.kind,
  [ATTR.errorMessage]: e.error.message,
})

/** The `compaction` event of a model call. */
export const compactionAttributes = (e: CompactionEvent): Attributes => ({
  [ATTR.compactionReason]: e.reason,
  [ATTR.droppedMessages]: e.droppedMessages,
  [ATTR.droppedTokens]: e.droppedTokens,
  [ATTR.keptMessages]: e.keptMessages,
  [ATTR.keptTokens]: e.keptTokens,
  [ATTR.budget]: e.budget,
})

/** An `execute_tool` span's attributes at its start; its arguments only when content is captured. */
export function toolStartAttributes(e: ToolExecutionStartEvent, captureContent: boolean): Attributes {
  const attributes: Attributes = {
    [ATTR.operationName]: OPERATION.executeTool,
    [ATTR.toolName]: e.toolName,
    [ATTR.toolCallId]: e.toolCallId,
    [ATTR.toolType]: 'function',
  }
  if (captureContent) attributes[ATTR.toolCallArguments] = jsonString(e.args)
  return attributes
}

/** The run's `approval end` event. */
export const approvalEndAttributes = (e: ToolApprovalEndEvent): Attributes => ({
  [ATTR.toolName]: e.toolName,
  [ATTR.toolCallId]: e.toolCallId,
  [ATTR.approved]: e.approved,
  ...(e.reason === undefined ? {} : { [ATTR.reason]: e.reason }),
})

/** The run's `policy decision` event. */
export const policyDecisionAttributes = (e: PolicyDecisionEvent): Attributes => ({
  [ATTR.policySlot]: e.slot,
  [ATTR.policyName]: e.policy,
  [ATTR.policyAction]: e.action,
  ...(e.reason === undefined ? {} : { [ATTR.reason]: e.reason }),
  ...(e.toolCallId === undefined ? {} : { [ATTR.toolCallId]: e.toolCallId }),
})

/** The text of a tool result's content: a failed tool span's status message. */
export function textOf(content: readonly { readonly type: string; readonly text?: string }[]): string {
  return content.map((c) => (c.type === 'text' ? (c.text ?? '') : '')).join('')
}
