/**
 * Agent: state, multicast events with stamps, queues and their modes,
 * approval modes, plan mode, listener isolation, abort/waitForIdle,
 * structured output, fallback, checkpoints.
 */
import { describe, expect, it } from 'vitest'
import * as t from 'io-ts'
import { config, of, timer, map } from 'rxjs'
import { Agent, AgentBusyError, InMemoryCheckpointStore, StructuredOutputError, type AgentRunEvent } from '../src/agent/index.js'
import { defineTool } from '../src/tools/define-tool.js'
import { ProviderError } from '../src/types/provider-error.js'
import { modelSpec } from '../src/types/model.js'
import type { AgentMessage } from '../src/types/message.js'
import type { LlmRequest } from '../src/types/request.js'
import { eventLabel, reply, runAgentMarbles, scriptedModel, chunk } from '../marbles/index.js'

const echo = defineTool({ name: 'echo', description: 'Echoes.', parameters: t.type({ text: t.string }), execute: ({ text }) => text })
const slow = defineTool({
  name: 'slow',
  description: 'Takes 10 frames.',
  parameters: t.type({ n: t.number }),
  execute: ({ n }) => timer(10).pipe(map(() => `done ${n}`)),
})
const rm = defineTool({ name: 'rm', description: 'Deletes.', parameters: t.type({ path: t.string }), needsApproval: true, execute: ({ path }) => `deleted ${path}` })

const labels = (events: readonly AgentRunEvent[]): string[] => events.map((e) => eventLabel(e as never))
const texts = (messages: readonly AgentMessage[]): string[] =>
  messages.map((m) => `${m.role}:${m.role === 'custom' ? '' : m.content.map((c) => (c.type === 'text' ? c.text : c.type === 'toolCall' ? `call ${c.name}` : '')).join('')}`)
const strip = (messages: readonly AgentMessage[]) => JSON.parse(JSON.stringify(messages, (k, v) => (k === 'timestamp' ? 0 : v))) as unknown

/** A model whose answer depends on the conversation: n tool rounds, then a text answer. */
function rounds(n: number) {
  return (request: LlmRequest) => {
    const results = request.messages.filter((m) => m.role === 'toolResult').length
    const users = request.messages.filter((m) => m.role === 'user').length
    return results < n ? reply.toolCalls([{ id: `c${results}`, name: 'echo', args: { text: `r${results}` } }]) : reply.text(`final after ${results} results, ${users} user messages`)
  }
}

describe('Agent', () => {
  it('folds events into immutable state and stamps every event with agent, run and turn', async () => {
    const model = scriptedModel([reply.toolCalls([{ id: 'c1', name: 'echo', args: { text: 'hi' } }]), reply.text('done')])
    const agent = new Agent({ id: 'a1', systemPrompt: 'sys', model: model.model, streamFn: model.streamFn, tools: [echo] })
    const states: boolean[] = []
    agent.state$.subscribe((s) => states.push(s.isRunning))
    const seen: AgentRunEvent[] = []
    agent.subscribe((e) => seen.push(e))
    const before = agent.state
    const result = await agent.prompt('hello')
    expect(result.stopReason).toBe('stop')
    expect(texts(agent.state.messages)).toEqual(['user:hello', 'assistant:call echo', 'toolResult:hi', 'assistant:done'])
    expect(Object.isFrozen(agent.state)).toBe(true)
    expect(before.messages).toHaveLength(0)
    expect(states[0]).toBe(false)
    expect(states).toContain(true)
    expect(states.at(-1)).toBe(false)
    expect(seen.every((e) => e.agentId === 'a1' && e.runId === 'a1/run-1')).toBe(true)
    expect(seen.find((e) => e.type === 'turnStart' && e.turnIndex === 1)?.turnIndex).toBe(1)
    expect(seen.filter((e) => e.type === 'messageEnd').at(-1)?.turnIndex).toBe(1)
    expect(seen.filter((e) => e.type === 'turnMetrics')).toHaveLength(2)
  })

  it('snapshots during streaming share the history: no copy per token', () => {
    const history = Array.from({ length: 1000 }, (_, i) => ({ role: 'user' as const, content: [{ type: 'text' as const, text: `m${i}` }], timestamp: 0 }))
    const model = scriptedModel([reply.text('streamed answer', { deltas: 5 })])
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, messages: history, transformContext: false })
    const during: { messages: readonly AgentMessage[]; stream: unknown }[] = []
    agent.state$.subscribe((s) => s.streamMessage !== undefined && during.push({ messages: s.messages, stream: s.streamMessage }))
    void agent.prompt('q')
    expect(during.length).toBeGreaterThanOrEqual(5)
    expect(new Set(during.map((d) => d.messages)).size).toBe(1)
    expect(during.every((d) => Object.isFrozen(d.stream))).toBe(true)
  })

  it("state$: the current snapshot to each new subscriber, then every change to all, in subscription order; one that throws, leaves or joins mid-emission changes nothing for the others", async () => {
    const model = scriptedModel([reply.text('one two three', { deltas: 3 })])
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn })
    const order: string[] = []
    const a: unknown[] = []
    const c: unknown[] = []
    const late: unknown[] = []
    const joined: { first: unknown; current: unknown }[] = []
    agent.state$.subscribe((s) => {
      order.push('a')
      a.push(s)
      if (s.streamMessage !== undefined && late.length === 0) {
        // Joins mid-emission: gets the current snapshot at once, and this emission not again.
        agent.state$.subscribe((t) => late.push(t))
        joined.push({ first: late[0], current: s })
      }
    })
    const b = agent.state$.subscribe(() => {
      order.push('b')
      throw new Error('a broken reader')
    })
    agent.state$.subscribe((s) => {
      order.push('c')
      c.push(s)
    })
    // Leaves at its second snapshot, mid-run.
    let leaving: { unsubscribe(): void } | undefined
    let left = 0
    leaving = agent.state$.subscribe(() => ++left === 2 && leaving?.unsubscribe())
    const errors: unknown[] = []
    const before = config.onUnhandledError
    config.onUnhandledError = (error) => errors.push(error)
    try {
      await agent.prompt('go')
      await new Promise((resolve) => setTimeout(resolve, 0))
    } finally {
      config.onUnhandledError = before
      b.unsubscribe()
    }
    expect(agent.state.messages).toHaveLength(2)
    expect(order.slice(0, 3)).toEqual(['a', 'b', 'c'])
    expect(order.filter((x) => x === 'a')).toHaveLength(order.filter((x) => x === 'c').length)
    expect(c).toEqual(a)
    expect(a.at(-1)).toBe(agent.state)
    expect(new Set(a).size).toBe(a.length)
    expect(joined).toEqual([{ first: joined[0]!.current, current: joined[0]!.current }])
    expect(late.at(-1)).toBe(agent.state)
    expect(late.filter((s) => s === joined[0]!.current)).toHaveLength(1)
    expect(errors.length).toBe(order.filter((x) => x === 'b').length)
    expect(left).toBe(2)
  })

  it('a second prompt while running is a clear error, or a follow-up when asked', () => {
    let queued: Agent | undefined
    runAgentMarbles(() => {
      const values = { s: chunk.start(), p: chunk.stop() }
      const model = scriptedModel([{ marbles: '-s-(p|)', values }])
      const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn })
      agent.prompt('one')
      expect(() => agent.prompt('two')).toThrow(AgentBusyError)
      expect(() => agent.prompt('two')).toThrow(/already running/)
      const other = scriptedModel([{ marbles: '-s-(p|)', values }, { marbles: '-s-(p|)', values }])
      queued = new Agent({ systemPrompt: '', model: other.model, streamFn: other.streamFn, whileRunning: 'followUp' })
      const first = queued.prompt('one')
      const second = queued.prompt('two')
      expect(second.runId).toBe(first.runId)
    })
    expect(texts(queued!.state.messages)).toEqual(['user:one', 'assistant:', 'user:two', 'assistant:'])
  })

  it('steering during a tool batch joins the next turn; between turns, one at a time', () => {
    const events: AgentRunEvent[] = []
    runAgentMarbles(({ scheduler }) => {
      const model = scriptedModel([reply.toolCalls([{ id: 'c1', name: 'slow', args: { n: 1 } }]), reply.text('a'), reply.text('b'), reply.text('c')])
      const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, tools: [slow] })
      agent.subscribe((e) => events.push(e))
      agent.prompt('go')
      scheduler.schedule(() => {
        agent.steer('first steer')
        agent.steer('second steer')
      }, 5)
    })
    const users = events.filter((e) => e.type === 'messageEnd' && e.message.role === 'user').map((e) => `${e.turnIndex}:${(e as unknown as { message: { content: { text: string }[] } }).message.content[0]!.text}`)
    // one-at-a-time: turn 1 gets the first steer, turn 2 the second.
    expect(users).toEqual(['0:go', '1:first steer', '2:second steer'])
    const order = labels(events)
    expect(order.indexOf('msgEnd:toolResult:c1')).toBeLessThan(order.indexOf('turnStart:1'))
  })

  it("steering mode 'all' delivers every queued message at once", () => {
    const events: AgentRunEvent[] = []
    runAgentMarbles(({ scheduler }) => {
      const model = scriptedModel([reply.toolCalls([{ id: 'c1', name: 'slow', args: { n: 1 } }]), reply.text('a')])
      const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, tools: [slow], steeringMode: 'all' })
      agent.subscribe((e) => events.push(e))
      agent.prompt('go')
      scheduler.schedule(() => {
        agent.steer('s1')
        agent.steer('s2')
      }, 5)
    })
    expect(events.filter((e) => e.type === 'messageEnd' && e.message.role === 'user').map((e) => e.turnIndex)).toEqual([0, 1, 1])
    expect(events.filter((e) => e.type === 'turnStart')).toHaveLength(2)
  })

  it('follow-ups continue a run that would end, one per turn by default', async () => {
    const model = scriptedModel([reply.text('a'), reply.text('b'), reply.text('c')])
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn })
    agent.followUp('more')
    agent.followUp('even more')
    expect(agent.pendingFollowUps).toHaveLength(2)
    const result = await agent.prompt('start')
    expect(texts(result.messages)).toEqual(['user:start', 'assistant:a', 'user:more', 'assistant:b', 'user:even more', 'assistant:c'])
    expect(agent.pendingFollowUps).toHaveLength(0)
  })

  it('external sources feed the queues', async () => {
    const model = scriptedModel([reply.text('a'), reply.text('b')])
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn })
    agent.feed('followUp', of('from a socket'))
    const result = await agent.prompt('start')
    expect(texts(result.messages)).toContain('user:from a socket')
  })

  describe('approval modes', () => {
    const script = () => scriptedModel([reply.toolCalls([{ id: 'c1', name: 'echo', args: { text: 'x' } }, { id: 'c2', name: 'rm', args: { path: '/tmp/a' } }]), reply.text('ok')])
    const asked: string[] = []
    const approveTool = (r: { tool: { name: string } }) => {
      asked.push(r.tool.name)
      return { approved: true } as const
    }

    it('smart (default): only tools that need approval ask', async () => {
      asked.length = 0
      const model = script()
      const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, tools: [echo, rm], approveTool })
      const events: AgentRunEvent[] = []
      agent.subscribe((e) => events.push(e))
      await agent.prompt('go')
      expect(asked).toEqual(['rm'])
      expect(events.filter((e) => e.type === 'toolApprovalRequest').map((e) => (e as { toolName: string }).toolName)).toEqual(['rm'])
    })

    it('enabled: every call asks', async () => {
      asked.length = 0
      const model = script()
      await new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, tools: [echo, rm], approveTool, approvalMode: 'enabled' }).prompt('go')
      expect(asked).toEqual(['echo', 'rm'])
    })

    it('bypassed: nothing asks', async () => {
      asked.length = 0
      const model = script()
      const result = await new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, tools: [echo, rm], approveTool, approvalMode: 'bypassed' }).prompt('go')
      expect(asked).toEqual([])
      expect(texts(result.messages)).toContain('toolResult:deleted /tmp/a')
    })

    it('without an approver, calls that need approval are rejected with a reason', async () => {
      const model = script()
      const result = await new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, tools: [echo, rm] }).prompt('go')
      const rmResult = result.messages.find((m) => m.role === 'toolResult' && m.toolCallId === 'c2')
      expect(rmResult).toMatchObject({ isError: true })
      expect(JSON.stringify(rmResult)).toContain('needs approval and no approver is configured')
    })
  })

  it('plan mode offers only tools that need no approval and adds the addendum', async () => {
    const model = scriptedModel([reply.text('plan'), reply.text('do')])
    const agent = new Agent({ systemPrompt: 'Base.', model: model.model, streamFn: model.streamFn, tools: [echo, rm], planModeAddendum: 'PLAN ONLY.' })
    agent.enterPlanMode()
    expect(agent.state.planMode).toBe(true)
    await agent.prompt('plan it')
    expect(model.requests[0]!.tools.map((t) => t.name)).toEqual(['echo'])
    expect(model.requests[0]!.systemPrompt).toBe('Base.\n\nPLAN ONLY.')
    agent.exitPlanMode()
    await agent.prompt('do it')
    expect(model.requests[1]!.tools.map((t) => t.name)).toEqual(['echo', 'rm'])
    expect(model.requests[1]!.systemPrompt).toBe('Base.')
  })

  it('a listener that throws is isolated and reported; the run and the others go on', async () => {
    const model = scriptedModel([reply.text('hello', { deltas: 3 })])
    const reported: string[] = []
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, onListenerError: (e) => reported.push(String(e)) })
    const good: string[] = []
    agent.subscribe(() => {
      throw new Error('bad listener')
    }, 'bad')
    agent.subscribe((e) => good.push(e.type), 'good')
    const result = await agent.prompt('hi')
    expect(result.stopReason).toBe('stop')
    expect(good).toContain('agentEnd')
    expect(good.filter((t) => t === 'listenerError').length).toBeGreaterThan(5)
    expect(reported[0]).toContain('bad listener')
  })

  it('waitForIdle after abort: the partial answer is kept with stopReason aborted', async () => {
    const model = scriptedModel([{ marbles: '-s-a 5000ms b-(p|)', values: { s: chunk.start(), a: chunk.text('Hel'), b: chunk.text('lo'), p: chunk.stop() } }])
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn })
    const firstDelta = new Promise<void>((resolve) => agent.subscribe((e) => e.type === 'messageUpdate' && resolve()))
    const run = agent.prompt('hi')
    await firstDelta
    expect(agent.isRunning).toBe(true)
    await agent.abort()
    await agent.waitForIdle()
    expect(agent.isRunning).toBe(false)
    expect((await run).stopReason).toBe('aborted')
    expect(agent.state.messages.at(-1)).toMatchObject({ role: 'assistant', stopReason: 'aborted', content: [{ type: 'text', text: 'Hel' }] })
    expect(agent.state.error).toBeDefined()
  })

  it('structured output: an invalid attempt is fed back, the second succeeds', async () => {
    const Answer = t.type({ city: t.string, population: t.number })
    const model = scriptedModel([
      reply.toolCalls([{ id: 'r1', name: 'respond', args: { city: 'Paris', population: 'many' } }]),
      reply.toolCalls([{ id: 'r2', name: 'respond', args: { city: 'Paris', population: 2_100_000 } }]),
    ])
    const agent = new Agent({ systemPrompt: 'Geo.', model: model.model, streamFn: model.streamFn })
    const value = await agent.structured(Answer, 'Largest city of France?')
    expect(value).toEqual({ city: 'Paris', population: 2_100_000 })
    const feedback = model.requests[1]!.messages.at(-1)
    expect(feedback).toMatchObject({ role: 'toolResult', toolCallId: 'r1', isError: true })
    expect(JSON.stringify(feedback)).toContain('population')
    expect(model.requests[0]!.tools.map((t) => t.name)).toEqual(['respond'])
  })

  it('structured output, native mode: the schema goes in responseFormat; an invalid answer is fed back', async () => {
    const Answer = t.type({ city: t.string, population: t.number })
    const model = scriptedModel([reply.text('{"city":"Paris","population":"many"}'), reply.text('```json\n{"city":"Paris","population":2100000}\n```')], {
      model: modelSpec('openai', 'gpt-5-mini'),
    })
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn })
    expect(await agent.structured(Answer, 'Largest city of France?')).toEqual({ city: 'Paris', population: 2_100_000 })
    expect(model.requests[0]!.options?.responseFormat).toMatchObject({ name: 'respond', schema: { type: 'object', required: ['city', 'population'] } })
    expect(model.requests[0]!.tools).toEqual([])
    expect(JSON.stringify(model.requests[1]!.messages.at(-1))).toContain('population')
  })

  it('structured output gives up with a clear error after the retries', async () => {
    const bad = (i: number) => reply.toolCalls([{ id: `r${i}`, name: 'respond', args: { wrong: true } }])
    const model = scriptedModel([bad(1), bad(2), bad(3)])
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn })
    const error = await agent.structured(t.type({ ok: t.boolean }), 'x', { maxRetries: 2 }).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(StructuredOutputError)
    expect(String(error)).toMatch(/no valid structured output/)
    expect(model.requests).toHaveLength(3)
  })

  it('structured output of a non-object codec is wrapped in { value }', async () => {
    const model = scriptedModel([reply.toolCalls([{ id: 'r1', name: 'respond', args: { value: ['a', 'b'] } }])])
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn })
    expect(await agent.structured(t.array(t.string), 'list')).toEqual(['a', 'b'])
  })

  it('fallback: the next model finishes the turn, one logical message', async () => {
    const overloaded = ProviderError.of('overloaded', 'a', 'overloaded', { status: 529 })
    const a = scriptedModel([overloaded], { model: modelSpec('a', 'primary') })
    const b = scriptedModel([reply.text('from b')], { model: modelSpec('b', 'backup') })
    const agent = new Agent({ systemPrompt: '', model: a.model, streamFn: a.streamFn, retry: false, fallback: [{ model: b.model, streamFn: b.streamFn }] })
    const events: AgentRunEvent[] = []
    agent.subscribe((e) => events.push(e))
    const result = await agent.prompt('hi')
    expect(result.messages.filter((m) => m.role === 'assistant')).toHaveLength(1)
    expect(result.messages.at(-1)).toMatchObject({ provider: 'b', model: 'backup', content: [{ type: 'text', text: 'from b' }] })
    expect(events.some((e) => e.type === 'modelFallback')).toBe(true)
  })

  it('model cycling goes through the available models and says so', () => {
    const a = scriptedModel([], { model: modelSpec('a', 'one') })
    const b = scriptedModel([], { model: modelSpec('b', 'two') })
    const agent = new Agent({ systemPrompt: '', model: a.model, streamFn: a.streamFn, availableModels: [{ model: b.model, streamFn: b.streamFn }] })
    const changes: string[] = []
    agent.subscribe((e) => e.type === 'modelChange' && changes.push(`${e.from.modelId}→${e.to.modelId}`))
    expect(agent.state.availableModels.map((m) => m.modelId)).toEqual(['one', 'two'])
    expect(agent.cycleModel().modelId).toBe('two')
    expect(agent.cycleModel().modelId).toBe('one')
    expect(changes).toEqual(['one→two', 'two→one'])
  })

  it('the API key resolver is called before every request', async () => {
    const seen: (string | undefined)[] = []
    const model = scriptedModel((request) => {
      seen.push(request.options?.apiKey)
      return request.messages.some((m) => m.role === 'toolResult') ? reply.text('ok') : reply.toolCalls([{ id: 'c', name: 'echo', args: { text: 'x' } }])
    })
    let n = 0
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, tools: [echo], getApiKey: () => `key-${++n}` })
    await agent.prompt('hi')
    expect(seen).toEqual(['key-1', 'key-2'])
  })

  it('checkpoint mid-run → restore in a fresh Agent → the same transcript as an uninterrupted run', async () => {
    const uninterrupted = scriptedModel(rounds(3))
    const reference = new Agent({ systemPrompt: 'sys', model: uninterrupted.model, streamFn: uninterrupted.streamFn, tools: [echo] })
    reference.followUp('and then?')
    await reference.prompt('start')

    const store = new InMemoryCheckpointStore()
    const first = scriptedModel(rounds(3))
    const agent = new Agent({ id: 'cp', systemPrompt: 'sys', model: first.model, streamFn: first.streamFn, tools: [echo], checkpointStore: store })
    agent.followUp('and then?')
    let saved: Promise<unknown> | undefined
    // Checkpoint at the end of turn 1, then kill the agent mid-run.
    agent.subscribe((e) => {
      if (e.type === 'turnEnd' && e.turnIndex === 1 && saved === undefined) {
        saved = agent.checkpoint({ note: 'after turn 1' })
        agent.reset()
      }
    })
    void agent.prompt('start')
    await saved
    const [info] = await store.list('cp')
    const checkpoint = (await store.load(info!.id))!
    expect(checkpoint).toMatchObject({ midRun: true, followUp: [{ role: 'user' }], metadata: { note: 'after turn 1' } })

    const second = scriptedModel(rounds(3))
    const restored = Agent.restore(checkpoint, { streamFn: second.streamFn, tools: [echo] })
    await restored.continue()
    expect(strip(restored.state.messages)).toEqual(strip(reference.state.messages))
    expect(texts(restored.state.messages).at(-1)).toMatch(/^assistant:final after 3 results, 2 user messages/)
  })

  it('a checkpoint taken mid-stream in the first turn keeps the prompt and the drained steering; the restored run redoes the turn', async () => {
    const reference = scriptedModel(rounds(2))
    const ref = new Agent({ systemPrompt: 'sys', model: reference.model, streamFn: reference.streamFn, tools: [echo] })
    await ref.prompt('start')

    const first = scriptedModel(rounds(2))
    const agent = new Agent({ id: 'mid', systemPrompt: 'sys', model: first.model, streamFn: first.streamFn, tools: [echo] })
    let checkpoint: Promise<import('../src/agent/index.js').Checkpoint> | undefined
    agent.subscribe((e) => {
      if (e.type === 'messageUpdate' && checkpoint === undefined) {
        checkpoint = agent.checkpoint()
        agent.reset()
      }
    })
    const killed = await agent.prompt('start')
    expect(killed).toMatchObject({ stopReason: 'aborted', error: 'the agent was reset' })
    const cp = await checkpoint!
    expect(texts(cp.messages)).toEqual(['user:start'])
    const second = scriptedModel(rounds(2))
    const restored = Agent.restore(cp, { streamFn: second.streamFn, tools: [echo] })
    await restored.continue()
    expect(strip(restored.state.messages)).toEqual(strip(ref.state.messages))
  })
})
