/**
 * The OpenAI Chat Completions API (`POST /v1/chat/completions`, streamed)
 * behind the `StreamFn` contract. For servers that speak the same dialect
 * (Ollama, vLLM, Groq, OpenRouter, ...) use `openaiCompatible`.
 *
 * ```ts
 * const streamFn = openaiChat() // key from OPENAI_API_KEY
 * agentLoop(userMessage('hi'), context, { model: modelSpec('openai', 'gpt-4.1'), streamFn })
 * ```
 *
 * Request building is in `openai-chat-request.ts`, response decoding in
 * `openai-chat-decoder.ts`; this file is the wiring: URL, headers, errors.
 */
import { resident } from '../rx/resident.js'
import type { StreamFn } from '../types/request.js'
import { WireReader, streamFnOf, type ProviderSettings, type WireProtocol } from './protocol.js'
import { ProviderError } from '../types/provider-error.js'
import { OpenAIChatDecoder } from './openai-chat-decoder.js'
import { openaiHttpErrorClassifier } from './openai-errors.js'
import type { OpenAIChatRequestSettings } from './openai-chat-request.js'
import { openaiCompat, type Compat } from './openai-chat-compat.js'
import { openaiChatRequestText } from './openai-chat-request-text.js'

/** The provider name of api.openai.com. */
export const OPENAI = 'openai'

/** Settings of the Chat Completions adapter; every field is optional. */
export interface OpenAIChatSettings extends ProviderSettings, OpenAIChatRequestSettings {
  /**
   * The API key (sent only as `Authorization: Bearer`), or a function
   * resolving it per call. Default: the `OPENAI_API_KEY` environment variable.
   */
  readonly apiKey?: ProviderSettings['apiKey']
  /** The API's base URL including `/v1` (default `https://api.openai.com/v1`); for proxies, gateways and Azure-style endpoints. */
  readonly baseUrl?: string
  /** Sent as the `OpenAI-Organization` header. */
  readonly organization?: string
  /** Sent as the `OpenAI-Project` header. */
  readonly project?: string
  /** Sends tool definitions with `strict: true` (their schemas must then meet OpenAI's strict-mode rules). Default false. */
  readonly strictTools?: boolean
}

/** The base URL without trailing slashes. */
const trimUrl = (url: string): string => url.replace(/\/+$/, '')

/**
 * A Chat Completions wire protocol for `provider` shaped by `compat`: the
 * building block of both `openaiChat` and `openaiCompatible`.
 */
export function openaiChatProtocolFor<S extends OpenAIChatSettings>(provider: string, compat: Compat): WireProtocol<S> {
  const classify = openaiHttpErrorClassifier(provider)
  return {
    provider,
    apiKeyEnv: compat.apiKeyEnv,
    requiresApiKey: compat.requiresApiKey,
    buildRequest: (request, settings, apiKey) => {
      const base = settings.baseUrl ?? compat.defaultBaseUrl
      if (base === undefined || base === '') throw ProviderError.of('invalidRequest', provider, `${provider}: no base URL (pass \`baseUrl\`)`)
      return {
        url: `${trimUrl(base)}/chat/completions`,
        headers: {
          ...request.options?.headers,
          ...(settings.organization === undefined ? {} : { 'OpenAI-Organization': settings.organization }),
          ...(settings.project === undefined ? {} : { 'OpenAI-Project': settings.project }),
          ...(apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` }),
        },
        body: openaiChatRequestText(request, settings, compat),
      }
    },
    decoder: () => new OpenAIChatDecoder(provider, compat),
    httpError: classify,
  }
}

/** The OpenAI Chat Completions API as a wire protocol. */
export const openaiChatProtocol: WireProtocol<OpenAIChatSettings> = openaiChatProtocolFor<OpenAIChatSettings>(OPENAI, openaiCompat)

/** A `StreamFn` calling the OpenAI Chat Completions API with `settings`. */
export function openaiChat(settings: OpenAIChatSettings = {}): StreamFn {
  return streamFnOf(openaiChatProtocol, settings)
}

// A response's reader and decoder: their hidden classes outlive a response (see `resident`).
resident(new WireReader(new OpenAIChatDecoder()))
