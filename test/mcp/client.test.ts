/**
 * The MCP client against real servers started here: a stdio child process
 * (test/mcp/servers/kitchen.mjs) and streamable HTTP on 127.0.0.1:0, both
 * written with the official server SDK.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fileURLToPath } from 'node:url'
import { firstValueFrom, lastValueFrom, filter, toArray, take } from 'rxjs'
import { connectMcp, mcpTools, syncMcpTools, type McpConnection } from '../../src/mcp/index.js'
import { runTool, type ToolRunEvent } from '../../src/tools/run-tool.js'
import { agentLoop } from '../../src/loop/agent-loop.js'
import { userMessage } from '../../src/types/message.js'
import { InvalidInputError } from '../../src/types/input.js'
import type { AgentTool } from '../../src/types/tool.js'
import type { AgentEvent } from '../../src/types/event.js'
import { reply, scriptedModel } from '../../marbles/index.js'
import { asyncScheduler } from 'rxjs'
import { startHttpServer, type HttpServerHandle } from './http-server.js'
import { startSseServer } from './sse-server.js'

const kitchen = fileURLToPath(new URL('./servers/kitchen.mjs', import.meta.url))
const stdio = { command: process.execPath, args: [kitchen], stderr: 'ignore' as const }

const find = (tools: readonly AgentTool[], name: string): AgentTool => {
  const tool = tools.find((t) => t.name === name)
  if (tool === undefined) throw new Error(`no tool ${name} in ${tools.map((t) => t.name).join(', ')}`)
  return tool
}

/** Runs one call as the loop does (the tool's own timeout unless `timeoutMs`) and returns every event. */
const run = (tool: AgentTool, args: unknown, timeoutMs = tool.timeoutMs): Promise<ToolRunEvent[]> =>
  lastValueFrom(runTool(tool, args, { toolCallId: 'c1', scheduler: asyncScheduler, ...(timeoutMs !== undefined && { timeoutMs }) }).pipe(toArray()))

const end = (events: readonly ToolRunEvent[]) => {
  const last = events.at(-1)
  if (last?.type !== 'end') throw new Error('no end event')
  return last
}

describe('mcpTools over stdio', () => {
  let mcp: McpConnection
  beforeAll(async () => {
    mcp = await connectMcp({ servers: { kitchen: stdio } })
  }, 30_000)
  afterAll(() => mcp?.close())

  it('lists the tools, prefixed with the server, with the server JSON Schema as parameters', () => {
    const names = mcp.tools.map((t) => t.name)
    expect(names).toEqual(expect.arrayContaining(['kitchen__echo', 'kitchen__image', 'kitchen__resource', 'kitchen__structured', 'kitchen__slow']))
    const echo = find(mcp.tools, 'kitchen__echo')
    expect(echo.description).toBe('Echoes its text')
    expect(echo.schema).toEqual({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] })
    expect(Object.isFrozen(echo)).toBe(true)
  })

  it('validates arguments against the schema (Ajv) with paths', async () => {
    const echo = find(mcp.tools, 'kitchen__echo')
    expect(await echo.decodeArguments({ text: 'hi' })).toEqual({ _tag: 'Right', right: { text: 'hi' } })
    const bad = await echo.decodeArguments({ text: 3 })
    expect(bad._tag).toBe('Left')
    expect(bad._tag === 'Left' && bad.left).toEqual(['arguments/text: must be string'])
    const missing = await echo.decodeArguments({})
    expect(missing._tag === 'Left' && missing.left.join()).toMatch(/must have required property 'text'/)
    expect((await echo.decodeArguments('nope'))._tag).toBe('Left')
  })

  it('text, image, resources and links, structured content', async () => {
    const echo = end(await run(find(mcp.tools, 'kitchen__echo'), { text: 'hello' }))
    expect(echo).toMatchObject({ isError: false, output: { content: [{ type: 'text', text: 'hello' }], details: { server: 'kitchen', tool: 'echo' } } })

    const image = end(await run(find(mcp.tools, 'kitchen__image'), {}))
    expect(image.output.content).toEqual([{ type: 'image', source: { type: 'base64', mimeType: 'image/png', data: expect.stringMatching(/^iVBOR/) } }])

    const resource = end(await run(find(mcp.tools, 'kitchen__resource'), {}))
    expect(resource.output.content).toEqual([
      { type: 'text', text: 'Resource file:///notes.txt (text/plain):\nnote body' },
      { type: 'text', text: 'Resource file:///blob.bin (application/octet-stream): 3 bytes of binary data, not shown' },
      { type: 'text', text: 'Resource link: file:///big.log (big.log)' },
    ])
    expect((resource.output.details as { blocks: unknown[] }).blocks).toHaveLength(3)

    const structured = end(await run(find(mcp.tools, 'kitchen__structured'), { a: 2, b: 3 }))
    expect(structured.output).toEqual({ content: [{ type: 'text', text: '{"sum":5}' }], details: { server: 'kitchen', tool: 'structured', structuredContent: { sum: 5 } } })
  })

  it('isError: true is an error result with the server text', async () => {
    const fail = end(await run(find(mcp.tools, 'kitchen__fail'), {}))
    expect(fail.isError).toBe(true)
    expect(fail.output.content).toEqual([{ type: 'text', text: "Tool 'kitchen__fail' failed: the disk is on fire" }])
  })

  it('a protocol error (the tool is gone from the server) is an error result naming server and tool', async () => {
    const next = firstValueFrom(mcp.tools$.pipe(filter((tools) => tools.some((t) => t.name === 'kitchen__temp'))))
    end(await run(find(mcp.tools, 'kitchen__add_tool'), { name: 'temp' }))
    const temp = find(await next, 'kitchen__temp')
    end(await run(find(mcp.tools, 'kitchen__remove_tool'), { name: 'temp' }))
    const result = end(await run(temp, {}))
    expect(result.isError).toBe(true)
    expect(result.output.content).toEqual([{ type: 'text', text: expect.stringMatching(/^Tool 'kitchen__temp' failed: MCP server 'kitchen' failed to run 'temp': .*not found/) }])
  })

  it('progress notifications become updates before the result', async () => {
    const events = await run(find(mcp.tools, 'kitchen__progress'), { steps: 3 })
    const updates = events.filter((e) => e.type === 'update')
    expect(updates.map((u) => u.output.content)).toEqual([[{ type: 'text', text: 'step 1' }], [{ type: 'text', text: 'step 2' }], [{ type: 'text', text: 'step 3' }]])
    expect(updates[0]!.output.details).toEqual({ server: 'kitchen', tool: 'progress', progress: 1, total: 3, message: 'step 1' })
    expect(end(events).output.content).toEqual([{ type: 'text', text: 'done 3' }])
  })

  it('a slow server under the tool timeout: the timeout result, and the server sees the cancellation', async () => {
    const slow = find(mcp.tools, 'kitchen__slow')
    const result = end(await run(slow, {}, 200))
    expect(result).toMatchObject({ isError: true, output: { content: [{ type: 'text', text: "Tool 'kitchen__slow' timed out after 200 ms." }] } })
    await expect.poll(async () => end(await run(find(mcp.tools, 'kitchen__cancellations'), {})).output.content, { timeout: 10_000 }).toEqual([
      { type: 'text', text: JSON.stringify(['Error: timed out after 200 ms']) },
    ])
  })

  it('tools/list_changed refreshes tools$ and the tool list', async () => {
    const next = firstValueFrom(mcp.tools$.pipe(filter((tools) => tools.some((t) => t.name === 'kitchen__late'))))
    end(await run(find(mcp.tools, 'kitchen__add_tool'), { name: 'late' }))
    const tools = await next
    expect(end(await run(find(tools, 'kitchen__late'), {})).output.content).toEqual([{ type: 'text', text: 'I am late' }])
    expect(mcp.tools).toBe(tools)
  })
})

describe('progress that arrives with the result', () => {
  it('is still an update before the result (the SDK client alone drops it)', async () => {
    const raw = fileURLToPath(new URL('./servers/raw.mjs', import.meta.url))
    const mcp = await connectMcp({ servers: { raw: { command: process.execPath, args: [raw], stderr: 'ignore' } } })
    try {
      for (let i = 0; i < 5; i++) {
        const events = await run(find(mcp.tools, 'raw__quick'), {})
        expect(events.map((e) => [e.type, e.output.content])).toEqual([
          ['update', [{ type: 'text', text: 'almost' }]],
          ['end', [{ type: 'text', text: 'done' }]],
        ])
      }
    } finally {
      await mcp.close()
    }
  }, 30_000)
})

describe('servers that fail', () => {
  it('a server that exits mid-call: an error result naming the server, and later calls fail at once', async () => {
    const mcp = await connectMcp({ servers: { doomed: stdio } })
    try {
      const result = end(await run(find(mcp.tools, 'doomed__crash'), {}))
      expect(result.isError).toBe(true)
      expect(result.output.content[0]).toEqual({ type: 'text', text: expect.stringMatching(/MCP server 'doomed' failed to run 'crash': the server closed the connection/) })
      const after = end(await run(find(mcp.tools, 'doomed__echo'), { text: 'x' }))
      expect(after.output.content[0]).toEqual({ type: 'text', text: expect.stringMatching(/MCP server 'doomed' cannot run 'echo'/) })
    } finally {
      await mcp.close()
    }
  }, 30_000)

  it('a command that does not exist rejects naming the server; the other servers are closed', async () => {
    await expect(connectMcp({ servers: { ok: stdio, broken: { command: '/nonexistent/mcp-server' } } })).rejects.toThrow(/MCP server 'broken' could not be connected/)
  }, 30_000)

  it('bad options: an InvalidInputError naming the path', async () => {
    await expect(connectMcp({ servers: { 'bad name': stdio } })).rejects.toThrow(InvalidInputError)
    await expect(connectMcp({ servers: { 'bad name': stdio } })).rejects.toThrow(/bad name/)
    await expect(connectMcp({ servers: { web: { url: 'ftp://x' } } } as never)).rejects.toThrow(/servers\.web/)
    await expect(connectMcp({ servers: { s: { command: 3 } } } as never)).rejects.toThrow(InvalidInputError)
  })
})

describe('names across servers', () => {
  it('prefixed by default; without prefixes a collision gets _2; long and odd names are made safe', async () => {
    const mcp = await connectMcp({ servers: { a: { ...stdio, prefix: false }, b: { ...stdio, prefix: false }, 'very-long-server-name-for-the-purpose-of-cutting': stdio } })
    try {
      const names = mcp.tools.map((t) => t.name)
      expect(names.filter((n) => n === 'echo' || n === 'echo_2')).toEqual(['echo', 'echo_2'])
      const long = names.filter((n) => n.startsWith('very-long'))
      expect(long.every((n) => /^[a-zA-Z0-9_-]{1,64}$/.test(n))).toBe(true)
      expect(new Set(names).size).toBe(names.length)
      // Both copies work, each on its own server.
      expect(end(await run(find(mcp.tools, 'echo_2'), { text: 'b' })).output.content).toEqual([{ type: 'text', text: 'b' }])
    } finally {
      await mcp.close()
    }
  }, 60_000)
})

describe('mcpTools (the Observable form) and agents', () => {
  it('emits the tools once connected; unsubscribing stops the child process', async () => {
    const tools$ = mcpTools({ servers: { k: { ...stdio, env: { MARK: 'observable-form' } } } })
    let pid = 0
    const sub = tools$.subscribe((tools) => {
      void run(find(tools, 'k__pid'), {}).then((events) => {
        const c = end(events).output.content[0]
        pid = Number(c?.type === 'text' ? c.text : NaN)
      })
    })
    await expect.poll(() => pid, { timeout: 20_000 }).toBeGreaterThan(0)
    const alive = (): boolean => {
      try {
        process.kill(pid, 0)
        return true
      } catch {
        return false
      }
    }
    expect(alive()).toBe(true)
    sub.unsubscribe()
    await expect.poll(alive, { timeout: 20_000 }).toBe(false)
  }, 45_000)

  it('the env option reaches the child; a later call after close fails naming the server', async () => {
    const tools = await firstValueFrom(mcpTools({ servers: { k: { ...stdio, env: { MARK: 'observable-form' } } } }))
    // firstValueFrom unsubscribed: the connection is closed.
    const result = end(await run(find(tools, 'k__env'), { name: 'MARK' }))
    expect(result.output.content[0]).toEqual({ type: 'text', text: expect.stringMatching(/MCP server 'k' cannot run 'env'/) })
    const mcp = await connectMcp({ servers: { k: { ...stdio, env: { MARK: 'observable-form' } } } })
    try {
      expect(end(await run(find(mcp.tools, 'k__env'), { name: 'MARK' })).output.content).toEqual([{ type: 'text', text: 'observable-form' }])
    } finally {
      await mcp.close()
    }
  }, 30_000)

  it('an agent loop with a scripted model calls an MCP tool end to end, progress included', async () => {
    const mcp = await connectMcp({ servers: { kitchen: stdio } })
    try {
      const { model, streamFn } = scriptedModel([
        reply.toolCalls([{ id: 'c1', name: 'kitchen__progress', args: { steps: 2 } }, { id: 'c2', name: 'kitchen__echo', args: { text: 'hi' } }]),
        reply.text('all done'),
      ])
      const events: AgentEvent[] = await lastValueFrom(agentLoop(userMessage('go'), { systemPrompt: '', messages: [], tools: mcp.tools }, { model, streamFn }).pipe(toArray()))
      expect(events.filter((e) => e.type === 'toolExecutionUpdate').map((e) => e.type === 'toolExecutionUpdate' && e.partialResult.content)).toEqual([
        [{ type: 'text', text: 'step 1' }],
        [{ type: 'text', text: 'step 2' }],
      ])
      const ends = events.flatMap((e) => (e.type === 'toolExecutionEnd' ? [[e.toolName, e.result.content, e.isError]] : []))
      expect(ends).toEqual(
        expect.arrayContaining([
          ['kitchen__progress', [{ type: 'text', text: 'done 2' }], false],
          ['kitchen__echo', [{ type: 'text', text: 'hi' }], false],
        ]),
      )
      const last = events.at(-1)
      expect(last?.type === 'agentEnd' && last.result.stopReason).toBe('stop')
    } finally {
      await mcp.close()
    }
  }, 30_000)

  it("the run's abort cancels an MCP call in flight: the run ends aborted, the server sees the cancellation", async () => {
    const mcp = await connectMcp({ servers: { kitchen: stdio } })
    try {
      const { model, streamFn } = scriptedModel([reply.toolCalls([{ id: 'c1', name: 'kitchen__slow', args: {} }]), reply.text('never')])
      const controller = new AbortController()
      const events: AgentEvent[] = []
      await new Promise<void>((resolve, reject) =>
        agentLoop(userMessage('go'), { systemPrompt: '', messages: [], tools: mcp.tools }, { model, streamFn, signal: controller.signal }).subscribe({
          next: (event) => {
            events.push(event)
            // Abort once the server is running the call (it said so with a progress notification).
            if (event.type === 'toolExecutionUpdate') controller.abort()
          },
          error: reject,
          complete: resolve,
        }),
      )
      const last = events.at(-1)
      expect(last?.type === 'agentEnd' && last.result.stopReason).toBe('aborted')
      await expect.poll(async () => end(await run(find(mcp.tools, 'kitchen__cancellations'), {})).output.content[0], { timeout: 10_000 }).toEqual({
        type: 'text',
        text: expect.stringMatching(/^\["[^"]+"\]$/),
      })
    } finally {
      await mcp.close()
    }
  }, 30_000)

  it('syncMcpTools keeps an agent-like target in step with list changes', async () => {
    const mcp = await connectMcp({ servers: { kitchen: stdio } })
    try {
      const seen: string[][] = []
      const sub = syncMcpTools({ setTools: (tools) => void seen.push(tools.map((t) => t.name)) }, mcp)
      expect(seen).toHaveLength(1)
      await firstValueFrom(mcp.tools$.pipe(take(1)))
      end(await run(find(mcp.tools, 'kitchen__add_tool'), { name: 'fresh' }))
      await expect.poll(() => seen.at(-1)?.includes('kitchen__fresh'), { timeout: 10_000 }).toBe(true)
      sub.unsubscribe()
    } finally {
      await mcp.close()
    }
  }, 30_000)
})

describe('streamable HTTP', () => {
  let server: HttpServerHandle
  const token = 'Bearer sk-test-0123456789abcdef'
  beforeAll(async () => {
    server = await startHttpServer()
  }, 30_000)
  afterAll(() => server?.close())

  it('passes the configured headers (the server sees Authorization), calls tools, streams progress', async () => {
    const mcp = await connectMcp({ servers: { web: { url: server.url, headers: { Authorization: token } } } })
    try {
      const events = await run(find(mcp.tools, 'web__progress'), { steps: 2 })
      expect(events.filter((e) => e.type === 'update')).toHaveLength(2)
      expect(end(events).output.content).toEqual([{ type: 'text', text: 'done 2' }])
      expect(end(await run(find(mcp.tools, 'web__whoami'), {})).output.content).toEqual([{ type: 'text', text: token }])
    } finally {
      await mcp.close()
    }
  }, 30_000)

  it('a refused connection: the error names the server and does not contain the token', async () => {
    const error = await connectMcp({ servers: { web: { url: `${server.url}?access_token=sk-secret-query-token`, headers: { Authorization: 'Bearer sk-wrong-token-abcdef' } } } }).then(
      (c) => c.close().then(() => new Error('connected')),
      (e: unknown) => e as Error,
    )
    expect(error).toBeInstanceOf(Error)
    expect(error.message).toMatch(/MCP server 'web' could not be connected/)
    expect(error.message).not.toMatch(/sk-wrong-token-abcdef|sk-secret-query-token/)
  }, 30_000)

  it('cancellation reaches the server: a slow call under the tool timeout', async () => {
    const mcp = await connectMcp({ servers: { web: { url: server.url, timeoutMs: 300 } } })
    try {
      const slow = find(mcp.tools, 'web__slow')
      expect(slow.timeoutMs).toBe(300)
      const result = end(await run(slow, {}))
      expect(result).toMatchObject({ isError: true, output: { content: [{ type: 'text', text: "Tool 'web__slow' timed out after 300 ms." }] } })
      await expect.poll(() => server.cancellations, { timeout: 10_000 }).toHaveLength(1)
    } finally {
      await mcp.close()
    }
  }, 30_000)

  it('tools/list_changed over HTTP refreshes the tools', async () => {
    const mcp = await connectMcp({ servers: { web: { url: server.url } } })
    try {
      expect(mcp.tools.some((t) => t.name === 'web__extra')).toBe(false)
      const next = firstValueFrom(mcp.tools$.pipe(filter((tools) => tools.some((t) => t.name === 'web__extra'))))
      server.addTool()
      const tools = await next
      expect(end(await run(find(tools, 'web__extra'), {})).output.content).toEqual([{ type: 'text', text: 'extra!' }])
    } finally {
      await mcp.close()
    }
  }, 30_000)

  it('falls back to HTTP+SSE for an older server, headers included', async () => {
    const old = await startSseServer()
    try {
      const mcp = await connectMcp({ servers: { old: { url: old.url, headers: { Authorization: token } } } })
      try {
        expect(end(await run(find(mcp.tools, 'old__echo'), { text: 'hi' })).output.content).toEqual([{ type: 'text', text: 'old: hi' }])
        expect(old.authorizations.length).toBeGreaterThanOrEqual(3)
        expect(old.authorizations.every((a) => a === token)).toBe(true)
      } finally {
        await mcp.close()
      }
    } finally {
      await old.close()
    }
  }, 30_000)

  it('a server that is not there: a clear error, no hang', async () => {
    await expect(connectMcp({ servers: { gone: { url: 'http://127.0.0.1:9/mcp', connectTimeoutMs: 5_000 } } })).rejects.toThrow(/MCP server 'gone' could not be connected/)
  }, 30_000)
})
