/**
 * The provider-agnostic stream contract: what every `streamFn` emits.
 *
 * - The first chunk is always `messageStart`.
 * - `stop` is the last semantic chunk; only `usage` may follow it.
 * - `toolUseArgsDelta` fragments with the same id are concatenated in arrival
 *   order; calls are accumulated per id, whatever their interleaving. A
 *   fragment need not be valid JSON: the arguments are parsed at `toolUseEnd`.
 * - `usage` may arrive several times; each field is summed. A field may be
 *   negative: the provider revised an earlier count down (its last report
 *   wins), so the sum is always the provider's latest cumulative count.
 * - `retry` (from the retry operator, never from a wire) discards the attempt
 *   so far; a new `messageStart` follows it.
 *
 * A stream that breaks these rules, ends without `stop`, or errors becomes an
 * assistant message with stopReason `error` that keeps everything received.
 */
import * as t from 'io-ts'
import { Integer, NonNegativeInteger, NonNegativeNumber, struct, taggedUnion } from './codec.js'
import { ModelSpec } from './model.js'
import { ProviderErrorInfo } from './provider-error.js'

/** Why the model stopped generating, as the wire says it. */
export const ChunkStopReason = t.keyof(
  { endTurn: null, maxTokens: null, stopSequence: null, toolUse: null, refusal: null },
  'ChunkStopReason',
)
export type ChunkStopReason = t.TypeOf<typeof ChunkStopReason>

export const MessageStartChunk = t.type({ type: t.literal('messageStart'), id: t.string, model: t.string }, 'MessageStartChunk')
export const TextDeltaChunk = t.type({ type: t.literal('textDelta'), text: t.string }, 'TextDeltaChunk')
export const ThinkingDeltaChunk = t.type({ type: t.literal('thinkingDelta'), text: t.string }, 'ThinkingDeltaChunk')
/** Verification data for the current thinking block. Not text: never merged with thinking deltas. */
export const ThinkingSignatureChunk = t.type(
  { type: t.literal('thinkingSignature'), signature: t.string },
  'ThinkingSignatureChunk',
)
/** A thinking block the provider encrypted; `data` must be replayed as is. */
export const ThinkingRedactedChunk = t.type({ type: t.literal('thinkingRedacted'), data: t.string }, 'ThinkingRedactedChunk')
export const ToolUseStartChunk = t.type({ type: t.literal('toolUseStart'), id: t.string, name: t.string }, 'ToolUseStartChunk')
export const ToolUseArgsDeltaChunk = t.type(
  { type: t.literal('toolUseArgsDelta'), id: t.string, fragment: t.string },
  'ToolUseArgsDeltaChunk',
)
export const ToolUseEndChunk = t.type({ type: t.literal('toolUseEnd'), id: t.string }, 'ToolUseEndChunk')
/** A content block the runtime has no type for, kept as extension content. */
export const ExtensionChunk = t.type(
  { type: t.literal('extension'), typeName: t.string, data: t.unknown },
  'ExtensionChunk',
)
/**
 * The attempt streamed so far failed and is discarded; the call is made again
 * after `delayMs`. Emitted by the retry operator and `callModel`, at any
 * point — before anything (the next chunk is then `messageStart`), mid-stream,
 * or after `stop` (a silent context overflow is only known at the end):
 * consumers drop the partial content they showed. Usage already reported
 * stays counted: it was billed.
 */
export const RetryChunk = struct(
  'RetryChunk',
  {
    type: t.literal('retry'),
    attempt: NonNegativeInteger,
    delayMs: NonNegativeNumber,
    error: ProviderErrorInfo,
  },
  {
    /** Set when the next attempt runs on another model (a fallback): the message is named and priced by it. */
    model: ModelSpec,
  },
)
export const StopChunk = t.type({ type: t.literal('stop'), reason: ChunkStopReason }, 'StopChunk')
/**
 * Changes to the token counts; absent fields count as 0. Summed field by field
 * across chunks. A negative field takes back part of an earlier chunk's count
 * (Anthropic's `message_delta` and Gemini's last `usageMetadata` may report
 * fewer input tokens than an earlier event); a sum below 0 counts as 0.
 */
export const UsageChunk = t.intersection(
  [
    t.type({ type: t.literal('usage') }),
    t.partial({
      input: Integer,
      output: Integer,
      reasoning: Integer,
      cacheRead: Integer,
      cacheWrite: Integer,
      total: Integer,
      extra: t.record(t.string, Integer),
    }),
  ],
  'UsageChunk',
)

/** One event of a provider's streamed answer. */
export const ProviderChunk = taggedUnion(
  'type',
  [
    MessageStartChunk,
    TextDeltaChunk,
    ThinkingDeltaChunk,
    ThinkingSignatureChunk,
    ThinkingRedactedChunk,
    ToolUseStartChunk,
    ToolUseArgsDeltaChunk,
    ToolUseEndChunk,
    ExtensionChunk,
    StopChunk,
    UsageChunk,
    RetryChunk,
  ],
  'ProviderChunk',
)
export type ProviderChunk = t.TypeOf<typeof ProviderChunk>
export type MessageStartChunk = t.TypeOf<typeof MessageStartChunk>
export type TextDeltaChunk = t.TypeOf<typeof TextDeltaChunk>
export type ThinkingDeltaChunk = t.TypeOf<typeof ThinkingDeltaChunk>
export type ThinkingSignatureChunk = t.TypeOf<typeof ThinkingSignatureChunk>
export type ThinkingRedactedChunk = t.TypeOf<typeof ThinkingRedactedChunk>
export type ToolUseStartChunk = t.TypeOf<typeof ToolUseStartChunk>
export type ToolUseArgsDeltaChunk = t.TypeOf<typeof ToolUseArgsDeltaChunk>
export type ToolUseEndChunk = t.TypeOf<typeof ToolUseEndChunk>
export type ExtensionChunk = t.TypeOf<typeof ExtensionChunk>
export type StopChunk = t.TypeOf<typeof StopChunk>
export type UsageChunk = t.TypeOf<typeof UsageChunk>
export type RetryChunk = t.TypeOf<typeof RetryChunk>
