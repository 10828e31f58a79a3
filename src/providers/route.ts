/**
 * One `StreamFn` for every provider: each request goes to the adapter of its
 * model's provider. With it, switching model or provider mid-conversation
 * (`Agent.setModel`, fallback chains across providers) needs no wiring.
 */
import { defer, throwError } from 'rxjs'
import type { ModelSpec } from '../types/model.js'
import type { StreamFn } from '../types/request.js'
import { ProviderError } from '../types/provider-error.js'
import { anthropic, type AnthropicSettings } from './anthropic.js'
import { google, type GoogleSettings } from './google.js'
import { openaiChat, type OpenAIChatSettings } from './openai-chat.js'
import { compatFor, openaiCompatible, type CompatServer, type OpenAICompatibleSettings } from './openai-compatible.js'
import { openaiResponses, type OpenAIResponsesSettings } from './openai-responses.js'
import { models, type ModelCatalog } from './models.js'

/** Settings per provider; everything is optional (keys come from the environment). */
export interface RouteSettings {
  readonly anthropic?: AnthropicSettings
  /** For provider `openai`: the Responses API, unless the catalog says the model is chat-only. */
  readonly openai?: OpenAIResponsesSettings
  /** For provider `openai` models the catalog marks `openai-chat`. */
  readonly openaiChat?: OpenAIChatSettings
  readonly google?: GoogleSettings
  /** Per provider name: OpenAI-compatible servers (`ollama`, `groq`, a name of your own with a `baseUrl`…). */
  readonly compatible?: Readonly<Record<string, OpenAICompatibleSettings>>
  /** Where `api` is looked up (default: the built-in catalog). */
  readonly catalog?: ModelCatalog
}

const knownServers = new Set<string>(['ollama', 'vllm', 'llamacpp', 'openrouter', 'groq', 'deepseek', 'xai', 'mistral', 'together', 'fireworks', 'cerebras', 'lmstudio'])

/** A `StreamFn` that routes each request by `request.model.provider`. Adapters are built once per provider. */
export function providers(settings: RouteSettings = {}): StreamFn {
  const catalog = settings.catalog ?? models
  const built = new Map<string, StreamFn>()
  const streamFnFor = (model: ModelSpec): StreamFn => {
    const api = catalog.get(model.provider, model.modelId)?.api
    const key = `${model.provider}:${api ?? ''}`
    let fn = built.get(key)
    if (fn !== undefined) return fn
    switch (model.provider) {
      case 'anthropic':
        fn = anthropic(settings.anthropic)
        break
      case 'openai':
        fn = api === 'openai-chat' ? openaiChat(settings.openaiChat) : openaiResponses(settings.openai)
        break
      case 'google':
        fn = google(settings.google)
        break
      default: {
        const own = settings.compatible?.[model.provider]
        const server: CompatServer | undefined = own?.server ?? (knownServers.has(model.provider) ? (model.provider as CompatServer) : undefined)
        if (own === undefined && server === undefined) {
          throw ProviderError.of('modelNotFound', model.provider, `no adapter for provider '${model.provider}': add it to \`compatible\` with its baseUrl`, { retryable: false })
        }
        if (own?.baseUrl === undefined && server !== undefined && compatFor(server).defaultBaseUrl === undefined) {
          throw ProviderError.of('invalidRequest', model.provider, `provider '${model.provider}' needs a baseUrl in \`compatible\``, { retryable: false })
        }
        fn = openaiCompatible({ ...own, ...(server === undefined ? {} : { server }), provider: model.provider })
      }
    }
    built.set(key, fn)
    return fn
  }
  return (request) =>
    defer(() => {
      let fn: StreamFn
      try {
        fn = streamFnFor(request.model)
      } catch (error) {
        return throwError(() => error)
      }
      return fn(request)
    })
}
