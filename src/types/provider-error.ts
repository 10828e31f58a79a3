/**
 * What went wrong in a model call, classified by structure (HTTP status,
 * the provider's error type or code) so that retries and fallbacks can act on
 * it without reading prose.
 */
import * as t from 'io-ts'
import { NonNegativeInteger, NonNegativeNumber, struct } from './codec.js'

/** The classes of provider failure. */
export const ProviderErrorKind = t.keyof(
  {
    /** Missing, invalid or revoked API key; permission denied. */
    auth: null,
    /** Too many requests or tokens for the account's quota (HTTP 429). */
    rateLimit: null,
    /** The provider is at capacity (Anthropic 529, Google 503 "overloaded"). */
    overloaded: null,
    /** The provider failed (HTTP 5xx, a mid-stream server error). */
    server: null,
    /** The connection failed or broke (DNS, reset, refused, truncated body). */
    network: null,
    /** The connect, idle or total timeout fired (the total one is not retried). */
    timeout: null,
    /** The prompt does not fit the model's context window. */
    contextOverflow: null,
    /** The request was rejected as malformed (HTTP 400/422), or could not be serialized. */
    invalidRequest: null,
    /** The model does not exist or the account cannot use it. */
    modelNotFound: null,
    /** The stream itself was malformed (bad JSON, an event out of order, an oversized event, a `200` that is not an event stream). */
    protocol: null,
    /** Anything else. */
    unknown: null,
  },
  'ProviderErrorKind',
)
export type ProviderErrorKind = t.TypeOf<typeof ProviderErrorKind>

/** A provider failure as data: what crosses into events and transcripts. */
export const ProviderErrorInfo = struct(
  'ProviderErrorInfo',
  {
    kind: ProviderErrorKind,
    /** Whether trying the same request again may succeed. */
    retryable: t.boolean,
    /** Human-readable, without secrets (the request's key and auth values are redacted). */
    message: t.string,
    /** Which provider said it (e.g. `anthropic`). */
    provider: t.string,
  },
  {
    status: NonNegativeInteger,
    /** The provider's own error type or code (e.g. `overloaded_error`, `RESOURCE_EXHAUSTED`). */
    code: t.string,
    /** How long the server asked us to wait (Retry-After, Google RetryInfo). */
    retryAfterMs: NonNegativeNumber,
  },
)
export type ProviderErrorInfo = t.TypeOf<typeof ProviderErrorInfo>

/** Kinds worth retrying when the provider did not say otherwise. */
const retryableKinds: ReadonlySet<ProviderErrorKind> = new Set(['rateLimit', 'overloaded', 'server', 'network', 'timeout'])

/** Whether `kind` is transient by default. */
export const isTransientKind = (kind: ProviderErrorKind): boolean => retryableKinds.has(kind)

/** The error a provider's stream fails with. `info` is its serializable form. */
export class ProviderError extends Error {
  override readonly name = 'ProviderError'
  constructor(readonly info: ProviderErrorInfo) {
    super(info.message)
  }

  get kind(): ProviderErrorKind {
    return this.info.kind
  }

  get retryable(): boolean {
    return this.info.retryable
  }

  /** A classified error; `retryable` defaults from the kind. */
  static of(
    kind: ProviderErrorKind,
    provider: string,
    message: string,
    more: Partial<Omit<ProviderErrorInfo, 'kind' | 'provider' | 'message'>> = {},
  ): ProviderError {
    return new ProviderError({ kind, provider, message, retryable: more.retryable ?? isTransientKind(kind), ...stripUndefined(more) })
  }
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T
}

/** The classified info of `error`, if it is a provider error. */
export function providerErrorInfo(error: unknown): ProviderErrorInfo | undefined {
  return error instanceof ProviderError ? error.info : undefined
}
