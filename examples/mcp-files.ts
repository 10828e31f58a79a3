// An agent using a local MCP file server (examples/mcp-file-server.mjs, a
// child process): the server's tools become the agent's tools. Offline: the
// model is scripted. Swap in a provider's `streamFn` and model (see
// rxagent/providers) and the rest stays as it is.
//
//   npm run build && node dist/examples/mcp-files.js [directory]
import { existsSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Agent, extractText, type AgentRunEvent } from '../src/index.js'
import { connectMcp, syncMcpTools } from '../src/mcp/index.js'
import { reply, scriptedModel } from '../marbles/index.js'

/** The server script, next to this file in the sources, or found from dist/examples/. */
function serverScript(): string {
  for (const candidate of ['./mcp-file-server.mjs', '../../examples/mcp-file-server.mjs']) {
    const path = fileURLToPath(new URL(candidate, import.meta.url))
    if (existsSync(path)) return path
  }
  throw new Error('examples/mcp-file-server.mjs not found')
}

/** Runs the example on `directory`: the agent lists it, reads `file`, and answers. Returns the answer and the events. */
export async function mcpFilesExample(directory: string, file: string): Promise<{ answer: string; events: AgentRunEvent[] }> {
  const mcp = await connectMcp({ servers: { files: { command: process.execPath, args: [serverScript(), directory], stderr: 'inherit', timeoutMs: 10_000 } } })
  try {
    // A real model would choose these calls; the scripted one makes them in order.
    const { model, streamFn } = scriptedModel([
      reply.toolCalls([{ id: 'c1', name: 'files__list_files', args: {} }]),
      reply.toolCalls([{ id: 'c2', name: 'files__read_file', args: { path: file } }]),
      reply.text(`I read ${file} through the files server.`),
    ])
    const agent = new Agent({ systemPrompt: 'You answer questions about the files of a project.', model, streamFn })
    // The server's tools now, and again whenever it reports a change (from the next run on).
    const sync = syncMcpTools(agent, mcp)
    const events: AgentRunEvent[] = []
    const run = agent.prompt(`What does ${file} say?`)
    run.events$.subscribe((event) => events.push(event))
    const result = await run
    sync.unsubscribe()
    const last = result.messages.at(-1)
    return { answer: last?.role === 'assistant' ? extractText(last.content) : '', events }
  } finally {
    await mcp.close()
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const directory = process.argv[2] ?? '.'
  const { answer, events } = await mcpFilesExample(directory, 'package.json')
  for (const event of events) {
    if (event.type === 'toolExecutionUpdate') console.log(`  … ${extractText(event.partialResult.content)}`)
    if (event.type === 'toolExecutionEnd') console.log(`[${event.toolName}]${event.isError ? ' (error)' : ''}\n${extractText(event.result.content).slice(0, 300)}`)
  }
  console.log(answer)
}
