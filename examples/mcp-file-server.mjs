// A small MCP file server for examples/mcp-files.ts: read-only access to one
// directory (argv[2]) over stdio, written with the official server SDK.
// Plain JavaScript so that `node` runs it as it is.
import { readdir, readFile, stat } from 'node:fs/promises'
import { relative, resolve, sep } from 'node:path'
import { McpServer } from '@modelcontextprotocol/server'
import { serveStdio } from '@modelcontextprotocol/server/stdio'
import * as z from 'zod/v4'

const root = resolve(process.argv[2] ?? '.')

/** `path` inside the root, or an error result's text. */
function inside(path) {
  const full = resolve(root, path)
  if (full !== root && !full.startsWith(root + sep)) throw new Error(`${path} is outside the served directory`)
  return full
}

const failure = (error) => ({ isError: true, content: [{ type: 'text', text: error instanceof Error ? error.message : String(error) }] })

serveStdio(() => {
  const server = new McpServer({ name: 'files', version: '1.0.0' })
  server.registerTool(
    'list_files',
    { description: 'Lists a directory of the project (default: its root).', inputSchema: z.object({ path: z.string().optional() }) },
    async ({ path = '.' }) => {
      try {
        const entries = await readdir(inside(path), { withFileTypes: true })
        const lines = entries.map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).sort()
        return { content: [{ type: 'text', text: lines.join('\n') }], structuredContent: { entries: lines } }
      } catch (error) {
        return failure(error)
      }
    },
  )
  server.registerTool(
    'read_file',
    { description: 'Reads a UTF-8 file of the project.', inputSchema: z.object({ path: z.string() }) },
    async ({ path }, ctx) => {
      try {
        const full = inside(path)
        const { size } = await stat(full)
        const token = ctx.mcpReq._meta?.progressToken
        if (token !== undefined) await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: 0, total: size, message: `reading ${relative(root, full)} (${size} bytes)` } })
        return { content: [{ type: 'text', text: await readFile(full, { encoding: 'utf8', signal: ctx.mcpReq.signal }) }] }
      } catch (error) {
        return failure(error)
      }
    },
  )
  return server
})
