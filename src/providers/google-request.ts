/**
 * `LlmRequest` → Gemini `GenerateContentRequest` body.
 *
 * Gemini wants roles `user` and `model`, a tool call's results as
 * `functionResponse` parts of ONE user turn right after the model turn that
 * called them, thought signatures back on the very parts they came on (see
 * `google-decoder.ts` for how they are kept), and tool parameters in its
 * OpenAPI subset of JSON Schema (`google-schema.ts`). Model ids and the
 * `thinkingConfig` are in `google-thinking.ts` (re-exported here).
 */
import type { ImageContent, UserContent } from '../types/content.js'
import type { AssistantMessage, LlmMessage, ToolResultMessage } from '../types/message.js'
import type { ModelSpec } from '../types/model.js'
import type { LlmRequest } from '../types/request.js'
import type { ToolSchema } from '../types/tool.js'
import { idSanitizer, prepareMessages } from './replay.js'
import { partExtensionPrefix } from './google-part-kinds.js'
import { geminiSchema } from './google-schema.js'
import { googleThinkingConfig, isGemini3, sameGeminiModel, stripModels, type GoogleThinkingParameter } from './google-thinking.js'
import { isRecord, type Json } from './json.js'

/**
 * How tool parameters are sent. `openapi` (default): converted to the
 * OpenAPI subset of `parameters`, which every Gemini model takes (keywords
 * it lacks are dropped or rewritten, see {@link geminiSchema}). `jsonSchema`:
 * the JSON Schema as it is, in `parametersJsonSchema` (Gemini 2.5 and later).
 */
export type GoogleSchemaMode = 'openapi' | 'jsonSchema'

/** One `safetySettings` entry, passed through as is. */
export interface GoogleSafetySetting {
  readonly category: string
  readonly threshold: string
}

/** What the request body depends on besides the request itself. */
export interface GoogleRequestSettings {
  /** How thinking levels are requested (default `auto`, see {@link GoogleThinkingParameter}). */
  readonly thinkingParameter?: GoogleThinkingParameter
  /** How tool parameters are sent (default `openapi`, see {@link GoogleSchemaMode}). */
  readonly schemaMode?: GoogleSchemaMode
  /** Sent as `safetySettings` (default: none, the API's defaults). */
  readonly safetySettings?: readonly GoogleSafetySetting[]
}

/** Google's documented placeholder for a function call replayed without its own signature (another model wrote it). */
export const SKIP_THOUGHT_SIGNATURE = 'skip_thought_signature_validator'

/** Tool-call ids as sent back: Gemini's own are short and plain; others are made so (`[a-zA-Z0-9_-]`, at most 64). */
export const normalizeGoogleToolCallId = idSanitizer(/a-zA-Z0-9_-/, 64)

// ---------------------------------------------------------------------------
// Tools

function functionDeclaration(tool: ToolSchema, mode: GoogleSchemaMode): Json {
  const out: Json = { name: tool.name, description: tool.description }
  if (mode === 'jsonSchema') {
    const { $schema: _, ...schema } = tool.parameters
    out['parametersJsonSchema'] = schema
    return out
  }
  const parameters = geminiSchema(tool.parameters)
  // Gemini rejects an OBJECT without properties: a tool without parameters sends none.
  if (isRecord(parameters['properties']) && Object.keys(parameters['properties']).length > 0) out['parameters'] = parameters
  return out
}

// ---------------------------------------------------------------------------
// Contents

type Part = Json
interface Content {
  readonly role: 'user' | 'model'
  readonly parts: Part[]
}

const mimeByExtension: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
  heif: 'image/heif',
}

function imagePart(image: ImageContent): Part {
  const source = image.source
  if (source.type === 'base64') return { inlineData: { mimeType: source.mimeType, data: source.data } }
  const dataUrl = /^data:([^;,]+);base64,(.*)$/s.exec(source.url)
  if (dataUrl !== null) return { inlineData: { mimeType: source.mimeType ?? dataUrl[1]!, data: dataUrl[2]! } }
  const extension = /\.([a-z0-9]+)(?:[?#].*)?$/i.exec(source.url)?.[1]?.toLowerCase()
  const mimeType = source.mimeType ?? (extension === undefined ? undefined : mimeByExtension[extension])
  return { fileData: { ...(mimeType === undefined ? {} : { mimeType }), fileUri: source.url } }
}

/** A user-side extension block that is a Gemini part (`google.part.*`), as that part. */
const partOfExtension = (block: { typeName: string; data: unknown }): Part | undefined =>
  block.typeName.startsWith(partExtensionPrefix) && isRecord(block.data) ? { ...block.data } : undefined

function userParts(content: readonly UserContent[]): Part[] {
  const parts: Part[] = []
  for (const block of content) {
    if (block.type === 'text') {
      if (block.text !== '') parts.push({ text: block.text })
    } else if (block.type === 'image') parts.push(imagePart(block))
    else {
      const part = partOfExtension(block)
      if (part !== undefined) parts.push(part)
    }
  }
  return parts
}

/** A tool result: its `functionResponse` part, and its images (sent after the turn's responses). */
function toolResultParts(m: ToolResultMessage): { response: Part; extra: Part[] } {
  const texts: string[] = []
  const extra: Part[] = []
  for (const block of m.content) {
    if (block.type === 'text') texts.push(block.text)
    else if (block.type === 'image') extra.push(imagePart(block))
    else {
      const part = partOfExtension(block)
      if (part !== undefined) extra.push(part)
    }
  }
  let output = texts.join('\n')
  if (output === '' && extra.length > 0) output = 'The result is in the attached file(s).'
  return {
    response: { functionResponse: { id: m.toolCallId, name: m.toolName, response: m.isError ? { error: output } : { output } } },
    extra,
  }
}

/** Puts a signature kept as an empty thinking block back on the text or function-call part it came on. */
function attachSignature(parts: Part[], signature: string): void {
  const previous = parts.at(-1)
  const owner = previous !== undefined && previous['thoughtSignature'] === undefined && (isRecord(previous['functionCall']) || (typeof previous['text'] === 'string' && previous['thought'] !== true))
  if (owner) previous['thoughtSignature'] = signature
  else parts.push({ text: '', thought: true, thoughtSignature: signature })
}

function modelParts(m: AssistantMessage, sameProvider: boolean, same: boolean, gemini3: boolean): Part[] {
  const parts: Part[] = []
  for (const block of m.content) {
    switch (block.type) {
      case 'text':
        // Kept even when empty for now: a signature may follow that belongs to it.
        parts.push({ text: block.text })
        break
      case 'thinking': {
        // Only the writing model's thinking is left here (prepareMessages made other models' text).
        if (block.redacted === true) break
        const signature = block.signature !== undefined && block.signature !== '' ? block.signature : undefined
        if (block.thinking === '') {
          if (signature !== undefined) attachSignature(parts, signature)
        } else parts.push({ text: block.thinking, thought: true, ...(signature === undefined ? {} : { thoughtSignature: signature }) })
        break
      }
      case 'toolCall':
        parts.push({ functionCall: { id: block.id, name: block.name, args: block.arguments } })
        break
      case 'extension': {
        // Gemini parts (code execution...) carry over between Gemini models; a signature only to the model that made it.
        const part = sameProvider ? partOfExtension(block) : undefined
        if (part !== undefined && !same) delete part['thoughtSignature']
        if (part !== undefined) parts.push(part)
        break
      }
    }
  }
  const kept = parts.filter((p) => !(p['text'] === '' && p['thoughtSignature'] === undefined))
  // Gemini 3 rejects a function call of the current turn without a signature; calls another model wrote have none.
  if (gemini3 && !kept.some((p) => isRecord(p['functionCall']) && p['thoughtSignature'] !== undefined)) {
    for (const p of kept) if (isRecord(p['functionCall'])) p['thoughtSignature'] = SKIP_THOUGHT_SIGNATURE
  }
  return kept
}

/** The `contents` of the request: the transcript prepared for `model`, in Gemini's turns. */
export function googleContents(messages: readonly LlmMessage[], model: ModelSpec): Json[] {
  // A response names its model by `modelVersion`; a versioned name of the requested model is the same model.
  const relabeled = messages.map((m) =>
    m.role === 'assistant' && m.provider === model.provider && m.model !== model.modelId && sameGeminiModel(m.model, model.modelId) ? { ...m, model: model.modelId } : m,
  )
  const prepared = prepareMessages(relabeled, { provider: model.provider, modelId: model.modelId, normalizeToolCallId: normalizeGoogleToolCallId })
  const gemini3 = isGemini3(stripModels(model.modelId))
  const out: Content[] = []
  const push = (role: Content['role'], parts: Part[]): void => {
    if (parts.length === 0) return
    const last = out.at(-1)
    if (last?.role === role) last.parts.push(...parts)
    else out.push({ role, parts })
  }
  let responses: Part[] = []
  let extra: Part[] = []
  const flushResults = (): void => {
    push('user', [...responses, ...extra])
    responses = []
    extra = []
  }
  for (const m of prepared) {
    if (m.role === 'toolResult') {
      const r = toolResultParts(m)
      responses.push(r.response)
      extra.push(...r.extra)
      continue
    }
    flushResults()
    if (m.role === 'user') push('user', userParts(m.content))
    else push('model', modelParts(m, m.provider === model.provider, m.provider === model.provider && m.model === model.modelId, gemini3))
  }
  flushResults()
  return out.map((c) => ({ role: c.role, parts: c.parts }))
}

/** The generation options: temperature, output cap, stop sequences, thinking. */
function generationConfig(request: LlmRequest, settings: GoogleRequestSettings): Json {
  const options = request.options
  const out: Json = {}
  if (options?.temperature !== undefined) out['temperature'] = options.temperature
  const maxTokens = options?.maxTokens ?? request.model.maxOutputTokens
  if (maxTokens !== undefined) out['maxOutputTokens'] = maxTokens
  if (options?.stopSequences !== undefined && options.stopSequences.length > 0) out['stopSequences'] = [...options.stopSequences]
  if (options?.responseFormat !== undefined) {
    // `responseJsonSchema` takes standard JSON Schema (unlike `responseSchema`'s OpenAPI subset).
    out['responseMimeType'] = 'application/json'
    out['responseJsonSchema'] = options.responseFormat.schema
  }
  const thinking = googleThinkingConfig(request.model, settings.thinkingParameter)
  if (thinking !== undefined) out['thinkingConfig'] = thinking
  return out
}

/**
 * The JSON body of a `streamGenerateContent` call for `request`. Pure: the
 * same request and settings always give the same body.
 */
export function googleRequestBody(request: LlmRequest, settings: GoogleRequestSettings = {}): Json {
  const body: Json = { contents: googleContents(request.messages, request.model) }
  if (request.systemPrompt !== '') body['systemInstruction'] = { parts: [{ text: request.systemPrompt }] }
  if (request.tools.length > 0) {
    const mode = settings.schemaMode ?? 'openapi'
    body['tools'] = [{ functionDeclarations: request.tools.map((t) => functionDeclaration(t, mode)) }]
  }
  const config = generationConfig(request, settings)
  if (Object.keys(config).length > 0) body['generationConfig'] = config
  if (settings.safetySettings !== undefined && settings.safetySettings.length > 0) body['safetySettings'] = settings.safetySettings.map((s) => ({ ...s }))
  return body
}
