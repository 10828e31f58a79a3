/**
 * What a request is, the transport's options (public, re-exported by http.ts),
 * and which transport a call uses: `fetch`, or a POST over `node:http`
 * (node-http.ts).
 *
 * `node:http` when the settings pass no `fetch` AND `globalThis.fetch` is
 * still Node's own; the given or patched `fetch` otherwise, so that a test
 * double, an interceptor (msw) or a proxy set through a replaced `fetch`
 * keeps working. The check runs per request: a `fetch` patched after this
 * module loaded is honoured from its next request.
 *
 * Why: every `fetch` goes through undici's WHATWG layers (a Request, a
 * Response, a ReadableStream and its reader, a promise per body chunk), once
 * per request, and a tool turn is a request. WIRE bench (bench/wire: 50 tool
 * turns = 51 requests), client CPU per delta over the floor's (`fetch` +
 * eventsource-parser), `worker.mjs … 5`, 2 rounds alternating base / this /
 * floor on a shared 2-core host: Anthropic tools 1.47-1.50 → 1.14-1.34×,
 * OpenAI tools 1.46-1.61 → 0.82-1.07×; the adapter's transport self time in
 * `--cpu-prof` (Anthropic tools) 0.39 s against the floor's 0.96 s.
 */

import type { SchedulerLike } from 'rxjs'
import type { ProviderError } from '../types/provider-error.js'
import { defaultMaxEventSize } from './sse.js'

/** One HTTP request, ready to send. */
export interface HttpRequest {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  /**
   * Serialized as JSON (by `streamFnOf`, before anything is sent); a built-in
   * builder may hand it over already serialized, as a `JsonText` (whose
   * `toJSON` gives the value back).
   */
  readonly body: unknown
}

/** How the transport behaves; every field has a default. */
export interface TransportOptions {
  /**
   * The `fetch` to send requests with. Default: a POST over `node:http` /
   * `node:https` while `globalThis.fetch` is Node's own, else
   * `globalThis.fetch` (a patched one is honoured). Pass
   * `fetch: globalThis.fetch` to use undici's `fetch` anyway (its redirects,
   * compression, global dispatcher and proxy settings).
   */
  readonly fetch?: typeof globalThis.fetch
  /** Time allowed until the response headers arrive (default 60,000 ms). */
  readonly connectTimeoutMs?: number
  /**
   * Longest silence allowed between two body chunks (default 120,000 ms).
   * Any bytes count, keep-alive pings included: this catches a dead
   * connection; a server that pings forever is ended by `totalTimeoutMs`.
   */
  readonly idleTimeoutMs?: number
  /**
   * Time allowed for the whole call, from sending the request to the end of
   * the body (default 1,800,000 ms: 30 minutes, since a long answer at a slow
   * model's pace legitimately takes more than 10). When it fires, the call
   * fails with a `timeout` error that is not retried. `Infinity` turns it off.
   */
  readonly totalTimeoutMs?: number
  /**
   * The largest server-sent event accepted, in characters of the decoded text
   * (≈ bytes for the ASCII JSON providers send; default 16 MiB). A larger
   * one — or an endless line — fails the call with a `protocol` error, and
   * the body is not read further.
   */
  readonly maxEventSize?: number
  /** Where the timeouts run (default `asyncScheduler`). */
  readonly scheduler?: SchedulerLike
}

/** The defaults of {@link TransportOptions}. */
export const transportDefaults = {
  connectTimeoutMs: 60_000,
  idleTimeoutMs: 120_000,
  totalTimeoutMs: 1_800_000,
  maxEventSize: defaultMaxEventSize,
} as const

/** Turns a non-2xx response into a classified error. */
export type HttpErrorClassifier = (status: number, headers: Headers, body: string) => ProviderError

/** `globalThis.fetch` as this module found it. */
const loadedFetch: typeof globalThis.fetch | undefined = typeof globalThis.fetch === 'function' ? globalThis.fetch : undefined

/**
 * Whether `fetch` is Node's own: its source is Node's lazy loader of undici
 * (Node 18–24) or native code. A `fetch` patched before this module loaded
 * (whose source is the patch's) fails the test, and is then honoured; a Node
 * whose `fetch` reads otherwise falls back to `fetch`, which is always correct.
 */
function isNodeFetch(fetch: typeof globalThis.fetch | undefined): boolean {
  if (fetch === undefined || fetch.name !== 'fetch') return false
  const source = Function.prototype.toString.call(fetch)
  return /undici/i.test(source) || /\{\s*\[native code\]\s*\}\s*$/.test(source)
}

/** Whether the module found Node's own `fetch` (and runs in Node, with `node:http`). */
const nodeFetchAtLoad = typeof process !== 'undefined' && process.versions?.node !== undefined && isNodeFetch(loadedFetch)

/**
 * The `fetch` a call must use, or `undefined` for `node:http`: `option` if
 * set, else `globalThis.fetch` unless it is still the one Node started with.
 */
export function fetchFor(option: typeof globalThis.fetch | undefined): typeof globalThis.fetch | undefined {
  if (option !== undefined) return option
  const current = globalThis.fetch
  return nodeFetchAtLoad && current === loadedFetch ? undefined : current
}
