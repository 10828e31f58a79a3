/**
 * `LlmRequest` → OpenAI Responses API request body (`POST /responses`).
 *
 * The transcript becomes a flat list of input items: user messages, the
 * assistant's output items (messages, reasoning, function calls) and
 * function call outputs. With `store: false` (the default) nothing is kept
 * server-side, so everything the model must see again travels here: same-
 * model reasoning is replayed from the thinking signature (its encrypted
 * content), message ids and phases from the `openai.message` markers.
 *
 * Tool-call ids are `${call_id}|${item_id}` (see the decoder). Ids from
 * other providers are normalized: `call_id` to at most 64 characters of
 * `[a-zA-Z0-9_-]`; an item id is kept only when it is a valid `fc…` id. The
 * `id` of a `function_call` item is sent only for calls of the same model:
 * an item id ties the call to a reasoning item, and the API rejects such a
 * call when its reasoning item is not replayed (another model's reasoning
 * never is), while `id` is optional for calls without one.
 */
import type { ImageContent, UserContent } from '../types/content.js'
import type { AssistantMessage, LlmMessage, ToolResultMessage } from '../types/message.js'
import type { ModelSpec, ThinkingLevel } from '../types/model.js'
import type { LlmRequest } from '../types/request.js'
import { idSanitizer, isSameModel, prepareMessages, shortHash, type ReplayTarget } from './replay.js'
import { isRecord as isJsonObject, type Json } from './json.js'
import { MESSAGE_MARKER } from './openai-responses-items.js'

/** A free-form tool: its input is plain text, constrained by an optional grammar. */
export interface OpenAICustomTool {
  /** The input format, as the API takes it (e.g. `{type: 'grammar', syntax: 'lark', definition}`); default free text. */
  readonly format?: Readonly<Record<string, unknown>>
}

/** Reasoning summary detail the API is asked for; `null` asks for none. */
export type OpenAIReasoningSummary = 'auto' | 'concise' | 'detailed' | null

/** What the request body depends on besides the request itself. */
export interface OpenAIResponsesRequestSettings {
  /**
   * Reasoning summaries to stream as thinking (default `'auto'`); `null`
   * requests none (some organizations must be verified to get them).
   */
  readonly reasoningSummary?: OpenAIReasoningSummary
  /**
   * Whether OpenAI stores responses (default `false`). When `false` and
   * reasoning is on, `include: ['reasoning.encrypted_content']` is sent so
   * that reasoning can be replayed on later turns.
   */
  readonly store?: boolean
  /** Whether the model takes the `xhigh` effort (default `false`: thinking level `xhigh` is sent as `high`). */
  readonly supportsXhigh?: boolean | ((modelId: string) => boolean)
  /**
   * Effort values per thinking level, overriding the defaults (`minimal` →
   * `minimal`, ..., `xhigh` → `xhigh` or `high`; `off` sends no `reasoning`).
   * E.g. `{off: 'none'}` for models that take `none`, `{minimal: 'low'}` for
   * models that lack `minimal`.
   */
  readonly efforts?: Readonly<Partial<Record<ThinkingLevel, string>>>
  /**
   * Whether the model is a reasoning model, which rejects `temperature`
   * (default: guessed from the id: o-series, gpt-5 except chat, codex).
   */
  readonly reasoningModel?: boolean | ((modelId: string) => boolean)
  /**
   * Tools (by name) sent as free-form `custom` tools rather than JSON
   * functions. Their calls arrive with the arguments `{input: "<text>"}`,
   * so the tool's own parameters should be `{input: string}`.
   */
  readonly customTools?: Readonly<Record<string, OpenAICustomTool>>
  /**
   * Where the system prompt goes: `instructions` (default), or a first
   * input item of role `developer` or `system`.
   */
  readonly systemPromptAs?: 'instructions' | 'developer' | 'system'
}

const sanitizeCallId = idSanitizer(/a-zA-Z0-9_-/, 64)
const ITEM_ID = /^fc[a-zA-Z0-9_-]{0,62}$/

/** The parts of a runtime tool-call id: the API's `call_id`, and the item id when there is one. */
export function splitToolCallId(id: string): { callId: string; itemId?: string } {
  const bar = id.indexOf('|')
  if (bar < 0) return { callId: id }
  return { callId: id.slice(0, bar), itemId: id.slice(bar + 1) }
}

/**
 * A tool-call id the Responses API accepts: `call_id` of at most 64
 * characters of `[a-zA-Z0-9_-]`, and an item id kept only when it is a valid
 * function-call item id (`fc…`). Ids already of that form are unchanged.
 */
export function normalizeOpenAIToolCallId(id: string): string {
  const { callId, itemId } = splitToolCallId(id)
  const call = callId === '' ? `call_${shortHash(id)}` : sanitizeCallId(callId)
  return itemId !== undefined && ITEM_ID.test(itemId) ? `${call}|${itemId}` : call
}

/** Whether `modelId` is a reasoning model (o-series, gpt-5 except its chat variants, codex), ignoring a gateway prefix. */
export function isOpenAIReasoningModel(modelId: string): boolean {
  const id = modelId.slice(modelId.lastIndexOf('/') + 1).toLowerCase()
  if (/^gpt-5(\.\d+)?-chat/.test(id)) return false
  return /^(o\d|gpt-5|codex)/.test(id) || id.includes('codex')
}

/** A per-model boolean setting, resolved for `modelId`. */
const option = (value: boolean | ((modelId: string) => boolean) | undefined, modelId: string, fallback: boolean): boolean =>
  value === undefined ? fallback : typeof value === 'function' ? value(modelId) : value

/** The `reasoning.effort` for the model's thinking level, or `undefined` to send no `reasoning`. */
export function reasoningEffort(model: ModelSpec, settings: OpenAIResponsesRequestSettings = {}): string | undefined {
  const level = model.thinkingLevel
  const own = settings.efforts?.[level]
  if (own !== undefined) return own
  if (level === 'off') return undefined
  if (level === 'xhigh') return option(settings.supportsXhigh, model.modelId, false) ? 'xhigh' : 'high'
  return level
}

/** A dated snapshot (`gpt-5-nano-2025-08-07`) answers for its alias (`gpt-5-nano`): its reasoning is the same model's. */
const isSnapshotOf = (served: string, requested: string): boolean => served.startsWith(`${requested}-`) && /^\d{4}-\d{2}-\d{2}$/.test(served.slice(requested.length + 1))

function imageUrl(image: ImageContent): string {
  return image.source.type === 'base64' ? `data:${image.source.mimeType};base64,${image.source.data}` : image.source.url
}

/** User content parts; extension blocks are sent only when they are API input parts (`input_file`, ...). */
function userParts(content: readonly UserContent[]): Json[] {
  const parts: Json[] = []
  for (const block of content) {
    if (block.type === 'text') {
      if (block.text !== '') parts.push({ type: 'input_text', text: block.text })
    } else if (block.type === 'image') parts.push({ type: 'input_image', image_url: imageUrl(block), detail: 'auto' })
    else if (block.typeName.startsWith('input_') && isJsonObject(block.data)) parts.push({ ...block.data, type: block.typeName })
  }
  return parts
}

/** The reasoning item a thinking signature holds, or `undefined` when it is not one. */
function reasoningItem(signature: string | undefined, store: boolean): Json | undefined {
  if (signature === undefined) return undefined
  let json: unknown
  try {
    json = JSON.parse(signature)
  } catch {
    return undefined
  }
  if (!isJsonObject(json) || typeof json['id'] !== 'string') return undefined
  const encrypted = json['encrypted_content']
  // Without encrypted content the server must look the item up, which only a stored response allows.
  if (typeof encrypted !== 'string' && !store) return undefined
  return {
    type: 'reasoning',
    id: json['id'],
    summary: Array.isArray(json['summary']) ? json['summary'] : [],
    ...(typeof encrypted === 'string' ? { encrypted_content: encrypted } : {}),
  }
}

function assistantItems(m: AssistantMessage, same: boolean, settings: OpenAIResponsesRequestSettings, store: boolean): Json[] {
  const items: Json[] = []
  const blocks = m.content
  for (let i = 0; i < blocks.length; i++) {
    const block = blocks[i]!
    if (block.type === 'text') {
      if (block.text === '') continue
      const item: Json = { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: block.text, annotations: [] }], status: 'completed' }
      const next = blocks[i + 1]
      if (same && next?.type === 'extension' && next.typeName === MESSAGE_MARKER && isJsonObject(next.data)) {
        const { id, phase } = next.data
        if (typeof id === 'string' && id.startsWith('msg')) item['id'] = id
        if (typeof phase === 'string') item['phase'] = phase
      }
      items.push(item)
    } else if (block.type === 'thinking') {
      // prepareMessages already turned another model's thinking into text.
      const item = same && block.redacted !== true ? reasoningItem(block.signature, store) : undefined
      if (item !== undefined) items.push(item)
    } else if (block.type === 'toolCall') {
      const { callId, itemId } = splitToolCallId(block.id)
      const withId = same && itemId !== undefined ? { id: itemId } : {}
      if (settings.customTools !== undefined && Object.hasOwn(settings.customTools, block.name)) {
        const input = block.arguments['input']
        items.push({ type: 'custom_tool_call', call_id: callId, name: block.name, input: typeof input === 'string' ? input : JSON.stringify(block.arguments), ...withId })
      } else {
        items.push({ type: 'function_call', call_id: callId, name: block.name, arguments: JSON.stringify(block.arguments), ...withId })
      }
    }
    // Other extension blocks (server tool calls and their results) are not
    // replayed: with `store: false` the server cannot resolve them.
  }
  // A reasoning item must be followed by what it produced; alone it is rejected.
  return items.every((item) => item['type'] === 'reasoning') ? [] : items
}

function toolOutput(m: ToolResultMessage, settings: OpenAIResponsesRequestSettings, images: Json[]): Json {
  const text = m.content.flatMap((c) => (c.type === 'text' ? [c.text] : [])).join('\n')
  const own = m.content.filter((c): c is ImageContent => c.type === 'image')
  if (own.length > 0) {
    images.push({ type: 'input_text', text: `Image${own.length > 1 ? 's' : ''} returned by the tool call ${splitToolCallId(m.toolCallId).callId} (${m.toolName}):` })
    for (const image of own) images.push({ type: 'input_image', image_url: imageUrl(image), detail: 'auto' })
  }
  const output = text === '' && own.length > 0 ? '(the result is the image in the next message)' : text
  const custom = settings.customTools !== undefined && Object.hasOwn(settings.customTools, m.toolName)
  return { type: custom ? 'custom_tool_call_output' : 'function_call_output', call_id: splitToolCallId(m.toolCallId).callId, output }
}

/** The `input` items for `messages`, prepared for the request's model (see the module comment). */
export function openaiResponsesInput(request: LlmRequest, settings: OpenAIResponsesRequestSettings = {}): Json[] {
  const target: ReplayTarget = { provider: request.model.provider, modelId: request.model.modelId, normalizeToolCallId: normalizeOpenAIToolCallId }
  const aliased = request.messages.map((m): LlmMessage =>
    m.role === 'assistant' && m.provider === target.provider && isSnapshotOf(m.model, target.modelId) ? { ...m, model: target.modelId } : m,
  )
  const store = settings.store ?? false
  const input: Json[] = []
  let images: Json[] = []
  const flushImages = (): void => {
    if (images.length > 0) input.push({ role: 'user', content: images })
    images = []
  }
  for (const m of prepareMessages(aliased, target)) {
    if (m.role !== 'toolResult') flushImages()
    if (m.role === 'user') {
      const parts = userParts(m.content)
      if (parts.length > 0) input.push({ role: 'user', content: parts })
    } else if (m.role === 'assistant') {
      input.push(...assistantItems(m, isSameModel(m, target), settings, store))
    } else {
      input.push(toolOutput(m, settings, images))
    }
  }
  flushImages()
  return input
}

/** The tool definitions: JSON functions (non-strict: schemas are not rewritten for strict mode), or custom tools. */
function toolDefinitions(request: LlmRequest, settings: OpenAIResponsesRequestSettings): Json[] {
  return request.tools.map((tool) => {
    const custom = settings.customTools !== undefined && Object.hasOwn(settings.customTools, tool.name) ? settings.customTools[tool.name] : undefined
    if (custom !== undefined) return { type: 'custom', name: tool.name, description: tool.description, ...(custom.format === undefined ? {} : { format: custom.format }) }
    return { type: 'function', name: tool.name, description: tool.description, parameters: tool.parameters, strict: false }
  })
}

/**
 * The request body for `request`. Pure: the same request and settings
 * always give the same body. Stop sequences are not sent: the Responses
 * API has none.
 */
export function openaiResponsesRequestBody(request: LlmRequest, settings: OpenAIResponsesRequestSettings = {}): Json {
  const model = request.model
  const options = request.options ?? {}
  const store = settings.store ?? false
  const effort = reasoningEffort(model, settings)
  const reasoningOn = effort !== undefined && effort !== 'none'
  const reasoningModel = option(settings.reasoningModel, model.modelId, isOpenAIReasoningModel(model.modelId))
  const input = openaiResponsesInput(request, settings)
  const systemAs = settings.systemPromptAs ?? 'instructions'
  if (request.systemPrompt !== '' && systemAs !== 'instructions') input.unshift({ role: systemAs, content: request.systemPrompt })
  const body: Json = { model: model.modelId, input, stream: true, store }
  if (request.systemPrompt !== '' && systemAs === 'instructions') body['instructions'] = request.systemPrompt
  if (request.tools.length > 0) body['tools'] = toolDefinitions(request, settings)
  const maxTokens = options.maxTokens ?? model.maxOutputTokens
  if (maxTokens !== undefined) body['max_output_tokens'] = maxTokens
  if (options.temperature !== undefined && !reasoningModel && !reasoningOn) body['temperature'] = options.temperature
  if (effort !== undefined) {
    const summary = settings.reasoningSummary === undefined ? 'auto' : settings.reasoningSummary
    body['reasoning'] = { effort, ...(summary === null || !reasoningOn ? {} : { summary }) }
  }
  if (!store && (reasoningOn || (reasoningModel && effort !== 'none'))) body['include'] = ['reasoning.encrypted_content']
  // Not strict, for the reason given in the chat adapter: the agent decodes the answer itself.
  if (options.responseFormat !== undefined) {
    body['text'] = { format: { type: 'json_schema', name: options.responseFormat.name, schema: options.responseFormat.schema, strict: false } }
  }
  if (options.sessionId !== undefined && options.cacheRetention !== 'none') body['prompt_cache_key'] = options.sessionId
  if (options.cacheRetention === 'long') body['prompt_cache_retention'] = '24h'
  if (options.metadata !== undefined) {
    // The API takes string values only.
    body['metadata'] = Object.fromEntries(Object.entries(options.metadata).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]))
  }
  return body
}
