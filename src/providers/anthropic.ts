/**
 * The Anthropic Messages API (`POST /v1/messages`, streamed) behind the
 * `StreamFn` contract.
 *
 * ```ts
 * const streamFn = anthropic() // key from ANTHROPIC_API_KEY
 * agentLoop(userMessage('hi'), context, { model: model('claude-sonnet-4-5', 'medium'), streamFn })
 * ```
 *
 * Request building is in `anthropic-request.ts`, response decoding in
 * `anthropic-decoder.ts`; this file is the wiring: URL, headers, errors.
 */
import { resident } from '../rx/resident.js'
import type { StreamFn } from '../types/request.js'
import type { ProviderError } from '../types/provider-error.js'
import { excerpt, httpError, parseJsonBody } from './errors.js'
import { WireReader, streamFnOf, type ProviderSettings, type WireProtocol } from './protocol.js'
import { AnthropicDecoder } from './anthropic-decoder.js'
import { ANTHROPIC, anthropicErrorKind } from './anthropic-errors.js'
import { isRecord } from './json.js'
import { type AnthropicRequestSettings } from './anthropic-request.js'
import { anthropicRequestText } from './anthropic-request-text.js'

/** The API version header this adapter speaks. */
export const ANTHROPIC_VERSION = '2023-06-01'

/** Settings of the Anthropic adapter; every field is optional. */
export interface AnthropicSettings extends ProviderSettings, AnthropicRequestSettings {
  /**
   * The API key (sent only as `x-api-key`), or a function resolving it per
   * call. Default: the `ANTHROPIC_API_KEY` environment variable.
   */
  readonly apiKey?: ProviderSettings['apiKey']
  /** The API's origin, without `/v1` (default `https://api.anthropic.com`); for proxies and gateways. */
  readonly baseUrl?: string
  /** The `anthropic-version` header (default `2023-06-01`). */
  readonly anthropicVersion?: string
  /** Beta features to enable, sent as the `anthropic-beta` header (e.g. `['interleaved-thinking-2025-05-14']`). */
  readonly betas?: readonly string[]
  /**
   * How thinking levels are requested: `budget` (`budget_tokens`),
   * `adaptive` (`thinking: {type: 'adaptive'}` + `output_config.effort`), or
   * `auto` (default: adaptive for Claude 4.6 and later, budget before).
   */
  readonly thinkingMode?: AnthropicRequestSettings['thinkingMode']
  /** `max_tokens` when neither the call's options nor the model's `maxOutputTokens` set one (default 8192). */
  readonly defaultMaxTokens?: number
}

/** The default API origin. */
export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com'

/**
 * Classifies an HTTP error response by its status and the body's
 * `{"type":"error","error":{"type","message"}}`: `overloaded_error` (529)
 * is `overloaded`, `rate_limit_error` is `rateLimit`, and so on; the
 * `retry-after` header gives the delay.
 */
export function anthropicHttpError(status: number, headers: Headers, body: string): ProviderError {
  const json = parseJsonBody(body)
  const error = isRecord(json) && isRecord(json['error']) ? json['error'] : undefined
  const code = typeof error?.['type'] === 'string' ? error['type'] : undefined
  const message = typeof error?.['message'] === 'string' ? error['message'] : body.trim() === '' ? `HTTP ${status}` : excerpt(body)
  const kind = anthropicErrorKind(code)
  return httpError({ provider: ANTHROPIC, status, headers, message, ...(code === undefined ? {} : { code }), ...(kind === undefined ? {} : { kind }) })
}

/** The Anthropic Messages API as a wire protocol. */
export const anthropicProtocol: WireProtocol<AnthropicSettings> = {
  provider: ANTHROPIC,
  apiKeyEnv: ['ANTHROPIC_API_KEY'],
  requiresApiKey: true,
  buildRequest: (request, settings, apiKey) => {
    const base = (settings.baseUrl ?? ANTHROPIC_BASE_URL).replace(/\/+$/, '')
    const betas = settings.betas ?? []
    return {
      url: `${base}/v1/messages`,
      headers: {
        ...request.options?.headers,
        'anthropic-version': settings.anthropicVersion ?? ANTHROPIC_VERSION,
        ...(betas.length === 0 ? {} : { 'anthropic-beta': betas.join(',') }),
        ...(apiKey === undefined ? {} : { 'x-api-key': apiKey }),
      },
      body: anthropicRequestText(request, settings),
    }
  },
  decoder: () => new AnthropicDecoder(),
  httpError: anthropicHttpError,
}

/** A `StreamFn` calling the Anthropic Messages API with `settings`. */
export function anthropic(settings: AnthropicSettings = {}): StreamFn {
  return streamFnOf(anthropicProtocol, settings)
}

// A response's reader and decoder: their hidden classes outlive a response (see `resident`).
resident(new WireReader(new AnthropicDecoder()))
