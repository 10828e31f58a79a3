// The MCP server of the MCP bench row: one `echo` tool over stdio (the official server SDK).
import { McpServer } from '@modelcontextprotocol/server'
import { serveStdio } from '@modelcontextprotocol/server/stdio'
import * as z from 'zod/v4'

serveStdio(() => {
  const server = new McpServer({ name: 'bench', version: '1.0.0' })
  server.registerTool('echo', { description: 'Echoes its text', inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({ content: [{ type: 'text', text }] }))
  return server
})
