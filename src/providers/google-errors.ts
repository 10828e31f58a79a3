/**
 * Gemini's errors: the RPC status of an error object names its kind, a
 * `google.rpc.RetryInfo` detail gives the delay, and an invalid key is
 * `auth` whatever the HTTP status. One reader of the error object serves
 * both an HTTP error response and an error object inside the stream.
 */
import { ProviderError, type ProviderErrorKind } from '../types/provider-error.js'
import { durationMs, excerpt, httpError, parseJsonBody, streamError } from './errors.js'
import { isRecord, stringOf } from './json.js'

/** The provider name in errors and messages. */
export const GOOGLE = 'google'

/** The kind of a Google RPC status (`RESOURCE_EXHAUSTED`, `UNAVAILABLE`...), if it names one. */
export function googleErrorKind(status: string | undefined): ProviderErrorKind | undefined {
  switch (status) {
    case 'RESOURCE_EXHAUSTED':
      return 'rateLimit'
    case 'UNAVAILABLE':
      return 'overloaded'
    case 'INTERNAL':
    case 'UNKNOWN':
    case 'DATA_LOSS':
    case 'ABORTED':
      return 'server'
    case 'DEADLINE_EXCEEDED':
      return 'timeout'
    case 'UNAUTHENTICATED':
    case 'PERMISSION_DENIED':
      return 'auth'
    case 'NOT_FOUND':
      return 'modelNotFound'
    case 'INVALID_ARGUMENT':
    case 'FAILED_PRECONDITION':
    case 'OUT_OF_RANGE':
      return 'invalidRequest'
    default:
      return undefined
  }
}

/** A Google error object (`{code, message, status, details}`), the parts classification needs. */
export interface GoogleErrorInfo {
  readonly status?: string
  readonly message?: string
  /** From a `google.rpc.RetryInfo` detail. */
  readonly retryAfterMs?: number
  /** The API says the key itself is bad, whatever the status (Gemini answers 400 for an invalid key). */
  readonly badKey: boolean
}

/** Reads a Google error object; `undefined` when `value` is not one. */
export function readGoogleError(value: unknown): GoogleErrorInfo | undefined {
  if (!isRecord(value)) return undefined
  let retryAfterMs: number | undefined
  let badKey = false
  for (const detail of Array.isArray(value['details']) ? value['details'] : []) {
    if (!isRecord(detail)) continue
    const type = stringOf(detail['@type']) ?? ''
    if (type.endsWith('google.rpc.RetryInfo')) retryAfterMs ??= durationMs(detail['retryDelay'])
    const reason = stringOf(detail['reason'])
    if (reason === 'API_KEY_INVALID' || reason === 'API_KEY_EXPIRED') badKey = true
  }
  const message = stringOf(value['message'])
  if (message !== undefined && /API key (?:not valid|expired)/i.test(message)) badKey = true
  const status = stringOf(value['status'])
  return {
    ...(status === undefined ? {} : { status }),
    ...(message === undefined ? {} : { message }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    badKey,
  }
}

/** The error an `{"error": {...}}` object in the stream means. */
export function googleStreamError(value: unknown): ProviderError {
  const info = readGoogleError(value) ?? { badKey: false }
  const kind = info.badKey ? 'auth' : (googleErrorKind(info.status) ?? 'server')
  const error = streamError(GOOGLE, info.status, info.message ?? 'unknown error', kind)
  return info.retryAfterMs === undefined ? error : new ProviderError({ ...error.info, retryAfterMs: info.retryAfterMs })
}

/**
 * Classifies an HTTP error response by its status and the body's
 * `{"error": {"code", "message", "status", "details"}}` (also inside a
 * one-element array): the RPC status names the kind (`RESOURCE_EXHAUSTED`
 * is `rateLimit`, `UNAVAILABLE` `overloaded`...), an invalid key is `auth`
 * even though Gemini answers it with 400, token-count phrasings are
 * `contextOverflow`, and a `google.rpc.RetryInfo` detail gives the delay
 * when no `Retry-After` header does.
 */
export function googleErrorFromBody(status: number, headers: Headers, bodyText: string): ProviderError {
  const json = parseJsonBody(bodyText)
  const root = Array.isArray(json) ? json[0] : json
  const info = isRecord(root) ? readGoogleError(root['error']) : undefined
  const message = info?.message ?? (bodyText.trim() === '' ? `HTTP ${status}` : excerpt(bodyText))
  const kind = info?.badKey === true ? 'auth' : googleErrorKind(info?.status)
  return httpError({
    provider: GOOGLE,
    status,
    headers,
    message,
    ...(info?.status === undefined ? {} : { code: info.status }),
    ...(kind === undefined ? {} : { kind }),
    ...(info?.retryAfterMs === undefined ? {} : { bodyRetryAfterMs: info.retryAfterMs }),
  })
}
