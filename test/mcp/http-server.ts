/**
 * A streamable HTTP MCP server for the tests, on 127.0.0.1:0, written with the
 * official server SDK: `echo`, `progress` and `whoami` (the Authorization
 * header it was called with). A request whose Authorization is present but
 * not `expectedToken` is refused with 401.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server'
import * as z from 'zod/v4'
import { sendWebResponse, toWebRequest } from '../../src/mcp/node-http.js'

export interface HttpServerHandle {
  readonly url: string
  /** Authorization headers seen, one per HTTP request. */
  readonly authorizations: readonly (string | null)[]
  /** The abort reasons `slow` calls saw. */
  readonly cancellations: readonly string[]
  /** Publishes a tools/list_changed (the next listing holds `extra`). */
  addTool(): void
  close(): Promise<void>
}

export async function startHttpServer(expectedToken = 'Bearer sk-test-0123456789abcdef'): Promise<HttpServerHandle> {
  const authorizations: (string | null)[] = []
  const cancellations: string[] = []
  let extra = false
  const handler = createMcpHandler(({ requestInfo }) => {
    const auth = requestInfo?.headers.get('authorization') ?? null
    const server = new McpServer({ name: 'web', version: '1.0.0' })
    server.registerTool('echo', { description: 'Echoes its text', inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({ content: [{ type: 'text', text }] }))
    server.registerTool('whoami', { description: 'The Authorization header' }, async () => ({ content: [{ type: 'text', text: auth ?? '(none)' }] }))
    server.registerTool('progress', { description: 'Progress steps', inputSchema: z.object({ steps: z.number() }) }, async ({ steps }, ctx) => {
      const token = ctx.mcpReq._meta?.progressToken
      for (let i = 1; i <= steps; i++) {
        if (token !== undefined) await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: steps, message: `step ${i}` } })
        await new Promise((r) => setTimeout(r, 10))
      }
      return { content: [{ type: 'text', text: `done ${steps}` }] }
    })
    server.registerTool('slow', { description: 'Waits until cancelled' }, async (ctx) => {
      await new Promise<void>((resolve) => {
        if (ctx.mcpReq.signal.aborted) return resolve()
        ctx.mcpReq.signal.addEventListener('abort', () => resolve(), { once: true })
      })
      cancellations.push(String(ctx.mcpReq.signal.reason))
      return { content: [{ type: 'text', text: 'cancelled' }] }
    })
    if (extra) server.registerTool('extra', { description: 'Added later' }, async () => ({ content: [{ type: 'text', text: 'extra!' }] }))
    return server
  })
  const http = createServer((req, res) => {
    const auth = req.headers.authorization ?? null
    authorizations.push(auth)
    if (auth !== null && auth !== expectedToken) {
      res.writeHead(401, { 'content-type': 'text/plain' }).end(`unauthorized: ${auth}`)
      return
    }
    handler.fetch(toWebRequest(req, res)).then(
      (response) => sendWebResponse(res, response),
      () => res.writeHead(500).end(),
    )
  })
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  const { port } = http.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    authorizations,
    cancellations,
    addTool: () => {
      extra = true
      handler.notify.toolsChanged()
    },
    close: async () => {
      await handler.close()
      http.closeAllConnections()
      await new Promise<void>((resolve) => http.close(() => resolve()))
    },
  }
}
