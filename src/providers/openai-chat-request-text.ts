/**
 * The Chat Completions request body as JSON text, assembled from each
 * message's cached text (see `wire-cache.ts`): the same text as
 * `JSON.stringify(openaiChatRequestBody(request, settings, compat))`, without
 * converting and serializing the whole transcript again every turn.
 */
import type { LlmMessage } from '../types/message.js'
import type { LlmRequest } from '../types/request.js'
import type { Json } from './json.js'
import {
  openaiAssemble,
  openaiChatBodyTail,
  openaiSystemMessage,
  openaiWirePart,
  toolImagesIntro,
  toolResultsAcknowledged,
  type OpenAIChatRequestSettings,
  type OpenAIWirePart,
} from './openai-chat-request.js'
import { toolCallIdNormalizer, type Compat } from './openai-chat-compat.js'
import { replayedMessages } from './replay.js'
import { JsonText, WirePieces } from './wire-cache.js'

const pieces = new WirePieces<LlmMessage, OpenAIWirePart<string>>()

/** As an array element: `JSON.stringify` of an object whose `toJSON` gives nothing is `null` there. */
const elementText = (value: Json): string => JSON.stringify(value) ?? 'null'

/** Names everything a message's part depends on (see `openaiWirePart`), so that a part built for another target is not reused. */
const targetOf = (request: LlmRequest, compat: Compat): string =>
  [request.model.provider, request.model.modelId, compat.toolCallIdStyle, compat.toolCallIdMaxLength, compat.requiresToolResultName, compat.replayReasoning, compat.reasoningField].join('\u0000')

const fillerText = JSON.stringify(toolResultsAcknowledged)
const imagesText = (images: readonly string[]): string => `{"role":"user","content":[${JSON.stringify(toolImagesIntro)},${images.join(',')}]}`

/** The body of {@link openaiChatRequestBody}, serialized. Throws what `JSON.stringify` of that body would (a cycle, a `BigInt`, a value nested too deep). */
export function openaiChatRequestText(request: LlmRequest, settings: OpenAIChatRequestSettings, compat: Compat): JsonText {
  const target = targetOf(request, compat)
  const normalize = toolCallIdNormalizer(compat)
  const build = (m: LlmMessage): OpenAIWirePart<string> => {
    const part = openaiWirePart(m, request.model, compat, normalize)
    return { role: part.role, message: part.message === undefined ? undefined : elementText(part.message), images: part.images.map(elementText) }
  }
  const parts = replayedMessages(request.messages).map((m) => pieces.of(m, target, build))
  const messages = openaiAssemble<string>(parts, compat, fillerText, imagesText)
  const system = openaiSystemMessage(request, compat)
  if (system !== undefined) messages.unshift(elementText(system))
  const tail = JSON.stringify(openaiChatBodyTail(request, settings, compat))
  return new JsonText(`{"model":${JSON.stringify(request.model.modelId)},"messages":[${messages.join(',')}],${tail.slice(1)}`)
}
