/**
 * serveMcp called by the official MCP client: over stdio (a child process
 * serving transpiled sources) and over streamable HTTP (in this process).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fileURLToPath } from 'node:url'
import * as t from 'io-ts'
import { asyncScheduler, concatMap, from, lastValueFrom, map, Observable, timer, toArray } from 'rxjs'
import type { ProviderChunk } from '../../src/types/chunk.js'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { connectMcp, serveMcp, type McpServing } from '../../src/mcp/index.js'
import { runTool } from '../../src/tools/run-tool.js'
import { Agent } from '../../src/agent/agent.js'
import { defineTool } from '../../src/tools/define-tool.js'
import { InvalidInputError } from '../../src/types/input.js'
import type { AgentResult } from '../../src/types/result.js'
import { reply, scriptedModel } from '../../marbles/index.js'
import { transpiledSources } from './transpile.js'
// What `connectMcp` does on its side: progress read in the same chunk as the result would otherwise be dropped by the SDK's client, not by the server under test.
import { deferResponses } from '../../src/mcp/connection.js'

/** A scripted reply played one chunk per millisecond (the Agent's events$ replays no deltas that were over before it was subscribed). */
const slowly = (chunks: readonly ProviderChunk[]) => () => from(chunks).pipe(concatMap((c) => timer(1).pipe(map(() => c))))

const textOf = (result: { content?: unknown }) => (result.content as { type: string; text?: string }[]).map((c) => c.text ?? '').join('')

describe('serveMcp over stdio', () => {
  let sources: ReturnType<typeof transpiledSources>
  let client: Client
  beforeAll(async () => {
    sources = transpiledSources()
    client = new Client({ name: 'test', version: '1' })
    const script = fileURLToPath(new URL('./servers/serve-stdio.mjs', import.meta.url))
    const transport = new StdioClientTransport({ command: process.execPath, args: [script, sources.dir], stderr: 'inherit' })
    await client.connect(transport)
    deferResponses(transport)
  }, 60_000)
  afterAll(async () => {
    await client?.close()
    sources?.remove()
  })

  it('lists the tools with their JSON Schemas, the agent as one more', async () => {
    const { tools } = await client.listTools()
    expect(tools.map((x) => x.name)).toEqual(['add', 'steps', 'wait', 'aborts', 'oracle'])
    expect(tools[0]!.inputSchema).toMatchObject({ type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, required: ['a', 'b'] })
    expect(tools[4]).toMatchObject({ description: 'Asks the oracle', inputSchema: { properties: { prompt: { type: 'string' } } } })
  })

  it('calls a tool; bad arguments are an error result naming the path', async () => {
    expect(textOf(await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } }))).toBe('5')
    const bad = await client.callTool({ name: 'add', arguments: { a: 'x', b: 3 } })
    expect(bad.isError).toBe(true)
    expect(textOf(bad)).toMatch(/Invalid arguments for 'add':[\s\S]*a/)
    const unknown = await client.callTool({ name: 'nope', arguments: {} })
    expect(unknown.isError).toBe(true)
  })

  it('progress updates arrive as progress notifications, in order, before the result', async () => {
    const seen: { progress: number; message?: string }[] = []
    const result = await client.callTool({ name: 'steps', arguments: { n: 4 } }, { onprogress: (p) => void seen.push({ progress: p.progress, ...(p.message !== undefined && { message: p.message }) }) })
    expect(textOf(result)).toBe('counted to 4')
    // Every one, in order (see `deferResponses`).
    expect(seen).toEqual([1, 2, 3].map((i) => ({ progress: i, message: `step ${i}` })))
  })

  it("the caller's cancellation aborts the tool", async () => {
    const controller = new AbortController()
    const call = client.callTool({ name: 'wait', arguments: {} }, { signal: controller.signal })
    setTimeout(() => controller.abort('user stop'), 50)
    await expect(call).rejects.toThrow()
    await expect.poll(async () => textOf(await client.callTool({ name: 'aborts', arguments: {} })), { timeout: 10_000 }).toMatch(/cancelled/)
  })

  it('the agent answers, streaming its text deltas as progress', async () => {
    const seen: string[] = []
    const result = await client.callTool({ name: 'oracle', arguments: { prompt: 'what is it?' } }, { onprogress: (p) => void seen.push(p.message ?? '') })
    expect(textOf(result)).toBe('The answer is 42.')
    // Every delta, in order (see `deferResponses`).
    expect(seen.length).toBeGreaterThanOrEqual(2)
    expect(seen.join('')).toBe('The answer is 42.')
  })
})

describe('serveMcp over streamable HTTP', () => {
  let serving: McpServing
  let client: Client
  const runs: Promise<AgentResult>[] = []
  beforeAll(async () => {
    const echo = defineTool({ name: 'echo', description: 'Echoes', parameters: t.type({ text: t.string }), execute: ({ text }) => text })
    const agent = () => {
      // A model that never answers: the run waits until it is aborted.
      const { model, streamFn } = scriptedModel([() => new Observable<never>(() => undefined)])
      const a = new Agent({ systemPrompt: '', model, streamFn })
      const prompt = a.prompt.bind(a)
      return Object.assign(a, {
        prompt: (...args: Parameters<typeof prompt>) => {
          const run = prompt(...args)
          runs.push(run.result)
          return run
        },
      })
    }
    const talker = () => {
      const { model, streamFn } = scriptedModel([slowly(reply.toolCalls([{ id: 'c1', name: 'echo', args: { text: 'x' } }])), slowly(reply.text('ok then', { deltas: 2 }))])
      return new Agent({ systemPrompt: '', model, streamFn, tools: [echo] })
    }
    serving = await serveMcp({ tools: [echo], agent: { agent, name: 'stuck' }, transport: { http: { port: 0 } } })
    const second = await serveMcp({ agent: { agent: talker }, transport: { http: {} } })
    servings.push(second)
    client = new Client({ name: 'test', version: '1' }, { versionNegotiation: { mode: 'auto' } })
    await client.connect(new StreamableHTTPClientTransport(new URL(serving.url!)))
  }, 30_000)
  const servings: McpServing[] = []
  afterAll(async () => {
    await client?.close()
    await serving?.close()
    for (const s of servings) await s.close()
  })

  it('serves on 127.0.0.1 and answers a call', async () => {
    expect(serving.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'over http' } }))).toBe('over http')
  })

  it('an agent with a tool: tool events and text deltas as progress, then the answer', async () => {
    const other = new Client({ name: 'test', version: '1' })
    await other.connect(new StreamableHTTPClientTransport(new URL(servings[0]!.url!)))
    try {
      const seen: string[] = []
      const result = await other.callTool({ name: 'ask', arguments: { prompt: 'go' } }, { onprogress: (p) => void seen.push(p.message ?? '') })
      expect(textOf(result)).toBe('ok then')
      expect(seen[0]).toBe('tool: echo')
      expect(seen.length).toBeGreaterThanOrEqual(2)
      expect('ok then'.startsWith(seen.slice(1).join(''))).toBe(true)
    } finally {
      await other.close()
    }
  })

  it("the caller's cancellation aborts the agent's run", async () => {
    const controller = new AbortController()
    const call = client.callTool({ name: 'stuck', arguments: { prompt: 'wait' } }, { signal: controller.signal })
    await expect.poll(() => runs.length, { timeout: 10_000 }).toBe(1)
    controller.abort('enough')
    await expect(call).rejects.toThrow()
    const result = await runs[0]!
    expect(result.stopReason).toBe('aborted')
  })

  it('rxagent on both ends: connectMcp to a served agent, progress as updates', async () => {
    const mcp = await connectMcp({ servers: { remote: { url: servings[0]!.url! } } })
    try {
      const ask = mcp.tools.find((x) => x.name === 'remote__ask')!
      expect(ask.schema).toMatchObject({ type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] })
      const events = await lastValueFrom(runTool(ask, { prompt: 'go' }, { toolCallId: 'c1', scheduler: asyncScheduler }).pipe(toArray()))
      const last = events.at(-1)
      expect(last?.type === 'end' && [last.isError, last.output.content]).toEqual([false, [{ type: 'text', text: 'ok then' }]])
      const updates = events.flatMap((e) => (e.type === 'update' ? [e.output.content.map((c) => (c.type === 'text' ? c.text : '')).join('')] : []))
      expect(updates[0]).toBe('tool: echo')
      expect(updates.slice(1).join('')).toBe('ok then')
    } finally {
      await mcp.close()
    }
  })

  it('bad options: InvalidInputError naming the path', async () => {
    await expect(serveMcp({ transport: 'tcp' } as never)).rejects.toThrow(InvalidInputError)
    await expect(serveMcp({ transport: 'stdio', tools: [{ name: 'bad name' }] } as never)).rejects.toThrow(/tools\[0\]/)
  })
})
