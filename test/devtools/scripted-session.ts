/**
 * A real durable Agent run (`Agent.open`) writing its session into a SessionStore, for the devtools tests: a
 * scripted model streaming on the async scheduler (thinking, text, two
 * parallel tool calls), a steering message queued while the tools run, a
 * tool that needs approval (left waiting, answered by the test or the page),
 * then a final answer.
 */
import * as t from 'io-ts'
import { map, timer } from 'rxjs'
import { Agent } from '../../src/agent/agent.js'
import type { SessionStore } from '../../src/agent/session-store.js'
import { defineTool } from '../../src/tools/define-tool.js'
import { modelSpec } from '../../src/types/model.js'
import { chunk, reply, toolCallChunks } from '../../marbles/chunks.js'
import { scriptedModel } from '../../marbles/scripted-model.js'
import type { ProviderChunk } from '../../src/types/chunk.js'

const slowTool = (name: string, ms: number) =>
  defineTool({ name, description: `answers after ${ms} ms`, parameters: t.type({ path: t.string }), execute: ({ path }) => timer(ms).pipe(map(() => `${name} ${path}: ok`)) })

const write = defineTool({
  name: 'write',
  description: 'writes a file (asks first)',
  parameters: t.type({ path: t.string, text: t.string }),
  needsApproval: true,
  execute: ({ path }) => `wrote ${path}`,
})

/** Chunks spread over time: one every `every` ms (real time, on the async scheduler). */
export function spread(chunks: readonly ProviderChunk[], every = 3) {
  const letters = chunks.map((_, i) => String.fromCharCode(0x100 + i))
  const values = Object.fromEntries(letters.map((l, i) => [l, chunks[i]!]))
  return { marbles: letters.map((l) => `${'-'.repeat(every)}${l}`).join('') + '|', values }
}

export interface ScriptedSession {
  readonly agent: Agent
  readonly sessionId: string
  /** The run: resolves when it ends (after the approval is answered). */
  readonly done: Promise<unknown>
}

/** The scripted model and tools of the session (`Agent.open` needs them again to resume it in another process: `answered` skips the model's first answers). */
export function sessionOptions(answered = 0) {
  const model = scriptedModel([
    spread([chunk.start('m1'), chunk.thinking('Two files to read; '), chunk.thinking('read both at once.'), chunk.text('Reading both.'), ...toolCallChunks('read-a', 'read', { path: 'a.txt' }), ...toolCallChunks('read-b', 'read_slow', { path: 'b.txt' }), chunk.stop('toolUse'), chunk.usage({ input: 1200, output: 80, total: 1280 })]),
    spread(reply.toolCalls([{ id: 'write-c', name: 'write', args: { path: 'c.txt', text: 'a+b' } }], { usage: { input: 1500, output: 40, total: 1540 } })),
    spread(reply.text('Done: c.txt holds a and b.', { deltas: 4, usage: { input: 1700, output: 30, cacheRead: 1000, total: 2730 } })),
  ].slice(answered), { model: modelSpec('scripted', 'scripted-1', { cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } }) })
  return { id: 'devtools-demo', systemPrompt: 'Be brief.', model: model.model, streamFn: model.streamFn, tools: [slowTool('read', 20), slowTool('read_slow', 60), write], approveTool: 'resolveApproval' as const }
}

/** Opens the session and starts the run; it stops at the approval of `write` until someone answers it. */
export async function scriptedSession(store: SessionStore, sessionId = 'demo-session', holder = 'test-process'): Promise<ScriptedSession> {
  const agent = await Agent.open({ ...sessionOptions(), store, sessionId, holder })
  // Queued while the tools run: taken by the next turn.
  agent.subscribe((e) => {
    if (e.type === 'toolExecutionStart' && e.toolCallId === 'read-b') agent.steer('Also mention b.')
  })
  const done = agent.prompt('Read a.txt and b.txt, then write c.txt.').result
  return { agent, sessionId, done }
}
