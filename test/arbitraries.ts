/**
 * fast-check arbitraries for every boundary type in src/types.
 *
 * Every value generated here survives a JSON round trip unchanged:
 * - optional fields are either absent or hold a real value (never `undefined`);
 * - numbers are finite and never `-0`;
 * - `unknown` fields (details, data, args) hold JSON values that are already
 *   normalised through JSON (so `-0` has become `0`);
 * - objects are plain objects (no null prototype), like the runtime builds.
 *
 * Sizes are kept small so that property tests over nested types (events hold
 * results, results hold messages, messages hold content) stay fast.
 */
import fc from 'fast-check'
import type {
  AssistantContent,
  Content,
  ExtensionContent,
  ImageContent,
  ImageSource,
  TextContent,
  ThinkingContent,
  ToolCallContent,
  UserContent,
} from '../src/types/content.js'
import type {
  AgentMessage,
  AssistantMessage,
  CustomMessage,
  LlmMessage,
  ToolResultMessage,
  UserMessage,
} from '../src/types/message.js'
import type { Cost, CostRates, CostTier, Usage } from '../src/types/usage.js'
import type { ModelSpec, ThinkingBudgets, ThinkingLevel } from '../src/types/model.js'
import type { StopReason } from '../src/types/stop-reason.js'
import type { ProviderErrorInfo, ProviderErrorKind } from '../src/types/provider-error.js'
import type {
  ChunkStopReason,
  ExtensionChunk,
  MessageStartChunk,
  ProviderChunk,
  StopChunk,
  TextDeltaChunk,
  ThinkingDeltaChunk,
  ThinkingRedactedChunk,
  ThinkingSignatureChunk,
  ToolUseArgsDeltaChunk,
  ToolUseEndChunk,
  ToolUseStartChunk,
  UsageChunk,
} from '../src/types/chunk.js'
import type { ToolOutput, ToolSchema } from '../src/types/tool.js'
import type { LlmRequest, StreamOptions } from '../src/types/request.js'
import type { AgentResult } from '../src/types/result.js'
import type {
  AgentEndEvent,
  AgentEvent,
  AgentStartEvent,
  MessageEndEvent,
  MessageStartEvent,
  MessageUpdateEvent,
  PolicyDecisionEvent,
  PolicySlot,
  ToolApprovalEndEvent,
  ToolApprovalRequestEvent,
  ToolExecutionEndEvent,
  ToolExecutionStartEvent,
  ToolExecutionUpdateEvent,
  TurnEndEvent,
  TurnStartEvent,
} from '../src/types/event.js'

// ---------------------------------------------------------------------------
// Primitives
// ---------------------------------------------------------------------------

/** Plain object records (never null-prototype). `requiredKeys` omitted = all required. */
const record = fc.record
const plain = { noNullPrototype: true } as const

/** Maximum length of every generated array. */
const MAX_ITEMS = 3

/** Strings: mostly ASCII, sometimes any UTF-16 (lone surrogates included; JSON escapes them losslessly). */
/**
 * A sequence of `length` cut at `cuts` (each taken modulo `length + 1`, sorted): the pieces
 * `slice(from, to)` gives, which concatenate back to the whole; empty pieces allowed.
 */
export function piecesAt<T>(length: number, cuts: readonly number[], slice: (from: number, to: number) => T): T[] {
  const points = cuts.map((c) => c % (length + 1)).sort((a, b) => a - b)
  const pieces: T[] = []
  let previous = 0
  for (const p of points) {
    pieces.push(slice(previous, p))
    previous = p
  }
  pieces.push(slice(previous, length))
  return pieces
}

export const arbString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) },
)

/**
 * Keys for key-wise summed maps (`Usage.extra`, `Cost.extra`): any string that
 * is not also a property of `Object.prototype` (`__proto__`, `constructor`,
 * `toString`…). Those are a known problem of the usage arithmetic, tested on
 * their own in codecs.test.ts.
 */
export const arbExtraKey: fc.Arbitrary<string> = fc
  .oneof(fc.string({ maxLength: 8 }), fc.constantFrom('webSearch', 'codeExecution', 'images'))
  .filter((k) => !(k in Object.prototype))

/** Non-negative integers: token counts, indices. */
export const arbTokenCount: fc.Arbitrary<number> = fc.oneof(fc.constant(0), fc.nat())

/** Milliseconds since the epoch (any non-negative integer). */
export const arbTimestamp: fc.Arbitrary<number> = fc.oneof(fc.nat(), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }))

/** Maps `-0` to `0`; leaves every other number alone. */
const noNegativeZero = (n: number): number => (Object.is(n, -0) ? 0 : n)

/** Finite non-negative doubles, never `-0`: money and rates. */
export const arbMoney: fc.Arbitrary<number> = fc
  .double({ min: 0, noNaN: true, noDefaultInfinity: true })
  .map(noNegativeZero)

/** Any finite double, never `-0` (e.g. `temperature`). */
export const arbFiniteNumber: fc.Arbitrary<number> = fc
  .double({ noNaN: true, noDefaultInfinity: true })
  .map(noNegativeZero)

/** Normalises a JSON value through JSON itself: `-0` becomes `0`, objects become plain objects. */
const viaJson = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T

/** A small JSON value that is identical after a JSON round trip. */
export const arbJson: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 2 }).map(viaJson)

/** A small JSON object (tool arguments, schemas, extension data), identical after a JSON round trip. */
export const arbJsonObject: fc.Arbitrary<Record<string, unknown>> = fc
  .dictionary(fc.string({ maxLength: 8 }), arbJson, { maxKeys: 4 })
  .map(viaJson)

const arbExtra: fc.Arbitrary<Record<string, number>> = fc.dictionary(arbExtraKey, arbTokenCount, { maxKeys: 3, ...plain })
const arbCostExtra: fc.Arbitrary<Record<string, number>> = fc.dictionary(arbExtraKey, arbMoney, { maxKeys: 3, ...plain })

// ---------------------------------------------------------------------------
// Content
// ---------------------------------------------------------------------------

export const arbTextContent: fc.Arbitrary<TextContent> = record({ type: fc.constant('text'), text: arbString }, plain)

export const arbThinkingContent: fc.Arbitrary<ThinkingContent> = record(
  { type: fc.constant('thinking'), thinking: arbString, signature: arbString, redacted: fc.boolean() },
  { requiredKeys: ['type', 'thinking'], ...plain },
)

export const arbToolCallContent: fc.Arbitrary<ToolCallContent> = record(
  {
    type: fc.constant('toolCall'),
    id: arbString,
    name: arbString,
    arguments: arbJsonObject,
    partialJson: arbString,
    parseError: arbString,
  },
  { requiredKeys: ['type', 'id', 'name', 'arguments'], ...plain },
)

export const arbBase64ImageSource: fc.Arbitrary<ImageSource> = record(
  { type: fc.constant('base64'), data: fc.base64String({ maxLength: 16 }), mimeType: fc.constantFrom('image/png', 'image/jpeg', 'image/webp') },
  plain,
)

export const arbUrlImageSource: fc.Arbitrary<ImageSource> = record(
  { type: fc.constant('url'), url: fc.webUrl(), mimeType: fc.constantFrom('image/png', 'image/gif') },
  { requiredKeys: ['type', 'url'], ...plain },
)

export const arbImageSource: fc.Arbitrary<ImageSource> = fc.oneof(arbBase64ImageSource, arbUrlImageSource)

export const arbImageContent: fc.Arbitrary<ImageContent> = record({ type: fc.constant('image'), source: arbImageSource }, plain)

export const arbExtensionContent: fc.Arbitrary<ExtensionContent> = record(
  { type: fc.constant('extension'), typeName: arbString, data: arbJson },
  plain,
)

export const arbUserContent: fc.Arbitrary<UserContent> = fc.oneof(arbTextContent, arbImageContent, arbExtensionContent)

export const arbAssistantContent: fc.Arbitrary<AssistantContent> = fc.oneof(
  arbTextContent,
  arbThinkingContent,
  arbToolCallContent,
  arbExtensionContent,
)

export const arbContent: fc.Arbitrary<Content> = fc.oneof(
  arbTextContent,
  arbThinkingContent,
  arbToolCallContent,
  arbImageContent,
  arbExtensionContent,
)

// ---------------------------------------------------------------------------
// Usage and cost
// ---------------------------------------------------------------------------

export const arbUsage: fc.Arbitrary<Usage> = record(
  {
    input: arbTokenCount,
    output: arbTokenCount,
    reasoning: arbTokenCount,
    cacheRead: arbTokenCount,
    cacheWrite: arbTokenCount,
    total: arbTokenCount,
    extra: arbExtra,
  },
  plain,
)

export const arbCost: fc.Arbitrary<Cost> = record(
  {
    input: arbMoney,
    output: arbMoney,
    cacheRead: arbMoney,
    cacheWrite: arbMoney,
    total: arbMoney,
    extra: arbCostExtra,
  },
  plain,
)

/** Realistic prices per million tokens (0 to 1000), so `costOf` stays well inside double range. */
export const arbCostRates: fc.Arbitrary<CostRates> = record(
  {
    input: fc.double({ min: 0, max: 1000, noNaN: true }).map(noNegativeZero),
    output: fc.double({ min: 0, max: 1000, noNaN: true }).map(noNegativeZero),
    cacheRead: fc.double({ min: 0, max: 1000, noNaN: true }).map(noNegativeZero),
    cacheWrite: fc.double({ min: 0, max: 1000, noNaN: true }).map(noNegativeZero),
  },
  plain,
)

/** A price tier: rates that apply to a whole request whose prompt is above a token count. */
export const arbCostTier: fc.Arbitrary<CostTier> = record(
  { aboveInputTokens: arbTokenCount, input: arbMoney, output: arbMoney, cacheRead: arbMoney, cacheWrite: arbMoney },
  plain,
)

/** Any valid rates: every finite non-negative double, sometimes with prompt-length tiers. */
export const arbAnyCostRates: fc.Arbitrary<CostRates> = record(
  { input: arbMoney, output: arbMoney, cacheRead: arbMoney, cacheWrite: arbMoney, tiers: fc.array(arbCostTier, { maxLength: 3 }) },
  { requiredKeys: ['input', 'output', 'cacheRead', 'cacheWrite'], ...plain },
)

/** Realistic rates with 0 to 3 realistic tiers (thresholds up to 2M tokens). */
export const arbTieredCostRates: fc.Arbitrary<CostRates> = fc
  .tuple(
    arbCostRates,
    fc.array(fc.tuple(fc.integer({ min: 0, max: 2_000_000 }), arbCostRates), { maxLength: 3 }),
  )
  .map(([base, tiers]) => (tiers.length === 0 ? base : { ...base, tiers: tiers.map(([aboveInputTokens, rates]) => ({ aboveInputTokens, ...rates })) }))

// ---------------------------------------------------------------------------
// Model, stop reasons
// ---------------------------------------------------------------------------

export const arbStopReason: fc.Arbitrary<StopReason> = fc.constantFrom(
  'stop',
  'length',
  'toolUse',
  'error',
  'aborted',
  'refusal',
  'maxTurns',
  'policyStop',
)

export const arbThinkingLevel: fc.Arbitrary<ThinkingLevel> = fc.constantFrom('off', 'minimal', 'low', 'medium', 'high', 'xhigh')

export const arbThinkingBudgets: fc.Arbitrary<ThinkingBudgets> = record(
  { minimal: arbTokenCount, low: arbTokenCount, medium: arbTokenCount, high: arbTokenCount, xhigh: arbTokenCount },
  { requiredKeys: [], ...plain },
)

export const arbModelSpec: fc.Arbitrary<ModelSpec> = record(
  {
    provider: arbString,
    modelId: arbString,
    thinkingLevel: arbThinkingLevel,
    thinkingBudgets: arbThinkingBudgets,
    contextWindow: arbTokenCount,
    maxOutputTokens: arbTokenCount,
    cost: arbAnyCostRates,
  },
  { requiredKeys: ['provider', 'modelId', 'thinkingLevel'], ...plain },
)

// ---------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------

export const arbUserMessage: fc.Arbitrary<UserMessage> = record(
  { role: fc.constant('user'), content: fc.array(arbUserContent, { maxLength: MAX_ITEMS }), timestamp: arbTimestamp },
  plain,
)

export const arbProviderErrorKind: fc.Arbitrary<ProviderErrorKind> = fc.constantFrom(
  'auth', 'rateLimit', 'overloaded', 'server', 'network', 'timeout', 'contextOverflow', 'invalidRequest', 'modelNotFound', 'protocol', 'unknown',
)
export const arbProviderErrorInfo: fc.Arbitrary<ProviderErrorInfo> = record(
  {
    kind: arbProviderErrorKind,
    retryable: fc.boolean(),
    message: arbString,
    provider: arbString,
    status: arbTokenCount,
    code: arbString,
    retryAfterMs: arbMoney,
  },
  { requiredKeys: ['kind', 'retryable', 'message', 'provider'], ...plain },
)

export const arbAssistantMessage: fc.Arbitrary<AssistantMessage> = record(
  {
    role: fc.constant('assistant'),
    content: fc.array(arbAssistantContent, { maxLength: MAX_ITEMS }),
    provider: arbString,
    model: arbString,
    usage: arbUsage,
    cost: arbCost,
    stopReason: arbStopReason,
    timestamp: arbTimestamp,
    errorMessage: arbString,
    responseId: arbString,
    errorKind: arbProviderErrorKind,
  },
  { requiredKeys: ['role', 'content', 'provider', 'model', 'usage', 'cost', 'stopReason', 'timestamp'], ...plain },
)

export const arbToolResultMessage: fc.Arbitrary<ToolResultMessage> = record(
  {
    role: fc.constant('toolResult'),
    toolCallId: arbString,
    toolName: arbString,
    content: fc.array(arbUserContent, { maxLength: MAX_ITEMS }),
    isError: fc.boolean(),
    timestamp: arbTimestamp,
    details: arbJson,
  },
  { requiredKeys: ['role', 'toolCallId', 'toolName', 'content', 'isError', 'timestamp'], ...plain },
)

export const arbCustomMessage: fc.Arbitrary<CustomMessage> = record(
  { role: fc.constant('custom'), kind: arbString, data: arbJson, timestamp: arbTimestamp },
  { requiredKeys: ['role', 'kind', 'data'], ...plain },
)

export const arbLlmMessage: fc.Arbitrary<LlmMessage> = fc.oneof(arbUserMessage, arbAssistantMessage, arbToolResultMessage)

export const arbAgentMessage: fc.Arbitrary<AgentMessage> = fc.oneof(
  arbUserMessage,
  arbAssistantMessage,
  arbToolResultMessage,
  arbCustomMessage,
)

// ---------------------------------------------------------------------------
// Provider chunks
// ---------------------------------------------------------------------------

export const arbChunkStopReason: fc.Arbitrary<ChunkStopReason> = fc.constantFrom(
  'endTurn',
  'maxTokens',
  'stopSequence',
  'toolUse',
  'refusal',
)

export const arbMessageStartChunk: fc.Arbitrary<MessageStartChunk> = record(
  { type: fc.constant('messageStart'), id: arbString, model: arbString },
  plain,
)
export const arbTextDeltaChunk: fc.Arbitrary<TextDeltaChunk> = record({ type: fc.constant('textDelta'), text: arbString }, plain)
export const arbThinkingDeltaChunk: fc.Arbitrary<ThinkingDeltaChunk> = record(
  { type: fc.constant('thinkingDelta'), text: arbString },
  plain,
)
export const arbThinkingSignatureChunk: fc.Arbitrary<ThinkingSignatureChunk> = record(
  { type: fc.constant('thinkingSignature'), signature: arbString },
  plain,
)
export const arbThinkingRedactedChunk: fc.Arbitrary<ThinkingRedactedChunk> = record(
  { type: fc.constant('thinkingRedacted'), data: arbString },
  plain,
)
export const arbToolUseStartChunk: fc.Arbitrary<ToolUseStartChunk> = record(
  { type: fc.constant('toolUseStart'), id: arbString, name: arbString },
  plain,
)
export const arbToolUseArgsDeltaChunk: fc.Arbitrary<ToolUseArgsDeltaChunk> = record(
  { type: fc.constant('toolUseArgsDelta'), id: arbString, fragment: arbString },
  plain,
)
export const arbToolUseEndChunk: fc.Arbitrary<ToolUseEndChunk> = record({ type: fc.constant('toolUseEnd'), id: arbString }, plain)
export const arbExtensionChunk: fc.Arbitrary<ExtensionChunk> = record(
  { type: fc.constant('extension'), typeName: arbString, data: arbJson },
  plain,
)
export const arbStopChunk: fc.Arbitrary<StopChunk> = record({ type: fc.constant('stop'), reason: arbChunkStopReason }, plain)
export const arbUsageChunk: fc.Arbitrary<UsageChunk> = record(
  {
    type: fc.constant('usage'),
    input: arbTokenCount,
    output: arbTokenCount,
    reasoning: arbTokenCount,
    cacheRead: arbTokenCount,
    cacheWrite: arbTokenCount,
    total: arbTokenCount,
    extra: arbExtra,
  },
  { requiredKeys: ['type'], ...plain },
)

export const arbProviderChunk: fc.Arbitrary<ProviderChunk> = fc.oneof(
  arbMessageStartChunk,
  arbTextDeltaChunk,
  arbThinkingDeltaChunk,
  arbThinkingSignatureChunk,
  arbThinkingRedactedChunk,
  arbToolUseStartChunk,
  arbToolUseArgsDeltaChunk,
  arbToolUseEndChunk,
  arbExtensionChunk,
  arbStopChunk,
  arbUsageChunk,
  record(
    { type: fc.constant('retry'), attempt: arbTokenCount, delayMs: arbMoney, error: arbProviderErrorInfo, model: arbModelSpec },
    { requiredKeys: ['type', 'attempt', 'delayMs', 'error'], ...plain },
  ) as fc.Arbitrary<ProviderChunk>,
)

// ---------------------------------------------------------------------------
// Tools, requests, results
// ---------------------------------------------------------------------------

export const arbToolOutput: fc.Arbitrary<ToolOutput> = record(
  { content: fc.array(arbUserContent, { maxLength: MAX_ITEMS }), details: arbJson },
  { requiredKeys: ['content'], ...plain },
)

export const arbToolSchema: fc.Arbitrary<ToolSchema> = record(
  { name: arbString, description: arbString, parameters: arbJsonObject },
  plain,
)

export const arbStreamOptions: fc.Arbitrary<StreamOptions> = record(
  {
    temperature: arbFiniteNumber,
    maxTokens: arbTokenCount,
    stopSequences: fc.array(arbString, { maxLength: MAX_ITEMS }),
    headers: fc.dictionary(fc.string({ maxLength: 8 }), arbString, { maxKeys: 3 }).map(viaJson),
    metadata: arbJsonObject,
    cacheRetention: fc.constantFrom('none', 'short', 'long'),
    sessionId: arbString,
  },
  { requiredKeys: [], ...plain },
)

export const arbLlmRequest: fc.Arbitrary<LlmRequest> = record(
  {
    model: arbModelSpec,
    systemPrompt: arbString,
    messages: fc.array(arbLlmMessage, { maxLength: MAX_ITEMS }),
    tools: fc.array(arbToolSchema, { maxLength: MAX_ITEMS }),
    options: arbStreamOptions,
  },
  { requiredKeys: ['model', 'systemPrompt', 'messages', 'tools'], ...plain },
)

export const arbAgentResult: fc.Arbitrary<AgentResult> = record(
  {
    messages: fc.array(arbAgentMessage, { maxLength: MAX_ITEMS }),
    stopReason: arbStopReason,
    usage: arbUsage,
    cost: arbCost,
    error: arbString,
    stoppedBy: arbString,
  },
  { requiredKeys: ['messages', 'stopReason', 'usage', 'cost'], ...plain },
)

// ---------------------------------------------------------------------------
// Agent events
// ---------------------------------------------------------------------------

export const arbAgentStartEvent: fc.Arbitrary<AgentStartEvent> = record({ type: fc.constant('agentStart') }, plain)
export const arbAgentEndEvent: fc.Arbitrary<AgentEndEvent> = record({ type: fc.constant('agentEnd'), result: arbAgentResult }, plain)
export const arbTurnStartEvent: fc.Arbitrary<TurnStartEvent> = record(
  { type: fc.constant('turnStart'), turnIndex: arbTokenCount },
  plain,
)
export const arbTurnEndEvent: fc.Arbitrary<TurnEndEvent> = record(
  {
    type: fc.constant('turnEnd'),
    turnIndex: arbTokenCount,
    message: arbAssistantMessage,
    toolResults: fc.array(arbToolResultMessage, { maxLength: MAX_ITEMS }),
  },
  { requiredKeys: ['type', 'turnIndex', 'toolResults'], ...plain },
)
export const arbMessageStartEvent: fc.Arbitrary<MessageStartEvent> = record(
  { type: fc.constant('messageStart'), message: arbAgentMessage },
  plain,
)
export const arbMessageUpdateEvent: fc.Arbitrary<MessageUpdateEvent> = record(
  { type: fc.constant('messageUpdate'), message: arbAssistantMessage, chunk: arbProviderChunk, contentIndex: arbTokenCount },
  plain,
)
export const arbMessageEndEvent: fc.Arbitrary<MessageEndEvent> = record(
  { type: fc.constant('messageEnd'), message: arbAgentMessage },
  plain,
)
export const arbToolExecutionStartEvent: fc.Arbitrary<ToolExecutionStartEvent> = record(
  { type: fc.constant('toolExecutionStart'), toolCallId: arbString, toolName: arbString, args: arbJson },
  plain,
)
export const arbToolExecutionUpdateEvent: fc.Arbitrary<ToolExecutionUpdateEvent> = record(
  { type: fc.constant('toolExecutionUpdate'), toolCallId: arbString, toolName: arbString, partialResult: arbToolOutput },
  plain,
)
export const arbToolExecutionEndEvent: fc.Arbitrary<ToolExecutionEndEvent> = record(
  {
    type: fc.constant('toolExecutionEnd'),
    toolCallId: arbString,
    toolName: arbString,
    result: arbToolOutput,
    isError: fc.boolean(),
  },
  plain,
)
export const arbToolApprovalRequestEvent: fc.Arbitrary<ToolApprovalRequestEvent> = record(
  { type: fc.constant('toolApprovalRequest'), toolCallId: arbString, toolName: arbString, args: arbJson },
  plain,
)
export const arbToolApprovalEndEvent: fc.Arbitrary<ToolApprovalEndEvent> = record(
  {
    type: fc.constant('toolApprovalEnd'),
    toolCallId: arbString,
    toolName: arbString,
    approved: fc.boolean(),
    rewritten: fc.boolean(),
    reason: arbString,
  },
  { requiredKeys: ['type', 'toolCallId', 'toolName', 'approved', 'rewritten'], ...plain },
)
export const arbPolicySlot: fc.Arbitrary<PolicySlot> = fc.constantFrom('preTurn', 'preDispatch', 'postTurn', 'postLoop')
export const arbPolicyDecisionEvent: fc.Arbitrary<PolicyDecisionEvent> = record(
  {
    type: fc.constant('policyDecision'),
    slot: arbPolicySlot,
    policy: arbString,
    action: fc.constantFrom('stop', 'inject', 'skip', 'rewrite'),
    reason: arbString,
    toolCallId: arbString,
  },
  { requiredKeys: ['type', 'slot', 'policy', 'action'], ...plain },
)

export const arbAgentEvent: fc.Arbitrary<AgentEvent> = fc.oneof(
  arbAgentStartEvent,
  arbAgentEndEvent,
  arbTurnStartEvent,
  arbTurnEndEvent,
  arbMessageStartEvent,
  arbMessageUpdateEvent,
  arbMessageEndEvent,
  arbToolExecutionStartEvent,
  arbToolExecutionUpdateEvent,
  arbToolExecutionEndEvent,
  arbToolApprovalRequestEvent,
  arbToolApprovalEndEvent,
  arbPolicyDecisionEvent,
  record({ type: fc.constant('streamRetry'), attempt: arbTokenCount, delayMs: arbMoney, error: arbProviderErrorInfo, message: arbAssistantMessage }, plain) as fc.Arbitrary<AgentEvent>,
  record({ type: fc.constant('modelFallback'), from: arbModelSpec, to: arbModelSpec, error: arbProviderErrorInfo, message: arbAssistantMessage }, plain) as fc.Arbitrary<AgentEvent>,
  record(
    {
      type: fc.constant('compaction'),
      reason: fc.constantFrom('window', 'overflow'),
      droppedMessages: arbTokenCount,
      droppedTokens: arbTokenCount,
      keptMessages: arbTokenCount,
      keptTokens: arbTokenCount,
      budget: arbTokenCount,
    },
    plain,
  ) as fc.Arbitrary<AgentEvent>,
)
