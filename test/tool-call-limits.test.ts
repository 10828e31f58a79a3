/**
 * A message with thousands of tool calls (issue 12, point 9): the Agent runs
 * at most 16 at a time, and at most `maxToolCallsPerMessage` per message run
 * at all; the others get an error result saying so.
 */
import { describe, expect, it } from 'vitest'
import * as t from 'io-ts'
import { defer, timer, map } from 'rxjs'
import { agentLoop } from '../src/loop/agent-loop.js'
import { Agent } from '../src/agent/agent.js'
import { defineTool } from '../src/tools/define-tool.js'
import { reply, scriptedModel, type ScriptedCall } from '../marbles/index.js'
import { collect, context, hello, resultOf, textOf, toolResultsOf } from './helpers.js'

/** A tool that counts how many of its executions run at once, each answering after `ms` (on the async scheduler). */
function counted(ms: number) {
  const seen = { started: 0, active: 0, maxActive: 0 }
  const tool = defineTool({
    name: 'work',
    description: 'works a while',
    parameters: t.type({}),
    execute: () =>
      defer(() => {
        seen.started++
        seen.maxActive = Math.max(seen.maxActive, ++seen.active)
        return timer(ms).pipe(map(() => (seen.active--, 'done')))
      }),
  })
  return { tool, seen }
}

const calls = (n: number): ScriptedCall[] => Array.from({ length: n }, (_, i) => ({ id: `c${i}`, name: 'work', args: {} }))
const overCap = (n: number, cap: number) => `Tool call not executed: the message has ${n} tool calls; at most ${cap} run per message.`

describe('tool calls per message', () => {
  it('the Agent: 2,000 calls in one message run at most 16 at a time, 128 in all; the others are answered with the reason', async () => {
    const { tool, seen } = counted(1)
    const model = scriptedModel([reply.toolCalls(calls(2_000)), reply.text('done')])
    const agent = new Agent({ systemPrompt: 's', model: model.model, streamFn: model.streamFn, tools: [tool] })
    const result = await agent.prompt('go')
    expect(result.stopReason).toBe('stop')
    expect(seen.started).toBe(128)
    expect(seen.maxActive).toBe(16)
    const results = result.messages.filter((m) => m.role === 'toolResult')
    expect(results).toHaveLength(2_000)
    expect(results.slice(0, 128).every((r) => r.role === 'toolResult' && !r.isError)).toBe(true)
    expect(results[128]).toMatchObject({ toolCallId: 'c128', isError: true })
    expect(textOf(results[1_999] as { readonly content: readonly { type: string; text?: string }[] })).toBe(overCap(2_000, 128))
  })

  it('agentLoop: maxToolCallsPerMessage caps the calls that run; results stay in call order', () => {
    const ran: string[] = []
    const tool = defineTool({ name: 'work', description: 'x', parameters: t.type({}), execute: (_a, { toolCallId }) => (ran.push(toolCallId), 'done') })
    const model = scriptedModel([reply.toolCalls(calls(5)), reply.text('done')])
    const events = collect(agentLoop(hello, context([tool]), { model: model.model, streamFn: model.streamFn, maxToolCallsPerMessage: 3 }))
    expect(resultOf(events).stopReason).toBe('stop')
    expect(ran).toEqual(['c0', 'c1', 'c2'])
    expect(toolResultsOf(events).map(textOf)).toEqual(['done', 'done', 'done', overCap(5, 3), overCap(5, 3)])
  })

  it('agentLoop: the cap holds with pre-dispatch policies too (the asking path)', () => {
    const ran: string[] = []
    const tool = defineTool({ name: 'work', description: 'x', parameters: t.type({}), execute: (_a, { toolCallId }) => (ran.push(toolCallId), 'done') })
    const model = scriptedModel([reply.toolCalls(calls(4)), reply.text('done')])
    const asked: string[] = []
    const events = collect(
      agentLoop(hello, context([tool]), {
        model: model.model,
        streamFn: model.streamFn,
        maxToolCallsPerMessage: 2,
        approveTool: ({ toolCall }) => (asked.push(toolCall.id), { approved: true }),
      }),
    )
    expect(resultOf(events).stopReason).toBe('stop')
    expect(asked).toEqual(['c0', 'c1'])
    expect(ran).toEqual(['c0', 'c1'])
    expect(toolResultsOf(events).map(textOf)).toEqual(['done', 'done', overCap(4, 2), overCap(4, 2)])
  })

  it('agentLoop: an abort while the approver decides answers every call once, those past the cap too (no second start)', () => {
    const tool = defineTool({ name: 'work', description: 'x', parameters: t.type({}), execute: () => 'done' })
    const model = scriptedModel([reply.toolCalls(calls(4)), reply.text('done')])
    const controller = new AbortController()
    const events = collect(
      agentLoop(hello, context([tool]), {
        model: model.model,
        streamFn: model.streamFn,
        maxToolCallsPerMessage: 2,
        signal: controller.signal,
        // The first decision aborts the run: the second call is still to be planned.
        approveTool: () => (controller.abort(), { approved: true }),
      }),
    )
    expect(resultOf(events).stopReason).toBe('aborted')
    const starts = events.flatMap((e) => (e.type === 'toolExecutionStart' ? [e.toolCallId] : []))
    expect(starts).toEqual(['c0', 'c1', 'c2', 'c3'])
    expect(toolResultsOf(events).map((r) => r.toolCallId)).toEqual(['c0', 'c1', 'c2', 'c3'])
    // Once the run is aborted, no call starts: each says so, whatever else would have kept it from running.
    expect(toolResultsOf(events).map(textOf)).toEqual(Array(4).fill('Tool call not executed: the run was aborted.'))
  })

  it('agentLoop: 10,000 calls in one message: 128 run, each other call is answered, the run ends', () => {
    let ran = 0
    const tool = defineTool({ name: 'work', description: 'x', parameters: t.type({}), execute: () => (ran++, 'done') })
    const model = scriptedModel([reply.toolCalls(calls(10_000)), reply.text('done')])
    const events = collect(agentLoop(hello, context([tool]), { model: model.model, streamFn: model.streamFn }))
    expect(resultOf(events).stopReason).toBe('stop')
    expect(ran).toBe(128)
    expect(toolResultsOf(events).filter((r) => r.isError).map(textOf)).toEqual(Array(10_000 - 128).fill(overCap(10_000, 128)))
  })

  it('the Agent streams a message of 4,000 tool calls in linear work: past 256 blocks its streamMessage is refreshed every blocks/64 chunks, below it at every chunk; the final message is exact', async () => {
    const tool = defineTool({ name: 'work', description: 'x', parameters: t.type({}), execute: () => 'done' })
    const streamed = async (n: number) => {
      const model = scriptedModel([reply.toolCalls(calls(n)), reply.text('done')])
      const agent = new Agent({ systemPrompt: 's', model: model.model, streamFn: model.streamFn, tools: [tool] })
      let copied = 0
      let snapshots = 0
      let chunks = 0
      agent.state$.subscribe((s) => {
        if (s.streamMessage === undefined) return
        snapshots++
        copied += s.streamMessage.content.length
      })
      agent.events$.subscribe((e) => void (e.type === 'messageUpdate' && e.contentIndex < n && chunks++))
      await agent.prompt('go')
      const answer = agent.state.messages.find((m) => m.role === 'assistant')!
      return { copied, snapshots, chunks, calls: answer.content.filter((c) => c.type === 'toolCall').length }
    }
    const small = await streamed(100)
    // messageStart, then one snapshot per chunk of the 100 calls and the text answer's.
    expect(small.snapshots).toBeGreaterThanOrEqual(small.chunks + 1)
    const large = await streamed(4_000)
    expect(large.calls).toBe(4_000)
    // Per chunk, on average, at most ~64 blocks copied (a snapshot per chunk would copy ~2,000 on average: 24M in all).
    expect(large.copied / large.chunks).toBeLessThan(100)
  })

  it('agentLoop: the default cap is 128 calls per message', () => {
    let ran = 0
    const tool = defineTool({ name: 'work', description: 'x', parameters: t.type({}), execute: () => (ran++, 'done') })
    const model = scriptedModel([reply.toolCalls(calls(130)), reply.text('done')])
    const events = collect(agentLoop(hello, context([tool]), { model: model.model, streamFn: model.streamFn }))
    expect(ran).toBe(128)
    expect(toolResultsOf(events).filter((r) => r.isError)).toHaveLength(2)
  })
})
