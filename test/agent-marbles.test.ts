/**
 * The Agent, frame by frame: each acceptance scenario as a timeline in
 * virtual time (`expectTimeline(agent.events$)`, the run started by a
 * scheduled `prompt`).
 */
import { describe, expect, it } from 'vitest'
import * as t from 'io-ts'
import { map, timer } from 'rxjs'
import { Agent, type AgentOptions } from '../src/agent/index.js'
import { defineTool } from '../src/tools/define-tool.js'
import { ProviderError } from '../src/types/provider-error.js'
import { assistantMessage, userMessage } from '../src/types/message.js'
import { modelSpec } from '../src/types/model.js'
import { chunk, runAgentMarbles, scriptedModel, type ScriptedResponse } from '../marbles/index.js'

const values = {
  s: chunk.start(),
  a: chunk.text('Hel'),
  b: chunk.text('lo'),
  p: chunk.stop(),
  q: chunk.stop('toolUse'),
}
const work = defineTool({ name: 'work', description: 'Works for 10 frames.', parameters: t.type({ n: t.number }), execute: ({ n }) => timer(10).pipe(map(() => `worked ${n}`)) })
const rm = defineTool({ name: 'rm', description: 'Deletes.', parameters: t.type({ path: t.string }), needsApproval: true, execute: ({ path }) => `deleted ${path}` })
const call = (id: string, name: string, args: Record<string, unknown>): ScriptedResponse => ({
  marbles: '-s-(tae)-(q|)',
  values: { ...values, t: chunk.toolStart(id, name), a: chunk.args(id, JSON.stringify(args)), e: chunk.toolEnd(id) },
})
const hello: ScriptedResponse = { marbles: '-s-a-b-(p|)', values }

/** Runs `act` on a fresh agent at frame 0 and asserts the agent's events as a timeline. */
function agentTimeline(options: Omit<AgentOptions, 'systemPrompt'> & { systemPrompt?: string }, act: (agent: Agent) => void, expected: string): Agent {
  let agent: Agent | undefined
  runAgentMarbles(({ expectTimeline, scheduler }) => {
    agent = new Agent({ systemPrompt: '', ...options })
    expectTimeline(agent.events$).toBe(expected)
    scheduler.schedule(() => act(agent!))
  })
  return agent!
}

describe('Agent timelines', () => {
  it('follow-up: the run goes on with it when it would end', () => {
    const model = scriptedModel([hello, hello])
    agentTimeline(
      { model: model.model, streamFn: model.streamFn },
      (agent) => {
        agent.followUp('and more')
        agent.prompt('hi')
      },
      `
      0 agentStart, turnStart:0, msgStart:user, msgEnd:user
      1 msgStart:assistant
      3 textDelta:"Hel"
      5 textDelta:"lo"
      7 msgEnd:assistant:stop, turnEnd:0, metrics:0, turnStart:1, msgStart:user, msgEnd:user
      8 msgStart:assistant
      10 textDelta:"Hel"
      12 textDelta:"lo"
      14 msgEnd:assistant:stop, turnEnd:1, metrics:1, agentEnd:stop
      `,
    )
  })

  it('steering during a tool batch joins the next turn (one at a time)', () => {
    const model = scriptedModel([call('c1', 'work', { n: 1 }), hello, hello])
    agentTimeline(
      { model: model.model, streamFn: model.streamFn, tools: [work] },
      (agent) => {
        agent.prompt('go')
        agent.steer('first')
        agent.steer('second')
      },
      `
      0 agentStart, turnStart:0, msgStart:user, msgEnd:user
      1 msgStart:assistant
      3 toolUseStart:c1, toolUseArgsDelta:c1:{"n":1}, toolUseEnd:c1
      9 msgEnd:assistant:toolUse, toolStart:c1
      19 toolEnd:c1, msgStart:toolResult, msgEnd:toolResult:c1, turnEnd:0, metrics:0, turnStart:1, msgStart:user, msgEnd:user
      20 msgStart:assistant
      22 textDelta:"Hel"
      24 textDelta:"lo"
      26 msgEnd:assistant:stop, turnEnd:1, metrics:1, turnStart:2, msgStart:user, msgEnd:user
      27 msgStart:assistant
      29 textDelta:"Hel"
      31 textDelta:"lo"
      33 msgEnd:assistant:stop, turnEnd:2, metrics:2, agentEnd:stop
      `,
    )
  })

  it("queue mode 'all': every waiting message at once", () => {
    const model = scriptedModel([call('c1', 'work', { n: 1 }), hello])
    agentTimeline(
      { model: model.model, streamFn: model.streamFn, tools: [work], steeringMode: 'all' },
      (agent) => {
        agent.prompt('go')
        agent.steer('first')
        agent.steer('second')
      },
      `
      0 agentStart, turnStart:0, msgStart:user, msgEnd:user
      1 msgStart:assistant
      3 toolUseStart:c1, toolUseArgsDelta:c1:{"n":1}, toolUseEnd:c1
      9 msgEnd:assistant:toolUse, toolStart:c1
      19 toolEnd:c1, msgStart:toolResult, msgEnd:toolResult:c1, turnEnd:0, metrics:0, turnStart:1, msgStart:user, msgEnd:user, msgStart:user, msgEnd:user
      20 msgStart:assistant
      22 textDelta:"Hel"
      24 textDelta:"lo"
      26 msgEnd:assistant:stop, turnEnd:1, metrics:1, agentEnd:stop
      `,
    )
  })

  it('approval, smart mode: only the tool that needs approval asks', () => {
    const model = scriptedModel([
      { marbles: '-s-(tae)(TAE)-(q|)', values: { ...values, t: chunk.toolStart('c1', 'work'), a: chunk.args('c1', '{"n":1}'), e: chunk.toolEnd('c1'), T: chunk.toolStart('c2', 'rm'), A: chunk.args('c2', '{"path":"/x"}'), E: chunk.toolEnd('c2') } },
      hello,
    ])
    agentTimeline(
      { model: model.model, streamFn: model.streamFn, tools: [work, rm], approveTool: () => ({ approved: false, reason: 'not today' }) },
      (agent) => agent.prompt('go'),
      `
      0 agentStart, turnStart:0, msgStart:user, msgEnd:user
      1 msgStart:assistant
      3 toolUseStart:c1, toolUseArgsDelta:c1:{"n":1}, toolUseEnd:c1
      8 toolUseStart:c2, toolUseArgsDelta:c2:{"path":"/x"}, toolUseEnd:c2
      14 msgEnd:assistant:toolUse, approve?:c2, rejected:c2, toolStart:c1, toolStart:c2, toolEnd:c2:error
      24 toolEnd:c1, msgStart:toolResult, msgEnd:toolResult:c1, msgStart:toolResult, msgEnd:toolResult:c2, turnEnd:0, metrics:0, turnStart:1
      25 msgStart:assistant
      27 textDelta:"Hel"
      29 textDelta:"lo"
      31 msgEnd:assistant:stop, turnEnd:1, metrics:1, agentEnd:stop
      `,
    )
  })

  it('fallback: the next model takes over the turn, one logical message', () => {
    const overloaded = ProviderError.of('overloaded', 'a', 'overloaded', { status: 529 })
    const a = scriptedModel([{ marbles: '-s-a-#', values, error: overloaded }], { model: modelSpec('a', 'primary') })
    const b = scriptedModel([hello], { model: modelSpec('b', 'backup') })
    const agent = agentTimeline(
      { model: a.model, streamFn: a.streamFn, retry: false, fallback: [{ model: b.model, streamFn: b.streamFn }] },
      (ag) => ag.prompt('hi'),
      `
      0 agentStart, turnStart:0, msgStart:user, msgEnd:user
      1 msgStart:assistant
      3 textDelta:"Hel"
      5 fallback:backup, retry:1:overloaded
      8 textDelta:"Hel"
      10 textDelta:"lo"
      12 msgEnd:assistant:stop, turnEnd:0, metrics:0, agentEnd:stop
      `,
    )
    expect(agent.state.messages.filter((m) => m.role === 'assistant')).toMatchObject([{ provider: 'b', model: 'backup', content: [{ type: 'text', text: 'Hello' }] }])
  })

  it('overflow recovery, then a second overflow is a clear error', () => {
    const overflow = ProviderError.of('contextOverflow', 'p', 'p 400: prompt is too long', { status: 400 })
    const history = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? userMessage(`q${i} ${'x'.repeat(300)}`) : assistantMessage(`a${i} ${'y'.repeat(300)}`)))
    const ok = scriptedModel([overflow, hello])
    agentTimeline(
      { model: ok.model, streamFn: ok.streamFn, messages: history, contextWindow: { overflowMaxTokens: 300 } },
      (agent) => agent.prompt('latest'),
      `
      0 agentStart, turnStart:0, msgStart:user, msgEnd:user, retry:1:contextOverflow, compaction:overflow:-17
      1 msgStart:assistant
      3 textDelta:"Hel"
      5 textDelta:"lo"
      7 msgEnd:assistant:stop, turnEnd:0, metrics:0, agentEnd:stop
      `,
    )
    const twice = scriptedModel([overflow, overflow])
    const agent = agentTimeline(
      { model: twice.model, streamFn: twice.streamFn, messages: history, contextWindow: { overflowMaxTokens: 300 } },
      (ag) => ag.prompt('latest'),
      `
      0 agentStart, turnStart:0, msgStart:user, msgEnd:user, retry:1:contextOverflow, compaction:overflow:-17, msgStart:assistant, msgEnd:assistant:error, turnEnd:0, metrics:0, agentEnd:error
      `,
    )
    expect(agent.state.error).toMatch(/still overflowed after compaction/)
  })

  it('structured output: one invalid attempt, fed back, then the answer', () => {
    const respond = (id: string, args: Record<string, unknown>): ScriptedResponse => call(id, 'respond', args)
    const model = scriptedModel([respond('r1', { city: 'Paris', population: 'many' }), respond('r2', { city: 'Paris', population: 2 })])
    let value: Promise<unknown> | undefined
    agentTimeline(
      { model: model.model, streamFn: model.streamFn },
      (agent) => (value = agent.structured(t.type({ city: t.string, population: t.number }), 'city?').value),
      `
      0 agentStart, turnStart:0, msgStart:user, msgEnd:user
      1 msgStart:assistant
      3 toolUseStart:r1, toolUseArgsDelta:r1:{"city":"Paris","population":"many"}, toolUseEnd:r1
      9 msgEnd:assistant:toolUse, toolStart:r1, toolEnd:r1:error, msgStart:toolResult, msgEnd:toolResult:r1, turnEnd:0, metrics:0, turnStart:1
      10 msgStart:assistant
      12 toolUseStart:r2, toolUseArgsDelta:r2:{"city":"Paris","population":2}, toolUseEnd:r2
      18 msgEnd:assistant:toolUse, toolStart:r2, toolEnd:r2, msgStart:toolResult, msgEnd:toolResult:r2, turnEnd:1, metrics:1, policy:postTurn:stop, agentEnd:policyStop
      `,
    )
    return expect(value).resolves.toEqual({ city: 'Paris', population: 2 })
  })

  it('plan mode: the tool that needs approval is not offered', () => {
    const model = scriptedModel([hello])
    agentTimeline(
      { model: model.model, streamFn: model.streamFn, tools: [work, rm] },
      (agent) => {
        agent.enterPlanMode()
        agent.prompt('plan')
      },
      `
      0 agentStart, turnStart:0, msgStart:user, msgEnd:user
      1 msgStart:assistant
      3 textDelta:"Hel"
      5 textDelta:"lo"
      7 msgEnd:assistant:stop, turnEnd:0, metrics:0, agentEnd:stop
      `,
    )
    expect(model.requests[0]!.tools.map((x) => x.name)).toEqual(['work'])
  })

  it('a throwing listener is reported once per event and breaks nothing', () => {
    const model = scriptedModel([{ marbles: '-s-(p|)', values }])
    agentTimeline(
      { model: model.model, streamFn: model.streamFn },
      (agent) => {
        agent.subscribe((e) => {
          if (e.type === 'agentStart') throw new Error('boom')
        }, 'fragile')
        agent.prompt('hi')
      },
      `
      0 agentStart, listenerError:fragile, turnStart:0, msgStart:user, msgEnd:user
      1 msgStart:assistant
      3 msgEnd:assistant:stop, turnEnd:0, metrics:0, agentEnd:stop
      `,
    )
  })

  it('abort mid-stream: the partial answer is kept, the agent is idle at once', () => {
    const model = scriptedModel([{ marbles: '-s-a 20ms b-(p|)', values }])
    let idle = false
    const agent = agentTimeline(
      { model: model.model, streamFn: model.streamFn },
      (ag) => {
        ag.prompt('hi')
        // Abort at frame 10, mid-stream.
        timer(10).subscribe(() => void ag.abort().then(() => (idle = true)))
      },
      `
      0 agentStart, turnStart:0, msgStart:user, msgEnd:user
      1 msgStart:assistant
      3 textDelta:"Hel"
      10 msgEnd:assistant:aborted, turnEnd:0, metrics:0, agentEnd:aborted
      `,
    )
    expect(agent.isRunning).toBe(false)
    expect(agent.state.messages.at(-1)).toMatchObject({ stopReason: 'aborted', content: [{ type: 'text', text: 'Hel' }] })
    return Promise.resolve().then(() => expect(idle).toBe(true))
  })
})
