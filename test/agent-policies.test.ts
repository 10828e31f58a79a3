/** The Agent's built-in policy options, as timelines: budget stop with the exact turn count, loop detection. */
import { describe, expect, it } from 'vitest'
import * as t from 'io-ts'
import { map, timer } from 'rxjs'
import { Agent, type AgentRunEvent } from '../src/agent/index.js'
import { defineTool } from '../src/tools/define-tool.js'
import { reply, runAgentMarbles, scriptedModel } from '../marbles/index.js'

const work = defineTool({ name: 'work', description: 'Works for 10 frames.', parameters: t.type({ n: t.number }), execute: ({ n }) => timer(10).pipe(map(() => `worked ${n}`)) })

describe('Agent built-in policies', () => {
  it('budget: stops before the turn that would start over budget — exactly 3 turns — and names the limit', () => {
    const events: AgentRunEvent[] = []
    runAgentMarbles(() => {
      // Each turn reports 150 input tokens; the limit of 400 is crossed during turn 2 (450).
      const model = scriptedModel((_r, n) => reply.toolCalls([{ id: `c${n}`, name: 'work', args: { n } }], { usage: { input: 150 } }))
      const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, tools: [work], budget: { maxInputTokens: 400 } })
      agent.subscribe((e) => events.push(e))
      agent.prompt('go')
    })
    expect(events.filter((e) => e.type === 'turnStart').map((e) => e.turnIndex)).toEqual([0, 1, 2])
    const stop = events.find((e) => e.type === 'policyDecision')
    expect(stop).toMatchObject({ policy: 'budget', action: 'stop', slot: 'preTurn' })
    expect((stop as { reason: string }).reason).toMatch(/input tokens 450 reached the limit 400/)
    expect(events.at(-1)).toMatchObject({ type: 'agentEnd', result: { stopReason: 'policyStop', stoppedBy: 'budget' } })
  })

  it('loop detection: the same call three turns in a row stops the run', () => {
    const events: AgentRunEvent[] = []
    runAgentMarbles(() => {
      const model = scriptedModel((_r, n) => reply.toolCalls([{ id: `c${n}`, name: 'work', args: { n: 1 } }]))
      const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, tools: [work], loopDetection: { threshold: 3, action: 'stop' } })
      agent.subscribe((e) => events.push(e))
      agent.prompt('go')
    })
    expect(events.filter((e) => e.type === 'turnStart')).toHaveLength(3)
    expect(events.find((e) => e.type === 'policyDecision')).toMatchObject({ policy: 'loopDetection', action: 'stop', slot: 'postTurn' })
    expect(events.at(-1)).toMatchObject({ type: 'agentEnd', result: { stopReason: 'policyStop' } })
  })

  it('loop detection with a nudge: one reminder joins the transcript, then the model moves on', async () => {
    const model = scriptedModel((request, n) =>
      request.messages.some((m) => m.role === 'user' && JSON.stringify(m).includes('try a different approach')) ? reply.text('changing approach') : reply.toolCalls([{ id: `c${n}`, name: 'work', args: { n: 1 } }]),
    )
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, tools: [work], loopDetection: { threshold: 2, action: 'nudge' } })
    const result = await agent.prompt('go')
    expect(result.stopReason).toBe('stop')
    expect(result.messages.filter((m) => m.role === 'user')).toHaveLength(2)
  })

  it('denyTools: a denied call gets an error result and the run goes on', async () => {
    const model = scriptedModel([reply.toolCalls([{ id: 'c1', name: 'work', args: { n: 1 } }]), reply.text('ok')])
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, tools: [work], denyTools: ['work'] })
    const result = await agent.prompt('go')
    expect(result.messages.find((m) => m.role === 'toolResult')).toMatchObject({ isError: true })
    expect(result.stopReason).toBe('stop')
  })
})
