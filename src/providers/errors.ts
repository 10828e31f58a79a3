/**
 * Classifying provider failures by structure: HTTP status first, then the
 * provider's error type or code, and only then known phrasings (context
 * overflow has no dedicated status anywhere).
 */
import { ProviderError, type ProviderErrorKind } from '../types/provider-error.js'

/**
 * Phrasings of "the prompt does not fit", per provider and server. Kept in one
 * list so that every adapter recognizes every server's wording.
 */
const overflowPatterns: readonly RegExp[] = [
  /prompt is too long/i, // Anthropic
  /exceeds? the context window/i, // Anthropic (newer), OpenAI Responses
  /context[_ ]length[_ ]exceeded/i, // OpenAI code
  /maximum context length/i, // OpenAI, vLLM, DeepSeek
  /input token count .* exceeds the maximum/i, // Google
  /exceeds the maximum number of tokens/i, // Google
  /request exceeds the available context size/i, // llama.cpp server
  /prompt too long/i, // Ollama
  /too large for model with \d+ maximum context length/i, // Mistral
  /reduce the length of the messages/i, // Groq, OpenAI
  /maximum prompt length/i, // xAI
  /context window (?:of|is) .*exceeded/i,
  /context(?: window| length)? exceeded/i, // llama.cpp server, LM Studio, gateways ("Context window exceeded")
  /input is too long/i, // Amazon Bedrock ("Input is too long for requested model")
  /tokens? exceed(?:s|ed)? .*(?:limit|context)/i,
]

/** Whether `text` says the prompt did not fit the model's context window. */
export function isContextOverflowText(text: string): boolean {
  return overflowPatterns.some((p) => p.test(text))
}

/** The kind an HTTP status means, before looking at the body. */
export function kindOfStatus(status: number): ProviderErrorKind {
  if (status === 401 || status === 403) return 'auth'
  if (status === 404) return 'modelNotFound'
  if (status === 408) return 'timeout'
  if (status === 413) return 'contextOverflow'
  if (status === 429) return 'rateLimit'
  if (status === 529) return 'overloaded'
  if (status === 503) return 'overloaded'
  if (status >= 500) return 'server'
  if (status === 400 || status === 409 || status === 422) return 'invalidRequest'
  return 'unknown'
}

/**
 * The delay a response asks for, in milliseconds: `retry-after-ms`, then
 * `Retry-After` as seconds or as an HTTP date (relative to `now`).
 */
export function retryAfterMs(headers: Headers, now: number = Date.now()): number | undefined {
  const ms = headers.get('retry-after-ms')
  if (ms !== null && ms.trim() !== '' && Number.isFinite(Number(ms))) return Math.max(0, Number(ms))
  const value = headers.get('retry-after')
  if (value === null || value.trim() === '') return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000)
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/** Parses a protobuf duration such as `"34.4s"` (Google RetryInfo) into milliseconds. */
export function durationMs(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined
  const m = /^(\d+(?:\.\d+)?)s$/.exec(value.trim())
  return m === null ? undefined : Math.round(Number(m[1]) * 1000)
}

/** The JSON of a body, or `undefined` when it is not JSON. */
export function parseJsonBody(body: string): unknown {
  try {
    return JSON.parse(body)
  } catch {
    return undefined
  }
}

/** A short, single-line excerpt of an error body, for messages. */
export function excerpt(text: string, max = 300): string {
  const line = text.replace(/\s+/g, ' ').trim()
  return line.length > max ? `${line.slice(0, max)}…` : line
}

/** What an HTTP error response says, reduced to the parts classification needs. */
export interface HttpErrorParts {
  readonly provider: string
  readonly status: number
  readonly headers: Headers
  /** The provider's error type or code, if the body had one. */
  readonly code?: string
  /** The provider's message, if the body had one; else the body's excerpt. */
  readonly message: string
  /** A kind the body states outright (e.g. Anthropic `overloaded_error`), overriding the status. */
  readonly kind?: ProviderErrorKind
  /** A delay the body states (Google RetryInfo), when no header gave one. */
  readonly bodyRetryAfterMs?: number
  /** Whether the server said outright to retry or not (`x-should-retry`). */
  readonly retryable?: boolean
}

/** The classified error of an HTTP error response. */
export function httpError(parts: HttpErrorParts, now: number = Date.now()): ProviderError {
  const overflow = isContextOverflowText(parts.message) || (parts.code !== undefined && isContextOverflowText(parts.code))
  const kind: ProviderErrorKind = overflow ? 'contextOverflow' : (parts.kind ?? kindOfStatus(parts.status))
  const delay = retryAfterMs(parts.headers, now) ?? parts.bodyRetryAfterMs
  const should = parts.headers.get('x-should-retry')
  const retryable = parts.retryable ?? (should === 'true' ? true : should === 'false' ? false : undefined)
  return ProviderError.of(kind, parts.provider, `${parts.provider} ${parts.status}${parts.code === undefined ? '' : ` ${parts.code}`}: ${parts.message}`, {
    status: parts.status,
    ...(parts.code === undefined ? {} : { code: parts.code }),
    ...(delay === undefined ? {} : { retryAfterMs: delay }),
    ...(retryable === undefined ? {} : { retryable }),
  })
}

/** A failure reported inside a stream (an `error` event), classified by its type or code. */
export function streamError(provider: string, code: string | undefined, message: string, kind?: ProviderErrorKind): ProviderError {
  const resolved: ProviderErrorKind = isContextOverflowText(message) || (code !== undefined && isContextOverflowText(code)) ? 'contextOverflow' : (kind ?? 'server')
  return ProviderError.of(resolved, provider, `${provider} stream error${code === undefined ? '' : ` ${code}`}: ${message}`, code === undefined ? {} : { code })
}

/** The stream broke the provider's own protocol (bad JSON, an impossible event). Not retried: the same request would likely do the same. */
export function protocolError(provider: string, what: string): ProviderError {
  return ProviderError.of('protocol', provider, `${provider} sent a malformed stream: ${what}`)
}

/** The body ended before the response was complete. Transient: the connection most likely dropped. */
export function truncatedError(provider: string, what = 'the stream ended before the response was complete'): ProviderError {
  return ProviderError.of('network', provider, `${provider}: ${what}`)
}

/** Parses one SSE event's JSON, or fails with a protocol error that says where. */
export function parseEventJson(provider: string, data: string, event?: string): unknown {
  try {
    return JSON.parse(data)
  } catch (e) {
    throw protocolError(provider, `${event === undefined ? 'an event' : `a '${event}' event`} is not valid JSON (${(e as Error).message}): ${excerpt(data, 120)}`)
  }
}

/** A network failure in words, without the request (its URL or headers may hold a key). */
export function networkError(provider: string, error: unknown, phase: string): ProviderError {
  // `fetch` rejects with a TypeError whose cause is the socket's error; `node:http` gives that error itself.
  const failure = error as { cause?: { code?: unknown; message?: unknown }; code?: unknown; message?: unknown } | null | undefined
  const cause = failure?.cause ?? failure
  const code = typeof cause?.code === 'string' ? cause.code : undefined
  const detail = code ?? (typeof cause?.message === 'string' ? cause.message : error instanceof Error ? error.message : String(error))
  return ProviderError.of('network', provider, `${provider}: the connection failed ${phase} (${detail})`, code === undefined ? {} : { code })
}

/**
 * The `invalidRequest` error of a request that could not be built or
 * serialized (a value nested deeper than the stack, a cycle, a `BigInt`).
 * Never retried: the same transcript fails the same way.
 */
export function unserializableError(provider: string, error: unknown): ProviderError {
  const message = error instanceof Error ? error.message : String(error)
  const why = error instanceof RangeError ? `a value is nested too deep (${message})` : message
  return ProviderError.of('invalidRequest', provider, `${provider}: the request body could not be serialized: ${why}`, { retryable: false })
}

/** What a `200` whose body is not an event stream is, quoting the start of the body. */
export function notEventStreamError(provider: string, status: number, type: string | null, body: string, quoted: number): ProviderError {
  const quote = excerpt(body, quoted)
  return ProviderError.of('protocol', provider, `${provider}: expected an event stream (text/event-stream), got HTTP ${status} ${type}${quote === '' ? '' : `: ${quote}`}`, {
    status,
    retryable: false,
  })
}
