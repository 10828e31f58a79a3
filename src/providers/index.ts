/**
 * rxagent/providers: real model APIs behind the `StreamFn` contract.
 * Separate from `rxagent` so that the core imports no HTTP code.
 *
 * Public: the adapters and their settings, the model catalog, and what a
 * custom adapter needs (`streamFnOf`, `decodeWire`, the protocol types,
 * `prepareMessages`). Request builders, decoders and error helpers are
 * internal; tests import them from their files.
 */
export type { SseEvent } from './sse.js'
export type { HttpRequest, TransportOptions, HttpErrorClassifier } from './transport.js'
export { decodeWire, streamFnOf, type ProviderSettings, type WireDecoder, type WireProtocol } from './protocol.js'
export { prepareMessages, type ReplayTarget } from './replay.js'
export { catalogModel, model, ModelApi, CatalogModel, ModelCatalog, models } from './models.js'
export { anthropic, type AnthropicSettings } from './anthropic.js'
export type { AnthropicThinkingMode } from './anthropic-request.js'
export { openaiResponses, type OpenAIResponsesSettings } from './openai-responses.js'
export type {
  OpenAICustomTool,
  OpenAIReasoningSummary,
  OpenAIResponsesRequestSettings,
} from './openai-responses-request.js'
export { openaiChat, type OpenAIChatSettings } from './openai-chat.js'
export type { OpenAIChatRequestSettings } from './openai-chat-request.js'
export type { Compat, ReasoningEffort } from './openai-chat-compat.js'
export { compatFor, openaiCompatible, type CompatServer, type OpenAICompatibleSettings } from './openai-compatible.js'
export { google, type GoogleSettings } from './google.js'
export type { GoogleRequestSettings, GoogleSchemaMode, GoogleSafetySetting } from './google-request.js'
export type { GoogleThinkingParameter } from './google-thinking.js'
export { providers, type RouteSettings } from './route.js'
