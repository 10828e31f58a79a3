/**
 * How a Chat Completions server differs from api.openai.com (`Compat`), the
 * row of api.openai.com itself, and the tool-call id rewriting a row asks
 * for. Split from `openai-chat-request.ts`, which re-exports all of it.
 */
import { idSanitizer } from './replay.js'

/** A reasoning effort as the `reasoning_effort` parameter names it. */
export type ReasoningEffort = 'minimal' | 'low' | 'medium' | 'high'

/**
 * How a server differs from api.openai.com. Plain data: one row per known
 * server in `openai-compatible.ts`, overridable field by field.
 */
export interface Compat {
  /** Whether `stream_options: {include_usage: true}` is sent (some servers reject unknown fields). */
  readonly supportsStreamOptionsUsage: boolean
  /** The field that caps the answer's length (`options.maxTokens`). */
  readonly maxTokensField: 'max_tokens' | 'max_completion_tokens'
  /** Whether reasoning models get the system prompt as a `developer` message. */
  readonly supportsDeveloperRole: boolean
  /** The delta field streamed reasoning text arrives in, and the assistant field it is replayed in. Both fields are read either way. */
  readonly reasoningField: 'reasoning_content' | 'reasoning'
  /** Whether the writing model's reasoning is sent back on its own assistant messages (DeepSeek rejects it; most servers ignore it). */
  readonly replayReasoning: boolean
  /**
   * How a thinking level is requested: `reasoning_effort` (the parameter),
   * `openrouter` (`reasoning: {effort}`), `thinking_type` (`thinking:
   * {type: 'enabled'}`, DeepSeek), `chat_template_kwargs`
   * (`{enable_thinking}`, Qwen-style templates on vLLM and llama.cpp), or
   * `none` (the model decides; nothing is sent).
   */
  readonly thinkingParam: 'reasoning_effort' | 'openrouter' | 'thinking_type' | 'chat_template_kwargs' | 'none'
  /** The efforts the server accepts, lowest first; a level maps to the nearest accepted one at or above it (`xhigh` → the highest). */
  readonly reasoningEfforts: readonly ReasoningEffort[]
  /** Where the final usage is reported: the standard `usage` field, or Groq's `x_groq.usage` (both are read either way; this one wins). */
  readonly usageLocation: 'standard' | 'x_groq'
  /** Whether `completion_tokens` counts reasoning tokens (xAI's does not). A `total_tokens` that says otherwise wins. */
  readonly completionTokensIncludeReasoning: boolean
  /** Longest tool-call id the server accepts. */
  readonly toolCallIdMaxLength: number
  /** `word`: `[a-zA-Z0-9_-]`, shortened with a hash when too long; `alphanumeric9`: exactly 9 of `[a-zA-Z0-9]` (Mistral), hash-mapped. */
  readonly toolCallIdStyle: 'word' | 'alphanumeric9'
  /** Whether `tool` messages must carry the tool's `name` (Mistral). */
  readonly requiresToolResultName: boolean
  /** Whether a user message may not directly follow a `tool` message (an assistant message is inserted between). */
  readonly requiresAssistantAfterToolResult: boolean
  /** Whether tool definitions may carry `strict` (sent only when the settings ask for strict tools). */
  readonly supportsStrictTools: boolean
  /** Whether `prompt_cache_key` (from `options.sessionId`) and `prompt_cache_retention` are sent. */
  readonly supportsPromptCacheKey: boolean
  /** Whether `temperature` may be sent together with a reasoning effort (OpenAI reasoning models reject it). */
  readonly temperatureWithReasoning: boolean
  /** The API's base URL including the version path (e.g. `https://api.groq.com/openai/v1`); a local server's usual address. */
  readonly defaultBaseUrl?: string
  /** Environment variables holding the key, in order of preference. */
  readonly apiKeyEnv: readonly string[]
  /** Whether a call without a key fails at once. */
  readonly requiresApiKey: boolean
}

/** api.openai.com itself. */
export const openaiCompat: Compat = Object.freeze({
  supportsStreamOptionsUsage: true,
  maxTokensField: 'max_completion_tokens',
  supportsDeveloperRole: true,
  reasoningField: 'reasoning_content',
  replayReasoning: false,
  thinkingParam: 'reasoning_effort',
  reasoningEfforts: Object.freeze(['minimal', 'low', 'medium', 'high'] as const),
  usageLocation: 'standard',
  completionTokensIncludeReasoning: true,
  toolCallIdMaxLength: 40,
  toolCallIdStyle: 'word',
  requiresToolResultName: false,
  requiresAssistantAfterToolResult: false,
  supportsStrictTools: true,
  supportsPromptCacheKey: true,
  temperatureWithReasoning: false,
  defaultBaseUrl: 'https://api.openai.com/v1',
  apiKeyEnv: Object.freeze(['OPENAI_API_KEY']),
  requiresApiKey: true,
})

/** Two independent 32-bit FNV-1a hashes of `value`, as one number below 2^53. */
function hash53(value: string): number {
  let a = 0x811c9dc5
  let b = 0x050c5d1f
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i)
    a = Math.imul(a ^ c, 0x01000193)
    b = Math.imul(b ^ c, 0x01000193) ^ (b >>> 15)
  }
  return ((a >>> 0) % 2 ** 21) * 2 ** 32 + (b >>> 0)
}

/**
 * A Mistral tool-call id: exactly 9 characters of `[a-zA-Z0-9]`. Ids that
 * already fit are kept; others map to a 9-character hash of the whole id,
 * so that two ids stay distinct (36^9 ≈ 10^14 values).
 */
export function alphanumeric9ToolCallId(id: string): string {
  if (/^[a-zA-Z0-9]{9}$/.test(id)) return id
  return hash53(id).toString(36).slice(-9).padStart(9, '0')
}

/** The `word` rewriters, by maximum length: built once (each holds a compiled RegExp), not per request. */
const wordIds = new Map<number, (id: string) => string>()

/** The tool-call id rewriter a compat row asks for. */
export function toolCallIdNormalizer(compat: Compat): (id: string) => string {
  if (compat.toolCallIdStyle === 'alphanumeric9') return alphanumeric9ToolCallId
  let rewrite = wordIds.get(compat.toolCallIdMaxLength)
  if (rewrite === undefined) wordIds.set(compat.toolCallIdMaxLength, (rewrite = idSanitizer(/a-zA-Z0-9_-/, compat.toolCallIdMaxLength)))
  return rewrite
}
