/**
 * The OpenAI Responses API (`POST /v1/responses`, streamed) behind the
 * `StreamFn` contract.
 *
 * ```ts
 * const streamFn = openaiResponses() // key from OPENAI_API_KEY
 * agentLoop(userMessage('hi'), context, { model: model('gpt-5', 'medium'), streamFn })
 * ```
 *
 * Request building is in `openai-responses-request.ts`, response decoding in
 * `openai-responses-decoder.ts`; this file is the wiring: URL, headers, errors.
 */
import { resident } from '../rx/resident.js'
import type { StreamFn } from '../types/request.js'
import { WireReader, streamFnOf, type ProviderSettings, type WireProtocol } from './protocol.js'
import { OPENAI, OpenAIResponsesDecoder } from './openai-responses-decoder.js'
import { openaiHttpErrorClassifier } from './openai-errors.js'
import type { HttpErrorClassifier } from './transport.js'
import { openaiResponsesRequestBody, type OpenAIResponsesRequestSettings } from './openai-responses-request.js'

// The decoder's `openaiUsage` / `openaiStopReason` stay internal: the chat adapter exports its own.

/** The default API base URL, `/v1` included. */
export const OPENAI_BASE_URL = 'https://api.openai.com/v1'

/** Settings of the OpenAI Responses adapter; every field is optional. */
export interface OpenAIResponsesSettings extends ProviderSettings, OpenAIResponsesRequestSettings {
  /**
   * The API key (sent only as `Authorization: Bearer`), or a function
   * resolving it per call. Default: the `OPENAI_API_KEY` environment variable.
   */
  readonly apiKey?: ProviderSettings['apiKey']
  /** The API's base URL, `/v1` included (default `https://api.openai.com/v1`); for proxies, Azure-style gateways, local servers. */
  readonly baseUrl?: string
  /** Sent as `OpenAI-Organization`, for keys that belong to several organizations. */
  readonly organization?: string
  /** Sent as `OpenAI-Project`, to bill a specific project. */
  readonly project?: string
  /** Reasoning summaries streamed as thinking: `'auto'` (default), `'concise'`, `'detailed'`, or `null` for none. */
  readonly reasoningSummary?: OpenAIResponsesRequestSettings['reasoningSummary']
  /**
   * Whether OpenAI stores responses (default `false`). When `false`,
   * encrypted reasoning is requested (`include: ['reasoning.encrypted_content']`)
   * and replayed on later turns, so reasoning survives without server state.
   */
  readonly store?: boolean
  /** Whether the model takes effort `xhigh` (default `false`: thinking level `xhigh` is sent as `high`). */
  readonly supportsXhigh?: OpenAIResponsesRequestSettings['supportsXhigh']
  /** Effort values per thinking level, overriding the defaults (e.g. `{off: 'none'}`). */
  readonly efforts?: OpenAIResponsesRequestSettings['efforts']
  /** Whether the model rejects `temperature` as a reasoning model (default: guessed from the model id). */
  readonly reasoningModel?: OpenAIResponsesRequestSettings['reasoningModel']
  /** Tools sent as free-form custom tools, by name; their calls' arguments are `{input: "<text>"}`. */
  readonly customTools?: OpenAIResponsesRequestSettings['customTools']
  /** Where the system prompt goes: `instructions` (default), or a `developer` / `system` input item. */
  readonly systemPromptAs?: OpenAIResponsesRequestSettings['systemPromptAs']
}

/** Classifies an HTTP error response (see `openaiHttpErrorClassifier`). */
export const openaiHttpError: HttpErrorClassifier = openaiHttpErrorClassifier(OPENAI)

/** The OpenAI Responses API as a wire protocol. */
export const openaiResponsesProtocol: WireProtocol<OpenAIResponsesSettings> = {
  provider: OPENAI,
  apiKeyEnv: ['OPENAI_API_KEY'],
  requiresApiKey: true,
  buildRequest: (request, settings, apiKey) => {
    const base = (settings.baseUrl ?? OPENAI_BASE_URL).replace(/\/+$/, '')
    return {
      url: `${base}/responses`,
      headers: {
        ...request.options?.headers,
        ...(settings.organization === undefined ? {} : { 'OpenAI-Organization': settings.organization }),
        ...(settings.project === undefined ? {} : { 'OpenAI-Project': settings.project }),
        ...(apiKey === undefined ? {} : { Authorization: `Bearer ${apiKey}` }),
      },
      body: openaiResponsesRequestBody(request, settings),
    }
  },
  decoder: (request) => new OpenAIResponsesDecoder(request),
  httpError: openaiHttpError,
}

/** A `StreamFn` calling the OpenAI Responses API with `settings`. */
export function openaiResponses(settings: OpenAIResponsesSettings = {}): StreamFn {
  return streamFnOf(openaiResponsesProtocol, settings)
}

// A response's reader and decoder: their hidden classes outlive a response (see `resident`).
resident(new WireReader(new OpenAIResponsesDecoder()))
