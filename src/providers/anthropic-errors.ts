/**
 * Anthropic's provider name, its error types in the runtime's kinds, and the
 * error of an `error` event.
 */
import type { ProviderError, ProviderErrorKind } from '../types/provider-error.js'
import { streamError } from './errors.js'
import { stringOf, type Json } from './json.js'

/** The provider name this adapter reports in errors and messages. */
export const ANTHROPIC = 'anthropic'

/**
 * Anthropic error types → kinds. `invalid_request_error` is checked for
 * context-overflow phrasing by the shared classifier.
 */
const errorKinds: Readonly<Record<string, ProviderErrorKind>> = {
  overloaded_error: 'overloaded',
  rate_limit_error: 'rateLimit',
  api_error: 'server',
  authentication_error: 'auth',
  permission_error: 'auth',
  not_found_error: 'modelNotFound',
  invalid_request_error: 'invalidRequest',
  request_too_large: 'contextOverflow',
  timeout_error: 'timeout',
}

/** The kind an Anthropic error `type` names, if it is one this adapter knows. */
export function anthropicErrorKind(type: string | undefined): ProviderErrorKind | undefined {
  return type !== undefined && Object.hasOwn(errorKinds, type) ? errorKinds[type] : undefined
}

/** The error of an `error` event (its `error` object). */
export function anthropicStreamError(error: Json | undefined): ProviderError {
  const code = stringOf(error?.['type'])
  const message = stringOf(error?.['message']) ?? 'unknown error'
  return streamError(ANTHROPIC, code, message, anthropicErrorKind(code))
}
