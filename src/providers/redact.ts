/**
 * Keeping credentials out of what a server says back. A server may echo the
 * API key in an error body ("Incorrect API key provided: sk-…"), and error
 * messages travel into events, results, state and checkpoints. The secrets of
 * one request — the resolved key and every credential-shaped value of its
 * auth headers and query — are replaced with `[redacted]` in every error an
 * adapter emits, once, where the adapter meets the transport.
 *
 * Streamed content (text, tool arguments) is not scanned: it is the model's
 * output, and scanning every delta would put work on the per-delta path.
 */
import { ProviderError } from '../types/provider-error.js'
import type { HttpRequest } from './transport.js'

/** What a secret is replaced with. */
export const REDACTED = '[redacted]'

/** Headers whose value is a credential (lower case). */
const credentialHeaders: ReadonlySet<string> = new Set(['authorization', 'proxy-authorization', 'x-api-key', 'x-goog-api-key', 'api-key'])

/** Query parameters whose value is a credential. */
const credentialParams: readonly string[] = ['key', 'api_key', 'api-key', 'apikey', 'access_token']

/**
 * Shorter values are not treated as secrets: a placeholder key such as
 * `none` or `EMPTY` (local servers) would otherwise garble every message.
 */
const minSecretLength = 8

/**
 * The secrets of one request: `apiKey`, the values of its credential headers
 * (`Authorization: Bearer <token>` gives the token and the whole value), and
 * credential query parameters of its URL. Longest first, so that a secret
 * containing another is replaced whole.
 */
export function secretsOf(apiKey: string | undefined, request: HttpRequest): readonly string[] {
  const found = new Set<string>()
  const add = (value: string | null | undefined): void => {
    const v = value?.trim()
    if (v === undefined || v.length < minSecretLength) return
    found.add(v)
    const encoded = encodeURIComponent(v)
    if (encoded !== v) found.add(encoded)
  }
  add(apiKey)
  for (const [name, value] of Object.entries(request.headers)) {
    if (!credentialHeaders.has(name.toLowerCase())) continue
    add(value)
    const scheme = /^\S+\s+(\S+)$/.exec(value.trim())
    if (scheme !== null) add(scheme[1])
  }
  try {
    const url = new URL(request.url)
    for (const name of credentialParams) add(url.searchParams.get(name))
  } catch {
    // Not a URL the client could send either; nothing to take from it.
  }
  return [...found].sort((a, b) => b.length - a.length)
}

/**
 * `text` without `secrets`: each occurrence, and a secret's beginning cut
 * off by an excerpt (before a `…` or at the end of the text), becomes
 * `[redacted]`.
 */
export function redactText(text: string, secrets: readonly string[]): string {
  let out = text
  for (const secret of secrets) {
    if (out.includes(secret)) out = out.split(secret).join(REDACTED)
    out = redactCutPrefix(out, secret)
  }
  return out
}

/** Replaces a beginning of `secret` (at least `minSecretLength` long) that ends where the text was cut. */
function redactCutPrefix(text: string, secret: string): string {
  let out = text
  const cuts: number[] = []
  for (let i = out.indexOf('…'); i !== -1; i = out.indexOf('…', i + 1)) cuts.push(i)
  cuts.push(out.length)
  // From the last cut back: a replacement leaves the earlier positions as they were.
  for (let c = cuts.length - 1; c >= 0; c--) {
    const cut = cuts[c]!
    for (let k = Math.min(secret.length - 1, cut); k >= minSecretLength; k--) {
      if (out.startsWith(secret.slice(0, k), cut - k)) {
        out = out.slice(0, cut - k) + REDACTED + out.slice(cut)
        break
      }
    }
  }
  return out
}

/**
 * `error` with `secrets` redacted from everything it says: a
 * `ProviderError`'s message and code, another error's message. Errors that
 * hold no secret are returned as they are.
 */
export function redactError(error: unknown, secrets: readonly string[]): unknown {
  if (secrets.length === 0) return error
  if (error instanceof ProviderError) {
    const { info } = error
    const message = redactText(info.message, secrets)
    const code = info.code === undefined ? undefined : redactText(info.code, secrets)
    if (message === info.message && code === info.code) return error
    return new ProviderError({ ...info, message, ...(code === undefined ? {} : { code }) })
  }
  if (error instanceof Error) {
    const message = redactText(error.message, secrets)
    if (message === error.message) return error
    const clean = new Error(message)
    clean.name = error.name
    return clean
  }
  return typeof error === 'string' ? redactText(error, secrets) : error
}
