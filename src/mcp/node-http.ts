/**
 * node:http requests as web-standard `Request`s and back: what the MCP SDK's
 * `createMcpHandler` speaks. A client that goes away aborts the request's
 * signal and stops the response stream.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { Readable } from 'node:stream'

/** `req` as a `Request` (its body streamed, not buffered); `signal` aborts when the client goes away. */
export function toWebRequest(req: IncomingMessage, res: ServerResponse): Request {
  const headers = new Headers()
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!)
  const method = req.method ?? 'GET'
  const controller = new AbortController()
  res.on('close', () => controller.abort())
  const host = headers.get('host') ?? 'localhost'
  const init: RequestInit & { duplex?: 'half' } = { method, headers, signal: controller.signal }
  if (method !== 'GET' && method !== 'HEAD') {
    init.body = Readable.toWeb(req) as ReadableStream<Uint8Array>
    init.duplex = 'half'
  }
  return new Request(new URL(req.url ?? '/', `http://${host}`), init)
}

/** Writes `response` to `res`, streaming its body chunk by chunk (SSE included). */
export async function sendWebResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string | string[]> = {}
  response.headers.forEach((value, name) => {
    headers[name] = value
  })
  const cookies = response.headers.getSetCookie()
  if (cookies.length > 0) headers['set-cookie'] = cookies
  res.writeHead(response.status, response.statusText, headers)
  if (response.body === null) {
    res.end()
    return
  }
  const reader = response.body.getReader()
  res.on('close', () => void reader.cancel().catch(() => undefined))
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      res.write(value)
    }
  } catch {
    // The client went away or the body failed: nothing more to write.
  } finally {
    res.end()
  }
}
