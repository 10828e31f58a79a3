/**
 * Non-streamed Anthropic Messages API responses (one JSON message body):
 * decoded by the stream decoder, as a `message_start` listing the content
 * followed by `message_stop`.
 */
import type { ProviderChunk } from '../types/chunk.js'
import type { ModelSpec } from '../types/model.js'
import type { AssistantMessage } from '../types/message.js'
import { MessageFold } from '../stream/message-fold.js'
import { protocolError } from './errors.js'
import { AnthropicDecoder } from './anthropic-decoder.js'
import { ANTHROPIC } from './anthropic-errors.js'
import { isRecord } from './json.js'

/** The chunks of a non-streamed Messages API response body (`{"type":"message",...}`); an error body throws its `ProviderError`. */
export function anthropicChunksFromJson(json: unknown): ProviderChunk[] {
  if (!isRecord(json)) throw protocolError(ANTHROPIC, 'the response body is not a JSON object')
  const decoder = new AnthropicDecoder()
  if (json['type'] === 'error') return decoder.handle(json)
  return [...decoder.handle({ type: 'message_start', message: json }), ...decoder.handle({ type: 'message_stop' })]
}

/**
 * Decodes a non-streamed Messages API response body into the assistant
 * message the stream would have produced (named and priced by `model`).
 * Throws a `ProviderError` for an error body or a malformed one.
 */
export function anthropicMessageFromJson(json: unknown, model: ModelSpec, timestamp: number = Date.now()): AssistantMessage {
  const fold = new MessageFold(model, timestamp)
  for (const chunk of anthropicChunksFromJson(json)) {
    const result = fold.push(chunk)
    if (typeof result === 'string') throw protocolError(ANTHROPIC, result)
  }
  return fold.finish()
}
