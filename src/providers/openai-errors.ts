/**
 * OpenAI-style errors, shared by the Chat Completions, compatible and
 * Responses adapters: one table of error codes, one HTTP classifier, one
 * stream-error builder.
 */
import { ProviderError, type ProviderErrorKind } from '../types/provider-error.js'
import { excerpt, httpError, kindOfStatus, parseJsonBody, streamError } from './errors.js'
import type { HttpErrorClassifier } from './transport.js'
import { isRecord } from './json.js'

/** How an error code classifies, when the code says more than the status. */
export interface CodeClass {
  readonly kind: ProviderErrorKind
  readonly retryable?: boolean
}

/** Error codes and types of OpenAI and the servers that copy its error body. */
const errorCodes: Readonly<Record<string, CodeClass>> = {
  rate_limit_exceeded: { kind: 'rateLimit' },
  rate_limit_error: { kind: 'rateLimit' },
  // Billing, not load: waiting does not help.
  insufficient_quota: { kind: 'rateLimit', retryable: false },
  server_error: { kind: 'server' },
  internal_error: { kind: 'server' },
  service_unavailable: { kind: 'overloaded' },
  server_is_overloaded: { kind: 'overloaded' },
  overloaded_error: { kind: 'overloaded' },
  engine_overloaded: { kind: 'overloaded' },
  slow_down: { kind: 'overloaded' },
  context_length_exceeded: { kind: 'contextOverflow' },
  string_above_max_length: { kind: 'contextOverflow' },
  invalid_prompt: { kind: 'invalidRequest' },
  invalid_request_error: { kind: 'invalidRequest' },
  invalid_api_key: { kind: 'auth' },
  invalid_authentication: { kind: 'auth' },
  authentication_error: { kind: 'auth' },
  permission_error: { kind: 'auth' },
  unsupported_country_region_territory: { kind: 'auth' },
  model_not_found: { kind: 'modelNotFound' },
  vector_store_timeout: { kind: 'timeout' },
}

/**
 * The class of an error code (or type). Image errors (`invalid_image`,
 * `image_too_large`, …) and other `invalid_*` codes are invalid requests;
 * unknown codes are `undefined`.
 */
export function openaiErrorClass(code: string | undefined): CodeClass | undefined {
  if (code === undefined || code === '') return undefined
  if (Object.hasOwn(errorCodes, code)) return errorCodes[code]
  if (/(^|_)image(_|$)/.test(code) || code.startsWith('invalid_')) return { kind: 'invalidRequest' }
  return undefined
}

/** `error` with `known`'s retry verdict, when the code has one and still names the kind. */
function withRetryable(error: ProviderError, known: CodeClass | undefined): ProviderError {
  return known?.retryable === undefined || error.info.kind !== known.kind ? error : new ProviderError({ ...error.info, retryable: known.retryable })
}

/**
 * An error reported inside a stream, classified by its code (an OpenRouter
 * upstream error carries an HTTP status there instead).
 */
export function openaiStreamError(provider: string, code: string | number | undefined, message: string, type?: string): ProviderError {
  if (typeof code === 'number') return streamError(provider, String(code), message, kindOfStatus(code))
  const named = code === undefined || code === '' ? type : code
  const known = openaiErrorClass(named) ?? openaiErrorClass(type)
  return withRetryable(streamError(provider, named, message, known?.kind), known)
}

/**
 * Classifies an HTTP error response by its status and the body's
 * `{"error": {"message", "type", "code"}}`. A specific code refines the
 * status (`insufficient_quota` is a rate limit that waiting does not fix,
 * `context_length_exceeded` an overflow); the generic type decides only when
 * the status says nothing (a 404 with `invalid_request_error` stays
 * `modelNotFound`), and a 5xx keeps its own kind. Some servers send
 * `{"error": "text"}`, a top-level `message` (vLLM) or `detail` (FastAPI):
 * their text is the message.
 */
export function openaiHttpErrorClassifier(provider: string): HttpErrorClassifier {
  return (status, headers, body) => {
    const json = parseJsonBody(body)
    const raw = isRecord(json) ? json['error'] : undefined
    const error = isRecord(raw) ? raw : undefined
    const rawCode = error?.['code']
    const code = typeof rawCode === 'string' && rawCode !== '' ? rawCode : undefined
    const type = typeof error?.['type'] === 'string' ? error['type'] : undefined
    const top = isRecord(json) ? (json['message'] ?? json['detail']) : undefined
    const message =
      typeof error?.['message'] === 'string' && error['message'] !== ''
        ? error['message']
        : typeof raw === 'string'
          ? raw
          : typeof top === 'string'
            ? top
            : body.trim() === ''
              ? `HTTP ${status}`
              : excerpt(body)
    const known = status >= 500 ? undefined : (openaiErrorClass(code) ?? (kindOfStatus(status) === 'unknown' ? openaiErrorClass(type) : undefined))
    const named = code ?? type
    return withRetryable(
      httpError({
        provider,
        status,
        headers,
        message,
        ...(named === undefined ? {} : { code: named }),
        ...(known === undefined ? {} : { kind: known.kind }),
      }),
      openaiErrorClass(named),
    )
  }
}
