/**
 * The POST of the default transport over `node:http` / `node:https` (see
 * transport.ts for when it is used instead of `fetch`): the request, the
 * response's headers as a `Headers` for an error classifier, and the start
 * of an error body. The body of a good response is read by `HttpCall`
 * (http.ts) from the `IncomingMessage` itself.
 *
 * No redirect is followed, no compression is asked for, and the requests go
 * through `http.globalAgent` / `https.globalAgent` (keep-alive since Node 19),
 * not undici's global dispatcher.
 *
 * Internal: not exported from the package.
 */
import http, { type ClientRequest, type IncomingMessage, type RequestOptions } from 'node:http'
import https from 'node:https'
import { urlToHttpOptions } from 'node:url'

/** A URL's request options (what `http.request` makes of a `URL`), and whether it is https. */
interface Target {
  readonly https: boolean
  readonly options: RequestOptions
}

/** The targets of the URLs posted to lately: an adapter posts to one URL, over and over. */
const targets = new Map<string, Target>()
const maxTargets = 32

/**
 * `url` parsed, as `http.request` would parse it, once per URL: parsing it
 * and turning it into options was about a tenth of the POST's own CPU in
 * `perf` of WIRE Anthropic tools (`URL`, `urlToHttpOptions`, ada).
 */
function targetOf(url: string): Target {
  const known = targets.get(url)
  if (known !== undefined) return known
  const parsed = new URL(url)
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new TypeError(`unsupported protocol ${parsed.protocol}`)
  const target: Target = { https: parsed.protocol === 'https:', options: urlToHttpOptions(parsed) }
  if (targets.size >= maxTargets) targets.clear()
  targets.set(url, target)
  return target
}

/**
 * Sends `body` to `url` and returns the request; its `response` and `error`
 * events are the caller's. The modules are read at call time, so that a test
 * library patching `http.request` (nock) sees the call. Throws for a URL that
 * cannot be parsed or is not http(s), as `fetch` rejects for one.
 */
export function postOverNode(url: string, headers: Readonly<Record<string, string>>, body: string): ClientRequest {
  const target = targetOf(url)
  const request = (target.https ? https : http).request({ ...target.options, method: 'POST', headers: { ...headers, 'content-length': Buffer.byteLength(body) } })
  request.end(body)
  return request
}

/** A response's headers as a `Headers` (built only for an error response, for its classifier). */
export function headersOf(response: IncomingMessage): Headers {
  const headers = new Headers()
  for (const [name, value] of Object.entries(response.headers)) {
    if (typeof value === 'string') headers.append(name, value)
    else if (value !== undefined) for (const one of value) headers.append(name, one)
  }
  return headers
}

/**
 * Up to `max` characters of a body, then stops reading (the rest may never
 * end) and closes the connection. A read that fails ends it with what was
 * read so far, as `readStart` does for a `fetch` body (http.ts).
 */
export function readNodeStart(response: IncomingMessage, max: number): Promise<string> {
  return new Promise((resolve) => {
    const decoder = new TextDecoder()
    let text = ''
    const finish = (rest: string): void => {
      response.removeListener('data', data)
      resolve((text + rest).slice(0, max))
    }
    const data = (chunk: Buffer): void => {
      text += decoder.decode(chunk, { stream: true })
      if (text.length >= max) {
        finish('')
        response.destroy()
      }
    }
    response.on('data', data)
    response.once('end', () => finish(decoder.decode()))
    response.once('error', () => finish(''))
    response.once('close', () => finish(''))
  })
}
