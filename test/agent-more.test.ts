/** Agent: multicast, forwarders, turn metrics in virtual time, sub-agents. */
import { describe, expect, it } from 'vitest'
import * as t from 'io-ts'
import { map, timer, lastValueFrom, toArray } from 'rxjs'
import { Agent, subAgentTool, type AgentRunEvent, type TurnMetrics } from '../src/agent/index.js'
import { defineTool } from '../src/tools/define-tool.js'
import { modelSpec } from '../src/types/model.js'
import { assistantMessage, userMessage } from '../src/types/message.js'
import { ProviderError } from '../src/types/provider-error.js'
import { chunk, reply, runAgentMarbles, scriptedModel } from '../marbles/index.js'

const work = defineTool({ name: 'work', description: 'Works for 10 frames.', parameters: t.type({ n: t.number }), execute: ({ n }) => timer(10).pipe(map(() => `worked ${n}`)) })

describe('Agent events', () => {
  it('are multicast: two subscribers see the same run once, the model is called once per turn', async () => {
    const model = scriptedModel([reply.text('hi')])
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn })
    const a: string[] = []
    const b: string[] = []
    agent.events$.subscribe((e) => a.push(e.type))
    agent.events$.subscribe((e) => b.push(e.type))
    const run = agent.prompt('hello')
    const replayed = await lastValueFrom(run.events$.pipe(toArray()))
    expect(a).toEqual(b)
    // A late subscriber catches up on everything but the deltas of messages that ended (bounded replay).
    expect(replayed.map((e) => e.type)).toEqual(a.filter((type) => type !== 'messageUpdate'))
    expect(a).toContain('messageUpdate')
    expect(model.requests).toHaveLength(1)
  })

  it("a run no one listens to is replayed stamped as a listener would have seen it, every replay with the same objects", async () => {
    const script = () => [reply.toolCalls([{ id: 'c1', name: 'work', args: { n: 1 } }]), reply.text('done')]
    const stamps = (events: readonly AgentRunEvent[]) => events.map(({ type, agentId, runId, turnIndex }) => ({ type, agentId, runId, turnIndex }))
    const heard = scriptedModel(script())
    const listened = new Agent({ id: 'a', systemPrompt: '', model: heard.model, streamFn: heard.streamFn, tools: [work] })
    const live: AgentRunEvent[] = []
    listened.subscribe((e) => live.push(e))
    await listened.prompt('go')
    const unheard = scriptedModel(script())
    const alone = new Agent({ id: 'a', systemPrompt: '', model: unheard.model, streamFn: unheard.streamFn, tools: [work] })
    const run = alone.prompt('go')
    await run
    const replayed = await lastValueFrom(run.events$.pipe(toArray()))
    expect(stamps(replayed)).toEqual(stamps(live.filter((e) => e.type !== 'messageUpdate')))
    expect(new Set(replayed.map((e) => e.turnIndex))).toEqual(new Set([0, 1]))
    const again = await lastValueFrom(run.events$.pipe(toArray()))
    expect(again.every((e, i) => e === replayed[i])).toBe(true)
  })

  it('forwarders get every event, isolated like listeners', async () => {
    const model = scriptedModel([reply.text('hi')])
    const log: string[] = []
    const agent = new Agent({
      systemPrompt: '',
      model: model.model,
      streamFn: model.streamFn,
      forwarders: [
        (e) => log.push(`${e.runId}:${e.type}`),
        () => {
          throw new Error('socket closed')
        },
      ],
    })
    const result = await agent.prompt('hello')
    expect(result.stopReason).toBe('stop')
    expect(log[0]).toBe(`${agent.id}/run-1:agentStart`)
    expect(log).toContain(`${agent.id}/run-1:listenerError`)
  })
})

describe('turn metrics', () => {
  it('time to first token, LLM duration, tokens per second and tool durations, in virtual time', () => {
    const collected: TurnMetrics[] = []
    const events: AgentRunEvent[] = []
    runAgentMarbles(() => {
      const values = {
        s: chunk.start(),
        a: chunk.text('Hel'),
        b: chunk.text('lo'),
        c: chunk.toolStart('c1', 'work'),
        d: chunk.args('c1', '{"n":1}'),
        e: chunk.toolEnd('c1'),
        p: chunk.stop('toolUse'),
        u: chunk.usage({ input: 10, output: 40 }),
        q: chunk.stop(),
      }
      const model = scriptedModel([
        { marbles: '----s-a 9ms b-c-d-e-p-(u|)', values },
        { marbles: '--s-a-(q|)', values },
      ])
      const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, tools: [work], metrics: { onTurn: (m) => collected.push(m) } })
      agent.subscribe((e) => events.push(e))
      agent.prompt('go')
    })
    expect(collected).toHaveLength(2)
    const [first] = collected
    expect(first).toMatchObject({ turnIndex: 0, timeToFirstTokenMs: 6, llmDurationMs: 26, tools: [{ toolCallId: 'c1', toolName: 'work', durationMs: 10, isError: false }] })
    // 40 output tokens over 20 ms of streaming (first content at 6, end at 26).
    expect(first!.outputTokensPerSecond).toBeCloseTo(40 / 0.02, 5)
    expect(events.filter((e) => e.type === 'turnMetrics').map((e) => e.turnIndex)).toEqual([0, 1])
  })
})

describe('subAgentTool', () => {
  it("runs another agent, streams its progress as tool updates, returns its answer", async () => {
    const child = scriptedModel([reply.toolCalls([{ id: 'w', name: 'work', args: { n: 7 } }]), reply.text('the answer is 7')], { model: modelSpec('p', 'child') })
    const researcher = subAgentTool({
      name: 'research',
      description: 'Delegates a research task.',
      create: () => new Agent({ id: 'researcher', systemPrompt: 'Research.', model: child.model, streamFn: child.streamFn, tools: [work], maxTurns: 5 }),
    })
    const parent = scriptedModel([reply.toolCalls([{ id: 'r1', name: 'research', args: { task: 'find n' } }]), reply.text('done: 7')])
    const agent = new Agent({ systemPrompt: '', model: parent.model, streamFn: parent.streamFn, tools: [researcher] })
    const updates: string[] = []
    agent.subscribe((e) => e.type === 'toolExecutionUpdate' && updates.push(JSON.stringify(e.partialResult.content)))
    const result = await agent.prompt('go')
    expect(updates.join('\n')).toContain('→ work')
    const toolResult = result.messages.find((m) => m.role === 'toolResult')
    expect(toolResult).toMatchObject({ isError: false, content: [{ type: 'text', text: 'the answer is 7' }], details: { stopReason: 'stop' } })
    expect(child.requests[0]!.messages[0]).toMatchObject({ role: 'user', content: [{ type: 'text', text: 'find n' }] })
  })
})

describe('Agent context window', () => {
  const history = Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? userMessage(`question ${i} ${'x'.repeat(200)}`) : assistantMessage(`answer ${i} ${'y'.repeat(200)}`)))
  const overflow = ProviderError.of('contextOverflow', 'p', 'p 400: prompt is too long: 210000 tokens > 200000 maximum', { status: 400 })

  it('the default sliding window bounds what the model sees and says what it dropped', async () => {
    const model = scriptedModel([reply.text('ok')])
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, messages: history, contextWindow: { maxTokens: 1_000 } })
    const events: AgentRunEvent[] = []
    agent.subscribe((e) => events.push(e))
    await agent.prompt('latest')
    const sent = model.requests[0]!.messages
    expect(sent.length).toBeLessThan(41)
    expect(sent.slice(0, 2)).toEqual(history.slice(0, 2))
    expect(sent.at(-1)).toMatchObject({ role: 'user', content: [{ type: 'text', text: 'latest' }] })
    const compaction = events.find((e) => e.type === 'compaction')
    expect(compaction).toMatchObject({ reason: 'window', keptMessages: sent.length, droppedMessages: 41 - sent.length, budget: 1_000 })
    expect(agent.state.messages).toHaveLength(42) // the transcript itself is untouched
  })

  it('overflow recovery: one retry with the overflow budget, inside the same logical message', async () => {
    const model = scriptedModel([overflow, reply.text('fits now')])
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, messages: history, contextWindow: { maxTokens: 100_000, overflowMaxTokens: 500 } })
    const events: AgentRunEvent[] = []
    agent.subscribe((e) => events.push(e))
    const result = await agent.prompt('latest')
    expect(result.stopReason).toBe('stop')
    expect(model.requests[0]!.messages).toHaveLength(41)
    expect(model.requests[1]!.messages.length).toBeLessThan(10)
    expect(events.find((e) => e.type === 'compaction')).toMatchObject({ reason: 'overflow', budget: 500 })
    expect(result.messages.filter((m) => m.role === 'assistant')).toHaveLength(1)
  })

  it('a second overflow is a clear error', async () => {
    const model = scriptedModel([overflow, overflow])
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, messages: history, contextWindow: { overflowMaxTokens: 500 } })
    const result = await agent.prompt('latest')
    expect(result.stopReason).toBe('error')
    expect(result.error).toMatch(/still overflowed after compaction/)
    expect(agent.state.messages.at(-1)).toMatchObject({ role: 'assistant', stopReason: 'error', errorKind: 'contextOverflow' })
  })
})
