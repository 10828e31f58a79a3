/**
 * An MCP server of the older HTTP+SSE transport (protocol 2024-11-05), which
 * the v2 server SDK no longer ships: a GET event stream that first names the
 * endpoint to POST messages to, then carries every message of the server. It
 * answers streamable HTTP's POST with 405, as such servers do, so that a
 * client must fall back. The MCP server behind it is the official McpServer.
 */
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { randomUUID } from 'node:crypto'
import { McpServer, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/server'
import * as z from 'zod/v4'

class SseTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  constructor(private readonly res: ServerResponse) {}
  async start(): Promise<void> {}
  async send(message: JSONRPCMessage): Promise<void> {
    this.res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`)
  }
  async close(): Promise<void> {
    this.res.end()
    this.onclose?.()
  }
}

export interface SseServerHandle {
  readonly url: string
  /** The Authorization header of each GET and POST. */
  readonly authorizations: readonly (string | null)[]
  close(): Promise<void>
}

export async function startSseServer(): Promise<SseServerHandle> {
  const sessions = new Map<string, SseTransport>()
  const authorizations: (string | null)[] = []
  const http = createServer((req, res) => {
    authorizations.push(req.headers.authorization ?? null)
    const url = new URL(req.url ?? '/', 'http://localhost')
    if (req.method === 'GET' && url.pathname === '/sse') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
      const id = randomUUID()
      const transport = new SseTransport(res)
      sessions.set(id, transport)
      req.on('close', () => {
        sessions.delete(id)
        transport.onclose?.()
      })
      const server = new McpServer({ name: 'old', version: '0.1.0' })
      server.registerTool('echo', { description: 'Echoes its text', inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({ content: [{ type: 'text', text: `old: ${text}` }] }))
      res.write(`event: endpoint\ndata: /messages?sessionId=${id}\n\n`)
      void server.connect(transport)
      return
    }
    if (req.method === 'POST' && url.pathname === '/messages') {
      const transport = sessions.get(url.searchParams.get('sessionId') ?? '')
      if (transport === undefined) return void res.writeHead(404).end()
      let body = ''
      req.setEncoding('utf8')
      req.on('data', (chunk: string) => (body += chunk))
      req.on('end', () => {
        res.writeHead(202).end('Accepted')
        transport.onmessage?.(JSON.parse(body) as JSONRPCMessage)
      })
      return
    }
    res.writeHead(405).end()
  })
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  const { port } = http.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/sse`,
    authorizations,
    close: async () => {
      http.closeAllConnections()
      await new Promise<void>((resolve) => http.close(() => resolve()))
    },
  }
}
