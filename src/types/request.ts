/** What the loop hands a `streamFn`: everything a provider needs for one call. */
import * as t from 'io-ts'
import type { Observable } from 'rxjs'
import { JsonObject, NonNegativeInteger, struct } from './codec.js'
import { LlmMessage } from './message.js'
import { ModelSpec } from './model.js'
import { ProviderChunk } from './chunk.js'
import { ToolSchema } from './tool.js'

/** Per-call generation options; each provider maps what it supports and ignores the rest. */
export const StreamOptions = t.partial(
  {
    temperature: t.number,
    maxTokens: NonNegativeInteger,
    stopSequences: t.readonlyArray(t.string),
    headers: t.record(t.string, t.string),
    metadata: t.record(t.string, t.unknown),
    cacheRetention: t.keyof({ none: null, short: null, long: null }),
    sessionId: t.string,
    /** Overrides the provider's configured key for this call (set by an API-key resolver). Never part of any event. */
    apiKey: t.string,
    /**
     * Asks for a JSON answer matching `schema` through the API's native
     * structured-output mode (OpenAI `json_schema`, Gemini `responseJsonSchema`).
     * APIs without one ignore it; `Agent.structured` then uses a tool instead.
     */
    responseFormat: t.type({ name: t.string, schema: JsonObject }, 'ResponseFormat'),
  },
  'StreamOptions',
)
export type StreamOptions = t.TypeOf<typeof StreamOptions>

/** One model call. */
export const LlmRequest = struct(
  'LlmRequest',
  { model: ModelSpec, systemPrompt: t.string, messages: t.readonlyArray(LlmMessage), tools: t.readonlyArray(ToolSchema) },
  { options: StreamOptions },
)
export type LlmRequest = t.TypeOf<typeof LlmRequest>

/**
 * A provider, reduced to one function. The call starts on subscribe and is
 * cancelled (HTTP request included) on unsubscribe. Errors may be emitted as
 * Observable errors; the loop turns them into an assistant message with
 * stopReason `error`.
 */
export type StreamFn = (request: LlmRequest) => Observable<ProviderChunk>
