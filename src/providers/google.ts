/**
 * The Gemini API (`POST /v1beta/models/{model}:streamGenerateContent?alt=sse`)
 * behind the `StreamFn` contract.
 *
 * ```ts
 * const streamFn = google() // key from GEMINI_API_KEY or GOOGLE_API_KEY
 * agentLoop(userMessage('hi'), context, { model: modelSpec('google', 'gemini-2.5-flash'), streamFn })
 * ```
 *
 * Request building is in `google-request.ts`, response decoding in
 * `google-decoder.ts`, errors in `google-errors.ts`, tool schemas in
 * `google-schema.ts`; this file is the wiring. The key travels only in the
 * `x-goog-api-key` header, never in the URL (the API also takes `?key=`,
 * which would leak it into logs and error messages).
 */
import { resident } from '../rx/resident.js'
import type { StreamFn } from '../types/request.js'
import { WireReader, streamFnOf, type ProviderSettings, type WireProtocol } from './protocol.js'
import { GoogleDecoder } from './google-decoder.js'
import { GOOGLE, googleErrorFromBody } from './google-errors.js'
import { googleRequestBody, type GoogleRequestSettings } from './google-request.js'

/** The default API base, up to and including the version. */
export const GOOGLE_BASE_URL = 'https://generativelanguage.googleapis.com/v1beta'

/** Settings of the Gemini adapter; every field is optional. */
export interface GoogleSettings extends ProviderSettings, GoogleRequestSettings {
  /**
   * The API key (sent only as `x-goog-api-key`), or a function resolving it
   * per call. Default: `GEMINI_API_KEY`, else `GOOGLE_API_KEY`.
   */
  readonly apiKey?: ProviderSettings['apiKey']
  /** The API base including its version (default `https://generativelanguage.googleapis.com/v1beta`); for proxies and gateways. */
  readonly baseUrl?: string
  /**
   * How thinking levels are requested: `budget` (`thinkingBudget`, Gemini
   * 2.5), `level` (`thinkingLevel`, Gemini 3), or `auto` (default: by the
   * model id's version).
   */
  readonly thinkingParameter?: GoogleRequestSettings['thinkingParameter']
  /** `openapi` (default: parameters converted to Gemini's schema subset) or `jsonSchema` (sent as `parametersJsonSchema`). */
  readonly schemaMode?: GoogleRequestSettings['schemaMode']
  /** Sent as `safetySettings` (e.g. `[{category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE'}]`). */
  readonly safetySettings?: GoogleRequestSettings['safetySettings']
}

/** The model's path segment: `models/{id}` (an id given as `models/…` or `tunedModels/…` is used as is). */
const modelPath = (modelId: string): string => (modelId.includes('/') ? modelId : `models/${modelId}`)

/** The Gemini API as a wire protocol. */
export const googleProtocol: WireProtocol<GoogleSettings> = {
  provider: GOOGLE,
  apiKeyEnv: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],
  requiresApiKey: true,
  buildRequest: (request, settings, apiKey) => {
    const base = (settings.baseUrl ?? GOOGLE_BASE_URL).replace(/\/+$/, '')
    return {
      url: `${base}/${modelPath(request.model.modelId)}:streamGenerateContent?alt=sse`,
      headers: { ...request.options?.headers, ...(apiKey === undefined ? {} : { 'x-goog-api-key': apiKey }) },
      body: googleRequestBody(request, settings),
    }
  },
  decoder: (request) => new GoogleDecoder(request.model.modelId),
  httpError: googleErrorFromBody,
}

/** A `StreamFn` calling the Gemini API with `settings`. */
export function google(settings: GoogleSettings = {}): StreamFn {
  return streamFnOf(googleProtocol, settings)
}

// A response's reader and decoder: their hidden classes outlive a response (see `resident`).
resident(new WireReader(new GoogleDecoder('')))
