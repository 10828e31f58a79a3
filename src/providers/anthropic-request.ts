/**
 * `LlmRequest` → Anthropic Messages API request body.
 *
 * The API wants strict user/assistant alternation (consecutive messages of a
 * role are merged), tool results as `tool_result` blocks of ONE user message
 * right after the assistant turn that called them, no empty text blocks, and
 * thinking replayed with its signature only to the model that wrote it.
 */
import type { AssistantContent, ImageContent, UserContent } from '../types/content.js'
import type { AssistantMessage, LlmMessage, ToolResultMessage } from '../types/message.js'
import type { ModelSpec, ThinkingLevel } from '../types/model.js'
import type { LlmRequest } from '../types/request.js'
import { idSanitizer, prepareMessage, replayedMessages } from './replay.js'
import { isRecord, type Json } from './json.js'
import { metaPrefix } from './anthropic-blocks.js'

/**
 * How thinking is requested. `budget`: `thinking: {type: 'enabled',
 * budget_tokens}`. `adaptive`: `thinking: {type: 'adaptive'}` with
 * `output_config.effort` (Claude 4.6 and later; required from Opus 4.7).
 * `auto` (default) picks `adaptive` for model ids of version 4.6 and later,
 * `budget` otherwise.
 */
export type AnthropicThinkingMode = 'auto' | 'budget' | 'adaptive'

/** What the request body depends on besides the request itself. */
export interface AnthropicRequestSettings {
  /** How thinking is requested (default `auto`, see {@link AnthropicThinkingMode}). */
  readonly thinkingMode?: AnthropicThinkingMode
  /** `max_tokens` when neither the call's options nor the model set one (default 8192). */
  readonly defaultMaxTokens?: number
}

/** Token budgets per thinking level when the model sets none. The API's minimum is 1024. */
export const defaultThinkingBudgets: Readonly<Record<Exclude<ThinkingLevel, 'off'>, number>> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16384,
  xhigh: 32000,
}

const MIN_BUDGET = 1024
/** Room left for the answer when `max_tokens` has to grow past the thinking budget. */
const ANSWER_RESERVE = 4096
const DEFAULT_MAX_TOKENS = 8192

/** Tool-call ids the API accepts: `^[a-zA-Z0-9_-]+$`, at most 64 characters. */
export const normalizeAnthropicToolCallId = idSanitizer(/a-zA-Z0-9_-/, 64)

/** Extension blocks of an assistant message that are API content blocks, replayable as they are. */
const isReplayableAssistantBlock = (typeName: string): boolean =>
  !typeName.startsWith(metaPrefix) && (typeName === 'server_tool_use' || typeName === 'mcp_tool_use' || typeName === 'container_upload' || typeName.endsWith('_tool_result'))

/** Extension blocks of user content that are API input blocks. */
const userBlockTypes: ReadonlySet<string> = new Set(['document', 'search_result'])

/** The version of a Claude model id (`claude-opus-4-6` → [4, 6], `claude-sonnet-4-5-20250929` → [4, 5], `claude-opus-5` → [5, 0]). */
function claudeVersion(modelId: string): readonly [number, number] | undefined {
  const m = /claude-[a-z]+-(\d+)(?:-(\d{1,2})(?!\d))?/.exec(modelId)
  return m === null ? undefined : [Number(m[1]), m[2] === undefined ? 0 : Number(m[2])]
}

/** Whether `modelId` takes adaptive thinking, by its version (4.6 and later). */
export function supportsAdaptiveThinking(modelId: string): boolean {
  const v = claudeVersion(modelId)
  return v !== undefined && (v[0] > 4 || (v[0] === 4 && v[1] >= 6))
}

/**
 * Thinking level → adaptive effort: minimal and low → `low`, medium →
 * `medium`, high → `high`, xhigh → `max` on Opus models (the only ones
 * that take it) and `high` elsewhere.
 */
export function adaptiveEffort(level: Exclude<ThinkingLevel, 'off'>, modelId: string): 'low' | 'medium' | 'high' | 'max' {
  switch (level) {
    case 'minimal':
    case 'low':
      return 'low'
    case 'medium':
      return 'medium'
    case 'high':
      return 'high'
    case 'xhigh':
      return /opus/.test(modelId) ? 'max' : 'high'
  }
}

/** Whether model id `a` names `b` or a dated snapshot of it (`claude-sonnet-4-5` and `claude-sonnet-4-5-20250929`). */
function sameModelId(a: string, b: string): boolean {
  if (a === b) return true
  const [short, long] = a.length < b.length ? [a, b] : [b, a]
  return long.startsWith(`${short}-`) && /^\d{8}$/.test(long.slice(short.length + 1))
}

type Block = Json

/** The `thinking` / `output_config` / `max_tokens` / `temperature` part of the body. */
function generationParams(model: ModelSpec, options: LlmRequest['options'], settings: AnthropicRequestSettings): Json {
  const cap = model.maxOutputTokens
  let maxTokens = options?.maxTokens ?? cap ?? settings.defaultMaxTokens ?? DEFAULT_MAX_TOKENS
  const level = model.thinkingLevel
  const out: Json = {}
  if (level !== 'off') {
    const mode = settings.thinkingMode ?? 'auto'
    const adaptive = mode === 'adaptive' || (mode === 'auto' && supportsAdaptiveThinking(model.modelId))
    if (adaptive) {
      out['thinking'] = { type: 'adaptive' }
      out['output_config'] = { effort: adaptiveEffort(level, model.modelId) }
    } else {
      let budget = Math.max(MIN_BUDGET, model.thinkingBudgets?.[level] ?? defaultThinkingBudgets[level])
      // max_tokens counts thinking too, and must exceed the budget.
      if (maxTokens <= budget) maxTokens = budget + ANSWER_RESERVE
      if (cap !== undefined && maxTokens > cap) {
        maxTokens = cap
        budget = Math.max(MIN_BUDGET, Math.min(budget, cap - ANSWER_RESERVE))
      }
      if (budget < maxTokens) out['thinking'] = { type: 'enabled', budget_tokens: budget }
    }
  }
  out['max_tokens'] = maxTokens
  // With thinking on the API accepts no temperature but 1.
  if (options?.temperature !== undefined && out['thinking'] === undefined) out['temperature'] = options.temperature
  return out
}

function imageBlock(image: ImageContent): Block {
  const source = image.source
  return source.type === 'base64'
    ? { type: 'image', source: { type: 'base64', media_type: source.mimeType, data: source.data } }
    : { type: 'image', source: { type: 'url', url: source.url } }
}

/** User-side blocks (user messages and tool results): text, images, and API input blocks kept as extensions. */
function userBlocks(content: readonly UserContent[]): Block[] {
  const out: Block[] = []
  for (const block of content) {
    if (block.type === 'text') {
      if (block.text.trim() !== '') out.push({ type: 'text', text: block.text })
    } else if (block.type === 'image') out.push(imageBlock(block))
    else if (userBlockTypes.has(block.typeName) && isRecord(block.data) && block.data['type'] === block.typeName) out.push({ ...block.data })
  }
  return out
}

function assistantBlocks(message: AssistantMessage, sameProvider: boolean): Block[] {
  const out: Block[] = []
  for (const block of message.content as readonly AssistantContent[]) {
    switch (block.type) {
      case 'text':
        if (block.text.trim() !== '') out.push({ type: 'text', text: block.text })
        break
      case 'thinking':
        // Only the writing model's thinking is left here (prepareMessages turned other models' into text).
        if (block.redacted === true) {
          if (block.signature !== undefined && block.signature !== '') out.push({ type: 'redacted_thinking', data: block.signature })
        } else if (block.signature !== undefined && block.signature !== '') {
          out.push({ type: 'thinking', thinking: block.thinking, signature: block.signature })
        } else if (block.thinking.trim() !== '') out.push({ type: 'text', text: block.thinking })
        break
      case 'toolCall':
        out.push({ type: 'tool_use', id: block.id, name: block.name, input: block.arguments })
        break
      case 'extension':
        if (sameProvider && isReplayableAssistantBlock(block.typeName) && isRecord(block.data) && block.data['type'] === block.typeName) {
          out.push({ ...block.data })
        }
        break
    }
  }
  return out
}

function toolResultBlock(result: ToolResultMessage): Block {
  const content = userBlocks(result.content)
  return {
    type: 'tool_result',
    tool_use_id: result.toolCallId,
    ...(content.length === 0 ? {} : { content }),
    ...(result.isError ? { is_error: true } : {}),
  }
}

/** One message of the API's transcript. */
export interface AnthropicWireMessage {
  readonly role: 'user' | 'assistant'
  readonly content: Block[]
}

/**
 * One replayed message (see `replayedMessages`) in the API's shape, for
 * `model`: its blocks, possibly none. Depends on the message and on
 * `model.provider` and `model.modelId` only.
 */
export function anthropicWireMessage(message: LlmMessage, model: ModelSpec): AnthropicWireMessage {
  // A dated snapshot and its alias are the same model: its thinking signatures stay valid.
  const relabeled =
    message.role === 'assistant' && message.provider === model.provider && message.model !== model.modelId && sameModelId(message.model, model.modelId)
      ? { ...message, model: model.modelId }
      : message
  const m = prepareMessage(relabeled, { provider: model.provider, modelId: model.modelId, normalizeToolCallId: normalizeAnthropicToolCallId })
  if (m.role === 'user') return { role: 'user', content: userBlocks(m.content) }
  if (m.role === 'assistant') return { role: 'assistant', content: assistantBlocks(m, m.provider === model.provider) }
  return { role: 'user', content: [toolResultBlock(m)] }
}

/** The transcript in the API's shape: alternating roles, no empty messages. */
export function anthropicMessages(messages: readonly LlmMessage[], model: ModelSpec): AnthropicWireMessage[] {
  const out: AnthropicWireMessage[] = []
  for (const m of replayedMessages(messages)) {
    const { role, content } = anthropicWireMessage(m, model)
    if (content.length === 0) continue
    const last = out.at(-1)
    if (last?.role === role) last.content.push(...content)
    else out.push({ role, content })
  }
  return out
}

/** The `cache_control` value of `options.cacheRetention` (default `short`); `undefined` for `none`. */
export function anthropicCacheControl(options: LlmRequest['options']): Json | undefined {
  const retention = options?.cacheRetention ?? 'short'
  return retention === 'none' ? undefined : retention === 'long' ? { type: 'ephemeral', ttl: '1h' } : { type: 'ephemeral' }
}

/** The body's fields before `messages` (`model` … `system`) and after it (`tools` …), in the order they are sent. */
export function anthropicBodyFields(request: LlmRequest, settings: AnthropicRequestSettings, cache: Json | undefined): { readonly head: Json; readonly tail: Json } {
  const { model, options } = request
  const head: Json = { model: model.modelId, ...generationParams(model, options, settings), stream: true }
  if (request.systemPrompt.trim() !== '') {
    head['system'] = cache === undefined ? request.systemPrompt : [{ type: 'text', text: request.systemPrompt, cache_control: cache }]
  }
  const tail: Json = {}
  if (request.tools.length > 0) {
    tail['tools'] = request.tools.map((tool, i) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.parameters,
      ...(cache !== undefined && i === request.tools.length - 1 ? { cache_control: cache } : {}),
    }))
  }
  if (options?.stopSequences !== undefined && options.stopSequences.length > 0) tail['stop_sequences'] = [...options.stopSequences]
  const userId = options?.metadata?.['userId']
  if (typeof userId === 'string' && userId !== '') tail['metadata'] = { user_id: userId }
  return { head, tail }
}

/**
 * The Messages API request body for `request` (streaming). Prompt caching
 * (`options.cacheRetention`, default `short`) marks the system prompt, the
 * last tool and the last user message's last block with `cache_control`
 * (`long` adds `ttl: '1h'`, `none` marks nothing).
 */
export function anthropicRequestBody(request: LlmRequest, settings: AnthropicRequestSettings = {}): Json {
  const cache = anthropicCacheControl(request.options)
  const messages = anthropicMessages(request.messages, request.model)
  if (cache !== undefined) {
    const lastUser = [...messages].reverse().find((m) => m.role === 'user')
    const lastBlock = lastUser?.content.at(-1)
    if (lastUser !== undefined && lastBlock !== undefined) lastUser.content[lastUser.content.length - 1] = { ...lastBlock, cache_control: cache }
  }
  const { head, tail } = anthropicBodyFields(request, settings, cache)
  return { ...head, messages, ...tail }
}
