/**
 * MCP tools in an app that has not installed Ajv (simulated: every Ajv module
 * fails to load here; the server, a child process, still has its own
 * validation). Arguments are sent as they are, and the server's validation
 * error is the result.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { fileURLToPath } from 'node:url'
import { asyncScheduler, lastValueFrom, toArray } from 'rxjs'
import { connectMcp, type McpConnection } from '../../src/mcp/index.js'
import { runTool } from '../../src/tools/run-tool.js'
import type { AgentTool } from '../../src/types/tool.js'

const { missing } = vi.hoisted(() => ({
  missing: (): never => {
    throw Object.assign(new Error("Cannot find package 'ajv'"), { code: 'ERR_MODULE_NOT_FOUND' })
  },
}))
vi.mock('ajv', missing)
vi.mock('ajv/dist/2019.js', missing)
vi.mock('ajv/dist/2020.js', missing)

const kitchen = fileURLToPath(new URL('./servers/kitchen.mjs', import.meta.url))

const lastOf = async (tool: AgentTool, args: unknown) => {
  const events = await lastValueFrom(runTool(tool, args, { toolCallId: 'c1', scheduler: asyncScheduler, timeoutMs: 20_000 }).pipe(toArray()))
  const last = events.at(-1)
  if (last?.type !== 'end') throw new Error('no end event')
  return last
}

describe('MCP tools without Ajv', () => {
  let mcp: McpConnection
  beforeAll(async () => {
    mcp = await connectMcp({ servers: { kitchen: { command: process.execPath, args: [kitchen], stderr: 'ignore' } } })
  }, 30_000)
  afterAll(() => mcp?.close())

  it('Ajv cannot be imported here', async () => {
    await expect(import('ajv/dist/2020.js')).rejects.toThrow()
  })

  it('still tell the model the server schema', () => {
    const echo = mcp.tools.find((t) => t.name === 'kitchen__echo')
    expect(echo?.schema).toEqual({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] })
  })

  it('send arguments unvalidated: the server validates them, and its error is the result', async () => {
    const plot = mcp.tools.find((t) => t.name === 'kitchen__plot')!
    const bad = { point: { x: 'a', y: 1 }, mode: 'dot' }
    expect(await plot.decodeArguments(bad)).toEqual({ _tag: 'Right', right: bad })
    const refused = await lastOf(plot, bad)
    expect(refused.isError).toBe(true)
    expect(refused.output.content).toEqual([{ type: 'text', text: expect.stringMatching(/^Tool 'kitchen__plot' failed: Input validation error: .*point\.x: .*expected number/) }])
    expect((await lastOf(plot, { point: { x: 1, y: 2 }, mode: 'dot' })).output.content).toEqual([{ type: 'text', text: 'dot at 1,2' }])
  })
})
