/**
 * `LlmRequest` → Chat Completions request body, for api.openai.com and for
 * the servers that speak its dialect (see `openai-compatible.ts`).
 *
 * What the API wants: the system prompt as the first message; tool results
 * as one `tool` message per call, right after the assistant message that
 * made the calls (nothing may come between them, so images a tool returned
 * travel in a user message after the last result); arguments as JSON
 * strings. Where servers differ, the `Compat` row says what to do.
 */
import type { ImageContent, UserContent } from '../types/content.js'
import { isRecord, type Json } from './json.js'

import type { AssistantMessage, LlmMessage, ToolResultMessage } from '../types/message.js'
import type { ModelSpec } from '../types/model.js'
import type { LlmRequest } from '../types/request.js'
import { prepareMessage, replayedMessages } from './replay.js'
import { openaiCompat, toolCallIdNormalizer, type Compat } from './openai-chat-compat.js'
import { isOpenAIReasoningModel, thinkingParams } from './openai-chat-thinking.js'
import { openaiAssemble } from './openai-chat-assembly.js'

/** What the request body depends on besides the request and the compat row. */
export interface OpenAIChatRequestSettings {
  /** Sends tool definitions with `strict: true` where the server takes it (schemas must then meet OpenAI's strict rules). Default false. */
  readonly strictTools?: boolean
}

function imagePart(image: ImageContent): Json {
  const source = image.source
  const url = source.type === 'base64' ? `data:${source.mimeType};base64,${source.data}` : source.url
  return { type: 'image_url', image_url: { url } }
}

/** Extension blocks that are Chat Completions input parts, passed through as they are. */
const userPartTypes: ReadonlySet<string> = new Set(['file', 'input_audio'])

/** A user message's content: a plain string when it is only text (every server takes that), else parts. */
function userContent(content: readonly UserContent[]): string | Json[] | undefined {
  const parts: Json[] = []
  let onlyText = true
  for (const block of content) {
    if (block.type === 'text') {
      if (block.text !== '') parts.push({ type: 'text', text: block.text })
    } else if (block.type === 'image') {
      onlyText = false
      parts.push(imagePart(block))
    } else if (userPartTypes.has(block.typeName) && isRecord(block.data) && block.data['type'] === block.typeName) {
      onlyText = false
      parts.push({ ...block.data })
    }
  }
  if (parts.length === 0) return undefined
  return onlyText ? parts.map((p) => p['text'] as string).join('\n') : parts
}

/** The text of a tool result; images are sent separately (see the module comment). */
function toolResultText(result: ToolResultMessage): string {
  const texts = result.content.flatMap((c) => (c.type === 'text' && c.text !== '' ? [c.text] : []))
  const images = result.content.filter((c) => c.type === 'image').length
  if (images > 0) texts.push(`(${images === 1 ? 'an image' : `${images} images`} returned by this tool call follow${images === 1 ? 's' : ''} in the next user message)`)
  return texts.length === 0 ? '(no output)' : texts.join('\n')
}

/** The OpenRouter reasoning detail a redacted thinking block holds (see the decoder), if it is one. */
function encryptedDetail(data: string | undefined): Json | undefined {
  if (data === undefined || !data.startsWith('{')) return undefined
  try {
    const parsed: unknown = JSON.parse(data)
    return isRecord(parsed) && typeof parsed['type'] === 'string' && parsed['type'].startsWith('reasoning.') ? parsed : undefined
  } catch {
    return undefined
  }
}

function assistantWire(message: AssistantMessage, sameModel: boolean, compat: Compat): Json | undefined {
  // Separate blocks were separated by something (thinking, a tool call): they stay apart.
  const texts: string[] = []
  let reasoning = ''
  const details: Json[] = []
  const calls: Json[] = []
  for (const block of message.content) {
    switch (block.type) {
      case 'text':
        if (block.text !== '') texts.push(block.text)
        break
      case 'thinking':
        // Only the writing model's own thinking is left here (prepareMessages turned other models' into text).
        if (!sameModel || !compat.replayReasoning) break
        if (block.redacted !== true) reasoning += block.thinking
        else {
          const detail = encryptedDetail(block.signature)
          if (detail !== undefined) details.push(detail)
        }
        break
      case 'toolCall':
        calls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.arguments) } })
        break
      case 'extension':
        // Annotations and other metadata have no input form in this API.
        break
    }
  }
  const text = texts.join('\n\n')
  if (text === '' && calls.length === 0) return undefined
  const out: Json = { role: 'assistant', content: text === '' ? null : text }
  if (reasoning !== '') out[compat.reasoningField] = reasoning
  if (details.length > 0) out['reasoning_details'] = details
  if (calls.length > 0) out['tool_calls'] = calls
  return out
}

/**
 * Whether model id `a` names `b` or a dated snapshot of it: the API answers
 * `gpt-4.1-mini-2025-04-14` for `gpt-4.1-mini`, and a message it wrote is
 * still the same model's.
 */
export function sameModelId(a: string, b: string): boolean {
  if (a === b) return true
  const [short, long] = a.length < b.length ? [a, b] : [b, a]
  return long.startsWith(`${short}-`) && /^(?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4})$/.test(long.slice(short.length + 1))
}

/**
 * One replayed message's part of the Chat Completions transcript, in
 * representation `T` (objects, or their JSON text): the message (`undefined`
 * for an empty user or assistant message, which is not sent) and, for a tool
 * result, the image parts it returned.
 */
export interface OpenAIWirePart<T> {
  readonly role: 'tool' | 'user' | 'assistant'
  readonly message: T | undefined
  readonly images: readonly T[]
}

const noImages: readonly never[] = Object.freeze([])

/**
 * The part of one replayed message (see `replayedMessages`) for `model`,
 * with tool-call ids rewritten by `normalize` (`toolCallIdNormalizer(compat)`).
 * Depends on the message, `model.provider`, `model.modelId`, and the compat
 * row's `toolCallIdStyle`, `toolCallIdMaxLength`, `requiresToolResultName`,
 * `replayReasoning` and `reasoningField` only.
 */
export function openaiWirePart(message: LlmMessage, model: ModelSpec, compat: Compat, normalize: (id: string) => string): OpenAIWirePart<Json> {
  const relabeled =
    message.role === 'assistant' && message.provider === model.provider && message.model !== model.modelId && sameModelId(message.model, model.modelId)
      ? { ...message, model: model.modelId }
      : message
  const m = prepareMessage(relabeled, { provider: model.provider, modelId: model.modelId, normalizeToolCallId: normalize })
  if (m.role === 'toolResult') {
    const wire: Json = { role: 'tool', tool_call_id: m.toolCallId, content: toolResultText(m) }
    if (compat.requiresToolResultName) wire['name'] = m.toolName
    const images: Json[] = []
    for (const c of m.content) if (c.type === 'image') images.push(imagePart(c))
    return { role: 'tool', message: wire, images }
  }
  if (m.role === 'user') {
    const content = userContent(m.content)
    return { role: 'user', message: content === undefined ? undefined : { role: 'user', content }, images: noImages }
  }
  return { role: 'assistant', message: assistantWire(m, m.provider === model.provider && m.model === model.modelId, compat), images: noImages }
}

/** What a server that wants an assistant message between tool results and a user message gets there. */
export const toolResultsAcknowledged: Json = Object.freeze({ role: 'assistant', content: 'I have the tool results.' })

/** The text block that opens the user message carrying the images of a run of tool results. */
export const toolImagesIntro: Json = Object.freeze({ type: 'text', text: 'Images returned by the tool calls above:' })

/** The transcript as Chat Completions messages (without the system message). */
export function openaiChatMessages(messages: readonly LlmMessage[], model: ModelSpec, compat: Compat = openaiCompat): Json[] {
  const normalize = toolCallIdNormalizer(compat)
  const parts = replayedMessages(messages).map((m) => openaiWirePart(m, model, compat, normalize))
  return openaiAssemble<Json>(parts, compat, { ...toolResultsAcknowledged }, (images) => ({ role: 'user', content: [{ ...toolImagesIntro }, ...images] }))
}

/** The system message of the body (`system`, or `developer` for reasoning models where the server takes it), if any. */
export function openaiSystemMessage(request: LlmRequest, compat: Compat): Json | undefined {
  if (request.systemPrompt.trim() === '') return undefined
  const thinking = thinkingParams(request.model, compat)
  const developer = compat.supportsDeveloperRole && (thinking.reasoning || isOpenAIReasoningModel(request.model.modelId))
  return { role: developer ? 'developer' : 'system', content: request.systemPrompt }
}

/**
 * The Chat Completions request body for `request` (streaming), shaped by
 * `compat` (default: api.openai.com). Only what the call sets is sent:
 * `max_tokens` / `max_completion_tokens` from `options.maxTokens` (local
 * servers reject a cap larger than what is left of the context), and a
 * reasoning parameter only for thinking levels other than `off`.
 */
export function openaiChatRequestBody(request: LlmRequest, settings: OpenAIChatRequestSettings = {}, compat: Compat = openaiCompat): Json {
  const messages = openaiChatMessages(request.messages, request.model, compat)
  const system = openaiSystemMessage(request, compat)
  if (system !== undefined) messages.unshift(system)
  return { model: request.model.modelId, messages, ...openaiChatBodyTail(request, settings, compat) }
}

/** The body's fields after `messages` (`stream` …), in the order they are sent. */
export function openaiChatBodyTail(request: LlmRequest, settings: OpenAIChatRequestSettings, compat: Compat): Json {
  const { model, options } = request
  const thinking = thinkingParams(model, compat)
  const body: Json = { stream: true }
  if (compat.supportsStreamOptionsUsage) body['stream_options'] = { include_usage: true }
  if (options?.maxTokens !== undefined) body[compat.maxTokensField] = options.maxTokens
  const reasoningModel = thinking.reasoning || isOpenAIReasoningModel(model.modelId)
  if (options?.temperature !== undefined && (compat.temperatureWithReasoning || !reasoningModel)) body['temperature'] = options.temperature
  if (options?.stopSequences !== undefined && options.stopSequences.length > 0) body['stop'] = [...options.stopSequences]
  Object.assign(body, thinking.params)
  if (request.tools.length > 0) {
    const strict = settings.strictTools === true && compat.supportsStrictTools
    body['tools'] = request.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters, ...(strict ? { strict: true } : {}) },
    }))
  }
  // Not strict: strict mode demands every property required and no additional ones, which a schema from an
  // io-ts codec with optional fields does not promise; the agent decodes the answer anyway.
  if (options?.responseFormat !== undefined) {
    body['response_format'] = { type: 'json_schema', json_schema: { name: options.responseFormat.name, schema: options.responseFormat.schema, strict: false } }
  }
  if (compat.supportsPromptCacheKey) {
    if (options?.sessionId !== undefined && options.sessionId !== '') body['prompt_cache_key'] = options.sessionId
    if (options?.cacheRetention === 'long') body['prompt_cache_retention'] = '24h'
  }
  return body
}
