/**
 * Issue 12, point 1: an abort ends the run at any moment, whatever it is
 * waiting for. One marble test per waiting point of the loop (a pre-turn /
 * pre-dispatch / post-turn / post-loop policy, the approver, the context
 * transform, the retry backoff, a fallback switch, steering and follow-up
 * sources that never answer), each given as a cold Observable that answers
 * late or never: at the abort frame the run ends `aborted` with `turnEnd`
 * (for a started turn) and `agentEnd`, every tool call has exactly one
 * result, and the pending Observable is unsubscribed at that very frame.
 * Then the Promise shapes (a never-settling and a late Promise).
 */
import { getEventListeners } from 'node:events'
import { describe, expect, it } from 'vitest'
import { NEVER, tap, type Observable } from 'rxjs'
import { chunk, reply, runAgentMarbles, scriptedModel, type ScriptedResponse } from '../marbles/index.js'
import { agentLoop, type AgentLoopConfig } from '../src/loop/agent-loop.js'
import { Approval, type ApprovalDecision } from '../src/policy/approval.js'
import { Verdict, type PolicyVerdict, type PreDispatchVerdict } from '../src/policy/policy.js'
import type { AgentEvent } from '../src/types/event.js'
import { toolCallsOf, type AgentMessage } from '../src/types/message.js'
import { ProviderError } from '../src/types/provider-error.js'
import type { ProviderChunk } from '../src/types/chunk.js'
import type { AgentTool } from '../src/types/tool.js'
import { Agent } from '../src/agent/agent.js'
import type { AgentResult } from '../src/types/result.js'
import { settleTranscript } from '../src/types/settle.js'
import { addTool, collect, context, hello, resultOf, textOf, toolResultsOf } from './helpers.js'

function loop(script: readonly ScriptedResponse[], tools: readonly AgentTool[], extra: Partial<AgentLoopConfig>): Observable<AgentEvent> {
  const model = scriptedModel(script)
  return agentLoop(hello, context(tools), { model: model.model, streamFn: model.streamFn, ...extra })
}
const twoCalls = reply.toolCalls([
  { id: 'c1', name: 'add', args: { a: 1, b: 2 } },
  { id: 'c2', name: 'add', args: { a: 3, b: 4 } },
])
const toolUseFrame0 =
  '0 agentStart, turnStart:0, msgStart:user, msgEnd:user, msgStart:assistant, toolUseStart:c1, toolUseArgsDelta:c1:{"a":1,"b":2}, toolUseEnd:c1, toolUseStart:c2, toolUseArgsDelta:c2:{"a":3,"b":4}, toolUseEnd:c2, msgEnd:assistant:toolUse'
const textFrame0 = '0 agentStart, turnStart:0, msgStart:user, msgEnd:user, msgStart:assistant, textDelta:"hi", msgEnd:assistant:stop'
const overloaded = ProviderError.of('overloaded', 'scripted', 'overloaded', { status: 529 })

/** Every tool call of the run's assistant messages has exactly one result. */
function expectEveryCallAnsweredOnce(events: readonly AgentEvent[]): void {
  const result = resultOf(events)
  const calls = result.messages.flatMap((m) => (m.role === 'assistant' ? toolCallsOf(m).map((c) => c.id) : []))
  const answers = result.messages.flatMap((m) => (m.role === 'toolResult' ? [m.toolCallId] : []))
  expect(answers.sort()).toEqual(calls.sort())
}

describe('abort while a policy is pending (cold Observable that answers late)', () => {
  it('pre-turn: the run ends aborted at the abort frame, no turn starts, the policy is unsubscribed', () => {
    const controller = new AbortController()
    runAgentMarbles(({ cold, scheduler, expectTimeline, expectSubscriptions }) => {
      const verdict$ = cold<PolicyVerdict>('----------(v|)', { v: Verdict.continue })
      const run$ = loop([reply.text('never')], [], { signal: controller.signal, policies: { preTurn: [{ name: 'slow', evaluate: () => verdict$ }] } })
      scheduler.schedule(() => controller.abort(), 3)
      expectTimeline(run$).toBe(`
        0 agentStart
        3 agentEnd:aborted, |
      `)
      expectSubscriptions(verdict$.subscriptions).toBe('^--!')
    })
  })

  it('pre-dispatch: every call gets one aborted result, turnEnd and agentEnd follow, the policy is unsubscribed', () => {
    const controller = new AbortController()
    const seen: AgentEvent[] = []
    runAgentMarbles(({ cold, scheduler, expectTimeline, expectSubscriptions }) => {
      const verdict$ = cold<PreDispatchVerdict>('----------(v|)', { v: Verdict.continue })
      const run$ = loop([twoCalls, reply.text('never')], [addTool], { signal: controller.signal, policies: { preDispatch: [{ name: 'slow', evaluate: () => verdict$ }] } })
      scheduler.schedule(() => controller.abort(), 3)
      expectTimeline(run$.pipe(tap((e) => seen.push(e)))).toBe(`
        ${toolUseFrame0}
        3 toolStart:c1, toolEnd:c1:error, toolStart:c2, toolEnd:c2:error, msgStart:toolResult, msgEnd:toolResult:c1, msgStart:toolResult, msgEnd:toolResult:c2, turnEnd:0, agentEnd:aborted, |
      `)
      expectSubscriptions(verdict$.subscriptions).toBe('^--!')
    })
    expectEveryCallAnsweredOnce(seen)
    expect(toolResultsOf(seen).map(textOf)).toEqual(['Tool call not executed: the run was aborted.', 'Tool call not executed: the run was aborted.'])
  })

  it('post-turn: the run ends aborted, the policy is unsubscribed', () => {
    const controller = new AbortController()
    runAgentMarbles(({ cold, scheduler, expectTimeline, expectSubscriptions }) => {
      const verdict$ = cold<PolicyVerdict>('----------(v|)', { v: Verdict.continue })
      const run$ = loop([reply.text('hi')], [], { signal: controller.signal, policies: { postTurn: [{ name: 'slow', evaluate: () => verdict$ }] } })
      scheduler.schedule(() => controller.abort(), 3)
      expectTimeline(run$).toBe(`
        ${textFrame0}, turnEnd:0
        3 agentEnd:aborted, |
      `)
      expectSubscriptions(verdict$.subscriptions).toBe('^--!')
    })
  })

  it('post-loop: the run ends aborted, the policy is unsubscribed', () => {
    const controller = new AbortController()
    runAgentMarbles(({ cold, scheduler, expectTimeline, expectSubscriptions }) => {
      const verdict$ = cold<PolicyVerdict>('----------(v|)', { v: Verdict.inject(hello) })
      const run$ = loop([reply.text('hi'), reply.text('never')], [], { signal: controller.signal, policies: { postLoop: [{ name: 'slow', evaluate: () => verdict$ }] } })
      scheduler.schedule(() => controller.abort(), 3)
      expectTimeline(run$).toBe(`
        ${textFrame0}, turnEnd:0
        3 agentEnd:aborted, |
      `)
      expectSubscriptions(verdict$.subscriptions).toBe('^--!')
    })
  })
})

describe('abort while the approver is pending', () => {
  it('the pending request is closed (rejected), every call gets one aborted result, the approver is unsubscribed', () => {
    const controller = new AbortController()
    const seen: AgentEvent[] = []
    runAgentMarbles(({ cold, scheduler, expectTimeline, expectSubscriptions }) => {
      const decision$ = cold<ApprovalDecision>('----------(d|)', { d: Approval.approve })
      const run$ = loop([twoCalls, reply.text('never')], [addTool], { signal: controller.signal, approveTool: () => decision$ })
      scheduler.schedule(() => controller.abort(), 3)
      expectTimeline(run$.pipe(tap((e) => seen.push(e)))).toBe(`
        ${toolUseFrame0}, approve?:c1
        3 rejected:c1, toolStart:c1, toolEnd:c1:error, toolStart:c2, toolEnd:c2:error, msgStart:toolResult, msgEnd:toolResult:c1, msgStart:toolResult, msgEnd:toolResult:c2, turnEnd:0, agentEnd:aborted, |
      `)
      expectSubscriptions(decision$.subscriptions).toBe('^--!')
    })
    expectEveryCallAnsweredOnce(seen)
    expect(seen.find((e) => e.type === 'toolApprovalEnd')).toMatchObject({ toolCallId: 'c1', approved: false, reason: 'the run was aborted' })
  })

  it('an abort after the first call was approved: the approved call does not run either', () => {
    const controller = new AbortController()
    const seen: AgentEvent[] = []
    runAgentMarbles(({ cold, scheduler, expectTimeline }) => {
      const approvals = [cold<ApprovalDecision>('-(d|)', { d: Approval.approve }), cold<ApprovalDecision>('-')]
      let asked = 0
      const run$ = loop([twoCalls, reply.text('never')], [addTool], { signal: controller.signal, approveTool: () => approvals[asked++]! })
      scheduler.schedule(() => controller.abort(), 3)
      expectTimeline(run$.pipe(tap((e) => seen.push(e)))).toBe(`
        ${toolUseFrame0}, approve?:c1
        1 approved:c1, approve?:c2
        3 rejected:c2, toolStart:c1, toolEnd:c1:error, toolStart:c2, toolEnd:c2:error, msgStart:toolResult, msgEnd:toolResult:c1, msgStart:toolResult, msgEnd:toolResult:c2, turnEnd:0, agentEnd:aborted, |
      `)
    })
    expectEveryCallAnsweredOnce(seen)
  })
})

describe('abort while the context transform is pending', () => {
  it('the started turn ends (turnEnd), the run ends aborted, the transform is unsubscribed', () => {
    const controller = new AbortController()
    runAgentMarbles(({ cold, scheduler, expectTimeline, expectSubscriptions }) => {
      const transform$ = cold<readonly AgentMessage[]>('----------(m|)', { m: [hello] })
      const run$ = loop([reply.text('never')], [], { signal: controller.signal, transformContext: () => transform$ })
      scheduler.schedule(() => controller.abort(), 3)
      expectTimeline(run$).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user
        3 turnEnd:0, agentEnd:aborted, |
      `)
      expectSubscriptions(transform$.subscriptions).toBe('^--!')
    })
  })
})

describe('abort while the model call waits', () => {
  it('in the retry backoff: the message ends aborted at the abort frame, no second attempt', () => {
    const controller = new AbortController()
    let calls = 0
    runAgentMarbles(({ scheduler, expectTimeline }) => {
      const model = scriptedModel([overloaded, reply.text('never')])
      const run$ = agentLoop(hello, context(), {
        model: model.model,
        streamFn: (r) => (calls++, model.streamFn(r)),
        signal: controller.signal,
        retry: { baseDelayMs: 10, jitter: 0 },
      })
      scheduler.schedule(() => controller.abort(), 5)
      expectTimeline(run$).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user, retry:1:overloaded
        5 msgStart:assistant, msgEnd:assistant:aborted, turnEnd:0, agentEnd:aborted, |
      `)
    })
    expect(calls).toBe(1)
  })

  it('across a fallback switch: the fallback stream is unsubscribed at the abort frame', () => {
    const controller = new AbortController()
    runAgentMarbles(({ cold, scheduler, expectTimeline, expectSubscriptions }) => {
      const primary = scriptedModel([overloaded])
      const backup$ = cold<ProviderChunk>('----------s-(p|)', { s: chunk.start(), p: chunk.stop() })
      const run$ = agentLoop(hello, context(), {
        model: primary.model,
        streamFn: primary.streamFn,
        fallback: [{ model: primary.model, streamFn: () => backup$ }],
        retry: false,
        signal: controller.signal,
      })
      scheduler.schedule(() => controller.abort(), 4)
      expectTimeline(run$).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user, fallback:scripted-1, retry:1:overloaded
        4 msgStart:assistant, msgEnd:assistant:aborted, turnEnd:0, agentEnd:aborted, |
      `)
      expectSubscriptions(backup$.subscriptions).toBe('^---!')
    })
  })
})

describe('abort with steering and follow-up sources that never answer', () => {
  it('the run ends aborted and both sources are unsubscribed at the abort frame', () => {
    const controller = new AbortController()
    runAgentMarbles(({ cold, scheduler, expectTimeline, expectSubscriptions }) => {
      const steering = cold<AgentMessage>('-')
      const followUp = cold<AgentMessage>('-')
      const slow = { marbles: '-s-a------(p|)', values: { s: chunk.start(), a: chunk.text('x'), p: chunk.stop() } }
      const run$ = loop([slow], [], { signal: controller.signal, steering, followUp })
      scheduler.schedule(() => controller.abort(), 5)
      expectTimeline(run$).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user
        1 msgStart:assistant
        3 textDelta:"x"
        5 msgEnd:assistant:aborted, turnEnd:0, agentEnd:aborted, |
      `)
      expectSubscriptions(steering.subscriptions).toBe('^----!')
      expectSubscriptions(followUp.subscriptions).toBe('^----!')
    })
  })
})

describe('abort while a Promise is pending', () => {
  const never = <T>(): Promise<T> => new Promise<T>(() => undefined)
  const cases: readonly { name: string; config: Partial<AgentLoopConfig>; script: readonly ScriptedResponse[] }[] = [
    { name: 'pre-turn policy', config: { policies: { preTurn: [{ name: 'p', evaluate: () => never<PolicyVerdict>() }] } }, script: [reply.text('never')] },
    { name: 'transformContext', config: { transformContext: () => never<readonly AgentMessage[]>() }, script: [reply.text('never')] },
    { name: 'pre-dispatch policy', config: { policies: { preDispatch: [{ name: 'p', evaluate: () => never<PreDispatchVerdict>() }] } }, script: [twoCalls] },
    { name: 'approver', config: { approveTool: () => never<ApprovalDecision>() }, script: [twoCalls] },
    { name: 'post-turn policy', config: { policies: { postTurn: [{ name: 'p', evaluate: () => never<PolicyVerdict>() }] } }, script: [reply.text('hi')] },
    { name: 'post-loop policy', config: { policies: { postLoop: [{ name: 'p', evaluate: () => never<PolicyVerdict>() }] } }, script: [reply.text('hi')] },
  ]
  for (const { name, config, script } of cases) {
    it(`a ${name} that never settles: the run ends aborted at once`, () => {
      const controller = new AbortController()
      const events = collect(loop(script, [addTool], { ...config, signal: controller.signal }))
      expect(events.at(-1)?.type).not.toBe('agentEnd')
      controller.abort()
      expect(resultOf(events).stopReason).toBe('aborted')
      expectEveryCallAnsweredOnce(events)
      expect(events.filter((e) => e.type === 'turnStart').length).toBe(events.filter((e) => e.type === 'turnEnd').length)
    })
  }

  /** A Promise answered by hand, after the abort. */
  function late<T>(): { promise: () => Promise<T>; settle: () => void; value: (v: T) => void } {
    let resolve: ((v: T) => void) | undefined
    let value: T | undefined
    return {
      promise: () => new Promise<T>((r) => (resolve = r)),
      value: (v) => (value = v),
      settle: () => resolve?.(value as T),
    }
  }
  const lateCases: readonly { name: string; make: (l: ReturnType<typeof late<never>>) => Partial<AgentLoopConfig>; value: unknown; script: readonly ScriptedResponse[] }[] = [
    { name: 'pre-turn policy', make: (l) => ({ policies: { preTurn: [{ name: 'p', evaluate: l.promise }] } }), value: Verdict.stop('late'), script: [reply.text('never')] },
    { name: 'transformContext', make: (l) => ({ transformContext: l.promise }), value: [hello], script: [reply.text('never')] },
    { name: 'pre-dispatch policy', make: (l) => ({ policies: { preDispatch: [{ name: 'p', evaluate: l.promise }] } }), value: Verdict.continue, script: [twoCalls, reply.text('never')] },
    { name: 'approver', make: (l) => ({ approveTool: l.promise }), value: Approval.approve, script: [twoCalls, reply.text('never')] },
    { name: 'post-turn policy', make: (l) => ({ policies: { postTurn: [{ name: 'p', evaluate: l.promise }] } }), value: Verdict.inject(hello), script: [reply.text('hi'), reply.text('never')] },
    { name: 'post-loop policy', make: (l) => ({ policies: { postLoop: [{ name: 'p', evaluate: l.promise }] } }), value: Verdict.inject(hello), script: [reply.text('hi'), reply.text('never')] },
  ]
  for (const { name, make, value, script } of lateCases) {
    it(`a ${name} Promise that settles after the abort: its result is ignored`, async () => {
      const controller = new AbortController()
      const answer = late<never>()
      answer.value(value as never)
      const events: AgentEvent[] = []
      let error: unknown
      let completed = false
      loop(script, [addTool], { ...make(answer), signal: controller.signal }).subscribe({
        next: (e) => events.push(e),
        error: (e: unknown) => (error = e),
        complete: () => (completed = true),
      })
      await Promise.resolve()
      controller.abort()
      expect(completed).toBe(true)
      const count = events.length
      answer.settle()
      await new Promise((resolve) => setTimeout(resolve, 0))
      expect(events.length).toBe(count)
      expect(error).toBeUndefined()
      expect(resultOf(events).stopReason).toBe('aborted')
      expectEveryCallAnsweredOnce(events)
    })
  }

  it("the run's signal gets one listener for all its stages, and none once the run ended or was unsubscribed", () => {
    const controller = new AbortController()
    let most = 0
    const count = () => (most = Math.max(most, getEventListeners(controller.signal, 'abort').length))
    const events = collect(loop([twoCalls, twoCalls, reply.text('done')], [addTool], { signal: controller.signal, transformContext: (m) => (count(), m) }).pipe(tap(count)))
    expect(resultOf(events).stopReason).toBe('stop')
    expect(most).toBe(1)
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
    const waiting = loop([reply.text('x')], [], { signal: controller.signal, transformContext: () => NEVER }).subscribe()
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1)
    waiting.unsubscribe()
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
  })

  it('a source that never answers, with no signal: the run still waits (unsubscribing is the way out)', () => {
    const events = collect(loop([reply.text('x')], [], { transformContext: () => NEVER }))
    expect(events.map((e) => e.type)).toEqual(['agentStart', 'turnStart', 'messageStart', 'messageEnd'])
  })
})

describe('Agent.abort() while the run waits', () => {
  const never = <T>(): Promise<T> => new Promise<T>(() => undefined)
  /** Aborts, and checks the agent is settled: abort() resolved, idle, the run ended aborted, the next prompt works. */
  async function expectSettledAfterAbort(agent: Agent, run: PromiseLike<AgentResult>): Promise<void> {
    expect(agent.isRunning).toBe(true)
    await agent.abort()
    expect(agent.isRunning).toBe(false)
    expect(agent.state.isRunning).toBe(false)
    const result = await run
    expect(result.stopReason).toBe('aborted')
    expect(settleTranscript(agent.state.messages)).toEqual(agent.state.messages)
    const next = await agent.prompt('again')
    expect(next.stopReason).toBe('stop')
    expect(textOf(next.messages.at(-1) as { content: readonly { type: string; text?: string }[] })).toBe('second')
  }

  it('a pending approver (a Promise that never settles)', async () => {
    const model = scriptedModel([twoCalls, reply.text('second')])
    let asked = 0
    const agent = new Agent({
      systemPrompt: '',
      model: model.model,
      streamFn: model.streamFn,
      tools: [addTool],
      approvalMode: 'enabled',
      approveTool: () => (asked++ === 0 ? never<ApprovalDecision>() : Approval.approve),
    })
    const run = agent.prompt('go')
    await expectSettledAfterAbort(agent, run)
    expect(agent.state.messages.filter((m) => m.role === 'toolResult')).toHaveLength(2)
  })

  it('a pending pre-turn policy', async () => {
    const model = scriptedModel([reply.text('second')])
    let calls = 0
    const agent = new Agent({
      systemPrompt: '',
      model: model.model,
      streamFn: model.streamFn,
      policies: { preTurn: [{ name: 'slow', evaluate: () => (calls++ === 0 ? never<PolicyVerdict>() : Verdict.continue) }] },
    })
    await expectSettledAfterAbort(agent, agent.prompt('go'))
  })

  it('a pending post-turn policy (an Observable that never emits)', async () => {
    const model = scriptedModel([reply.text('first'), reply.text('second')])
    let calls = 0
    const agent = new Agent({
      systemPrompt: '',
      model: model.model,
      streamFn: model.streamFn,
      policies: { postTurn: [{ name: 'slow', evaluate: () => (calls++ === 0 ? NEVER : Verdict.continue) }] },
    })
    await expectSettledAfterAbort(agent, agent.prompt('go'))
  })

  it('a pending getApiKey', async () => {
    const model = scriptedModel([reply.text('second')])
    let calls = 0
    const agent = new Agent({
      systemPrompt: '',
      model: model.model,
      streamFn: model.streamFn,
      getApiKey: () => (calls++ === 0 ? never<string>() : 'key'),
    })
    await expectSettledAfterAbort(agent, agent.prompt('go'))
    expect(model.requests).toHaveLength(1)
  })
})
