// An MCP server over stdio with one tool per behaviour the client must map:
// every content kind, errors, progress, cancellation, list changes, a crash.
// Started as a child process by test/mcp/client.test.ts.
import { McpServer } from '@modelcontextprotocol/server'
import { serveStdio } from '@modelcontextprotocol/server/stdio'
import * as z from 'zod/v4'

const cancellations = []
const added = new Map()
const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII='

function build() {
  const server = new McpServer({ name: 'kitchen', version: '1.0.0' })
  server.registerTool('echo', { description: 'Echoes its text', inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({
    content: [{ type: 'text', text }],
  }))
  server.registerTool('image', { description: 'One red pixel' }, async () => ({
    content: [{ type: 'image', data: PIXEL, mimeType: 'image/png' }],
  }))
  server.registerTool('resource', { description: 'An embedded resource and a link' }, async () => ({
    content: [
      { type: 'resource', resource: { uri: 'file:///notes.txt', mimeType: 'text/plain', text: 'note body' } },
      { type: 'resource', resource: { uri: 'file:///blob.bin', mimeType: 'application/octet-stream', blob: 'AAEC' } },
      { type: 'resource_link', uri: 'file:///big.log', name: 'big.log', mimeType: 'text/plain' },
    ],
  }))
  server.registerTool(
    'structured',
    { description: 'Structured output', outputSchema: z.object({ sum: z.number() }), inputSchema: z.object({ a: z.number(), b: z.number() }) },
    async ({ a, b }) => ({ content: [], structuredContent: { sum: a + b } }),
  )
  server.registerTool('fail', { description: 'Always an error result' }, async () => ({
    isError: true,
    content: [{ type: 'text', text: 'the disk is on fire' }],
  }))
  server.registerTool('progress', { description: 'Three progress steps', inputSchema: z.object({ steps: z.number() }) }, async ({ steps }, ctx) => {
    const token = ctx.mcpReq._meta?.progressToken
    for (let i = 1; i <= steps; i++) {
      if (token !== undefined)
        await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: steps, message: `step ${i}` } })
      await new Promise((r) => setTimeout(r, 20))
    }
    return { content: [{ type: 'text', text: `done ${steps}` }] }
  })
  server.registerTool('slow', { description: 'Says it is waiting (as progress), then waits until cancelled' }, async (ctx) => {
    const token = ctx.mcpReq._meta?.progressToken
    if (token !== undefined) await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: 0, message: 'waiting' } })
    await new Promise((resolve) => {
      if (ctx.mcpReq.signal.aborted) return resolve()
      ctx.mcpReq.signal.addEventListener('abort', () => resolve(), { once: true })
    })
    cancellations.push(String(ctx.mcpReq.signal.reason))
    return { content: [{ type: 'text', text: 'cancelled' }] }
  })
  server.registerTool('cancellations', { description: 'The cancellations seen so far' }, async () => ({
    content: [{ type: 'text', text: JSON.stringify(cancellations) }],
  }))
  server.registerTool('crash', { description: 'Exits mid-call' }, async () => {
    setTimeout(() => process.exit(3), 10)
    return new Promise(() => {})
  })
  server.registerTool('pid', { description: 'The server process id' }, async () => ({ content: [{ type: 'text', text: String(process.pid) }] }))
  server.registerTool('env', { description: 'An environment variable', inputSchema: z.object({ name: z.string() }) }, async ({ name }) => ({
    content: [{ type: 'text', text: process.env[name] ?? '(unset)' }],
  }))
  server.registerTool('remove_tool', { description: 'Removes a tool added by add_tool', inputSchema: z.object({ name: z.string() }) }, async ({ name }) => {
    added.get(name)?.remove()
    added.delete(name)
    return { content: [{ type: 'text', text: `removed ${name}` }] }
  })
  server.registerTool('add_tool', { description: 'Registers a tool named by its argument', inputSchema: z.object({ name: z.string() }) }, async ({ name }) => {
    const handle = server.registerTool(name, { description: `Added at run time` }, async () => ({ content: [{ type: 'text', text: `I am ${name}` }] }))
    added.set(name, handle)
    return { content: [{ type: 'text', text: `added ${name}` }] }
  })
  return server
}

serveStdio(build)
