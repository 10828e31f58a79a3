/**
 * `serveMcp`: rxagent tools, and an Agent as one tool, served as an MCP
 * server over stdio (this process's stdin and stdout) or streamable HTTP
 * (a node:http server).
 *
 * A call decodes its arguments with the tool's own decoder (problems come
 * back as an error result the caller's model can read), runs the tool as the
 * loop does (`runTool`: timeouts, thrown errors as error results), sends each
 * progress update as an MCP progress notification when the caller sent a
 * progress token, and aborts the tool when the caller cancels.
 */
import { createServer } from 'node:http'
import * as t from 'io-ts'
import { asyncScheduler, type SchedulerLike } from 'rxjs'
import { NonNegativeInteger, struct } from '../types/codec.js'
import { decodeInput } from '../types/input.js'
import { AgentTools, type AgentTool, type ToolOutput } from '../types/tool.js'
import { runTool } from '../tools/run-tool.js'
import { agentAsTool, type ServedAgent } from './serve-agent.js'
import { loadServer, type ServerModules } from './sdk.js'
import { sendWebResponse, toWebRequest } from './node-http.js'
import { listen } from '../node/listen.js'

/** Where to serve. */
export type McpServeTransport = 'stdio' | { readonly http: { readonly port?: number; readonly host?: string } }

/** What `serveMcp` serves, and how. */
export interface ServeMcpOptions {
  /** The tools to serve, under their own names. */
  readonly tools?: readonly AgentTool[]
  /** An Agent served as one more tool (default name `ask`). */
  readonly agent?: ServedAgent
  /** `'stdio'`, or `{ http: { port, host } }` (default port 0: any free one; host `127.0.0.1`). */
  readonly transport: McpServeTransport
  /** How the server names itself (default `{ name: 'rxagent', version: '0' }`). */
  readonly serverInfo?: { readonly name: string; readonly version: string }
  /** Where tool timeouts take their time from (default `asyncScheduler`). */
  readonly scheduler?: SchedulerLike
}

/** A running MCP server. */
export interface McpServing {
  /** The endpoint's URL (HTTP only). */
  readonly url?: string
  /** Stops serving: in-flight calls are cancelled, the HTTP server closed. */
  close(): Promise<void>
}

const Transport = t.union(
  [t.literal('stdio'), t.type({ http: struct('McpHttpListen', {}, { port: NonNegativeInteger, host: t.string }) })],
  "'stdio' | { http: { port?, host? } }",
)
const Options = struct(
  'ServeMcpOptions',
  { transport: Transport },
  {
    tools: AgentTools,
    agent: struct('ServedAgent', { agent: t.union([t.Function, t.UnknownRecord]) }, { name: t.string, description: t.string }),
    serverInfo: t.type({ name: t.string, version: t.string }),
  },
)

const ENTRY = 'serveMcp'

/**
 * Serves `options.tools` (and `options.agent`) as an MCP server.
 *
 * @throws InvalidInputError naming the path of a bad option, or two tools with one name.
 */
export async function serveMcp(options: ServeMcpOptions): Promise<McpServing> {
  decodeInput(Options, options, ENTRY, 'options')
  const tools = [...(options.tools ?? []), ...(options.agent === undefined ? [] : [agentAsTool(options.agent)])]
  decodeInput(AgentTools, tools, ENTRY, 'tools (the agent included)', 'tools')
  const modules = await loadServer(ENTRY)
  const scheduler = options.scheduler ?? asyncScheduler
  const info = options.serverInfo ?? { name: 'rxagent', version: '0' }
  const factory = () => buildServer(modules, info, tools, scheduler)
  if (options.transport === 'stdio') {
    const handle = modules.stdio.serveStdio(factory)
    return { close: () => handle.close() }
  }
  const handler = modules.sdk.createMcpHandler(factory)
  const http = createServer((req, res) => {
    handler.fetch(toWebRequest(req, res)).then(
      (response) => sendWebResponse(res, response),
      () => {
        if (!res.headersSent) res.writeHead(500)
        res.end()
      },
    )
  })
  const { port = 0, host = '127.0.0.1' } = options.transport.http
  const origin = await listen(http, port, host)
  return {
    url: `${origin}/mcp`,
    close: async () => {
      await handler.close()
      http.closeAllConnections()
      await new Promise<void>((resolve) => http.close(() => resolve()))
    },
  }
}

/** One low-level MCP server answering `tools/list` and `tools/call` from `tools`. */
function buildServer(modules: ServerModules, info: { readonly name: string; readonly version: string }, tools: readonly AgentTool[], scheduler: SchedulerLike) {
  const server = new modules.sdk.Server({ name: info.name, version: info.version }, { capabilities: { tools: {} } })
  const byName = new Map(tools.map((tool) => [tool.name, tool]))
  server.setRequestHandler('tools/list', () => ({
    tools: tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: { type: 'object' as const, ...tool.schema },
      ...(tool.label !== undefined && { title: tool.label }),
    })),
  }))
  server.setRequestHandler('tools/call', async (request, ctx) => {
    const tool = byName.get(request.params.name)
    if (tool === undefined) return errorResult(`Unknown tool '${request.params.name}'. Tools: ${tools.map((x) => x.name).join(', ')}`)
    // A Standard Schema may validate asynchronously.
    const decoded = await tool.decodeArguments(request.params.arguments ?? {})
    if (decoded._tag === 'Left') return errorResult(`Invalid arguments for '${tool.name}':\n${decoded.left.join('\n')}`)
    const progressToken = ctx.mcpReq._meta?.progressToken
    let progress = 0
    // Notifications go out in order, and the result only after the last of them (else a client drops them as late).
    let sent: Promise<unknown> = Promise.resolve()
    return new Promise((resolve) => {
      const subscription = runTool(tool, decoded.right, {
        toolCallId: String(ctx.mcpReq.id),
        scheduler,
        ...(tool.timeoutMs !== undefined && { timeoutMs: tool.timeoutMs }),
      }).subscribe((event) => {
        if (event.type === 'end') {
          const result = { content: mcpContent(event.output), ...(event.isError && { isError: true }) }
          // A turn of the event loop between the last notification and the result: the SDK's client
          // dispatches notifications a microtask late, and drops progress that arrives with the response.
          void sent.then(() => setImmediate(() => resolve(result)))
        } else if (progressToken !== undefined) {
          progress += 1
          const params = { progressToken, progress, message: event.output.content.map((c) => (c.type === 'text' ? c.text : '')).join('') }
          sent = sent.then(() => ctx.mcpReq.notify({ method: 'notifications/progress', params })).catch(() => undefined)
        }
      })
      // The caller's cancellation (or its connection closing) aborts the tool; the SDK sends no response then.
      ctx.mcpReq.signal.addEventListener('abort', () => subscription.unsubscribe(), { once: true })
    })
  })
  return server
}

const errorResult = (message: string) => ({ content: [{ type: 'text' as const, text: message }], isError: true })

/** rxagent content as MCP content: text and base64 images as they are, a URL image and other blocks as text. */
function mcpContent(output: ToolOutput) {
  return output.content.map((block) => {
    if (block.type === 'text') return { type: 'text' as const, text: block.text }
    if (block.type === 'image') {
      if (block.source.type === 'base64') return { type: 'image' as const, data: block.source.data, mimeType: block.source.mimeType }
      return { type: 'text' as const, text: `Image: ${block.source.url}` }
    }
    return { type: 'text' as const, text: `[${block.typeName}] ${JSON.stringify(block.data) ?? ''}` }
  })
}
