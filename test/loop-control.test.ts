import { describe, expect, it } from 'vitest'
import * as t from 'io-ts'
import { tap } from 'rxjs'
import { agentLoop, agentLoopContinue, type AgentLoopConfig } from '../src/loop/agent-loop.js'
import { emptyCost, emptyUsage } from '../src/types/usage.js'
import { transcriptFromEvents } from '../src/loop/transcript.js'
import { Approval } from '../src/policy/approval.js'
import { Verdict } from '../src/policy/policy.js'
import { defineTool } from '../src/tools/define-tool.js'
import type { AgentEvent } from '../src/types/event.js'
import { assistantMessage, toolCallsOf, userMessage, type AgentMessage } from '../src/types/message.js'
import type { AgentTool } from '../src/types/tool.js'
import { chunk, reply, runAgentMarbles, scriptedModel, type ScriptedResponse } from '../marbles/index.js'
import { addTool, collect, context, delayedTool, hello, resultOf, textOf, toolResultsOf } from './helpers.js'

function loop(script: readonly ScriptedResponse[], tools: readonly AgentTool[], extra: Partial<AgentLoopConfig> = {}) {
  const model = scriptedModel(script)
  return { model, run$: agentLoop(hello, context(tools), { model: model.model, streamFn: model.streamFn, ...extra }) }
}
const call = (id: string, name: string, args: Record<string, unknown> = {}) => ({ id, name, args })
const steer = userMessage('actually, stop that')

describe('steering', () => {
  it('afterBatch (default): a message arriving mid-batch waits for the batch, then starts the next turn', () => {
    runAgentMarbles(({ hot, expectTimeline }) => {
      const steering = hot<AgentMessage>('-----s', { s: steer })
      const { run$, model } = loop([reply.toolCalls([call('a', 'a'), call('b', 'b')]), reply.text('ok')], [delayedTool('a', 10), delayedTool('b', 30)], {
        steering,
      })
      expectTimeline(run$).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user, msgStart:assistant, toolUseStart:a, toolUseArgsDelta:a:{}, toolUseEnd:a, toolUseStart:b, toolUseArgsDelta:b:{}, toolUseEnd:b, msgEnd:assistant:toolUse, toolStart:a, toolStart:b
        10 toolEnd:a
        30 toolEnd:b, msgStart:toolResult, msgEnd:toolResult:a, msgStart:toolResult, msgEnd:toolResult:b, turnEnd:0, turnStart:1, msgStart:user, msgEnd:user, msgStart:assistant, textDelta:"ok", msgEnd:assistant:stop, turnEnd:1, agentEnd:stop, |
      `)
      return model
    })
  })

  it('interrupt: at the next tool boundary, running calls are cancelled and unstarted ones skipped, each with one result', () => {
    const log: string[] = []
    const seen: AgentEvent[] = []
    runAgentMarbles(({ hot, expectTimeline }) => {
      const steering = hot<AgentMessage>('-----s', { s: steer })
      const { run$ } = loop(
        [reply.toolCalls([call('a', 'a'), call('b', 'b'), call('c', 'c')]), reply.text('ok')],
        [delayedTool('a', 10, 'a', log), delayedTool('b', 30, 'b', log), delayedTool('c', 10, 'c', log)],
        { steering, steeringDelivery: 'interrupt', toolExecution: { mode: 'concurrent', limit: 2 } },
      )
      expectTimeline(run$.pipe(tap((e) => seen.push(e)))).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user, msgStart:assistant, toolUseStart:a, toolUseArgsDelta:a:{}, toolUseEnd:a, toolUseStart:b, toolUseArgsDelta:b:{}, toolUseEnd:b, toolUseStart:c, toolUseArgsDelta:c:{}, toolUseEnd:c, msgEnd:assistant:toolUse, toolStart:a, toolStart:b
        10 toolEnd:a, toolEnd:b:error, toolStart:c, toolEnd:c:error, msgStart:toolResult, msgEnd:toolResult:a, msgStart:toolResult, msgEnd:toolResult:b, msgStart:toolResult, msgEnd:toolResult:c, turnEnd:0, turnStart:1, msgStart:user, msgEnd:user, msgStart:assistant, textDelta:"ok", msgEnd:assistant:stop, turnEnd:1, agentEnd:stop, |
      `)
    })
    expect(log).toEqual(['start:a', 'start:b', 'abort:b'])
    const [a, b, c] = toolResultsOf(seen)
    expect(a?.isError).toBe(false)
    expect(textOf(b!)).toBe('Tool call interrupted by a steering message; it did not finish.')
    expect(textOf(c!)).toBe('Tool call skipped: a steering message interrupted the batch before it ran.')
    expect(resultOf(seen).messages.filter((m) => m === steer)).toHaveLength(1)
  })

  it('a steering message after a text-only answer keeps the loop going', () => {
    let given = false
    const { run$, model } = loop([reply.text('first'), reply.text('second')], [], {
      steering: () => (given ? [] : ((given = true), [steer])),
    })
    const events = collect(run$)
    expect(model.requests).toHaveLength(2)
    expect(model.requests[1]?.messages.at(-1)).toBe(steer)
    expect(resultOf(events).stopReason).toBe('stop')
  })

  it('oneAtATime delivers one message per poll point', () => {
    const a = userMessage('a')
    const b = userMessage('b')
    let given = false
    const { run$, model } = loop([reply.text('1'), reply.text('2'), reply.text('3')], [], {
      steering: () => (given ? [] : ((given = true), [a, b])),
      steeringMode: 'oneAtATime',
    })
    collect(run$)
    expect(model.requests.map((r) => textOf(r.messages.at(-1) as never))).toEqual(['hello', 'a', 'b'])
  })
})

describe('follow-up', () => {
  it('continues a run that would stop, with the follow-up message', () => {
    runAgentMarbles(({ expectTimeline }) => {
      let asked = 0
      const { run$ } = loop([reply.text('done'), reply.text('more')], [], {
        followUp: () => (asked++ === 0 ? [userMessage('and then?')] : []),
      })
      expectTimeline(run$).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user, msgStart:assistant, textDelta:"done", msgEnd:assistant:stop, turnEnd:0, turnStart:1, msgStart:user, msgEnd:user, msgStart:assistant, textDelta:"more", msgEnd:assistant:stop, turnEnd:1, agentEnd:stop, |
      `)
    })
  })
})

describe('policies', () => {
  it('pre-turn stop: no turn starts, the run ends with policyStop and the reason', () => {
    runAgentMarbles(({ expectTimeline }) => {
      const { run$, model } = loop([reply.toolCalls([call('c1', 'add', { a: 1, b: 2 })]), reply.text('3')], [addTool], {
        policies: { preTurn: [{ name: 'oneTurn', evaluate: (v) => (v.turnIndex >= 1 ? Verdict.stop('one turn is enough') : Verdict.continue) }] },
      })
      const seen: AgentEvent[] = []
      expectTimeline(run$.pipe(tap((e) => seen.push(e)))).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user, msgStart:assistant, toolUseStart:c1, toolUseArgsDelta:c1:{"a":1,"b":2}, toolUseEnd:c1, msgEnd:assistant:toolUse, toolStart:c1, toolEnd:c1, msgStart:toolResult, msgEnd:toolResult:c1, turnEnd:0, policy:preTurn:stop, agentEnd:policyStop, |
      `)
      return { model, seen }
    })
  })

  it('pre-turn inject: the messages join the transcript at turn start and reach the model', () => {
    const reminder = userMessage('remember: be brief')
    const { run$, model } = loop([reply.text('ok')], [], {
      policies: { preTurn: [{ name: 'remind', evaluate: () => Verdict.inject(reminder) }] },
    })
    const events = collect(run$)
    expect(model.requests[0]?.messages).toEqual([hello, reminder])
    expect(events.map((e) => e.type).slice(0, 3)).toEqual(['agentStart', 'policyDecision', 'turnStart'])
  })

  it('pre-dispatch skip, rewrite and stop, each with exactly one result', () => {
    const seenArgs: unknown[] = []
    const echo = defineTool({ name: 'echo', description: '', parameters: t.type({ v: t.number }), execute: (a) => (seenArgs.push(a), String(a.v)) })
    const { run$, model } = loop(
      [reply.toolCalls([call('c1', 'echo', { v: 1 }), call('c2', 'echo', { v: 2 }), call('c3', 'echo', { v: 3 }), call('c4', 'echo', { v: 4 })])],
      [echo],
      {
        policies: {
          preDispatch: [
            {
              name: 'guard',
              evaluate: ({ args }) =>
                args.v === 1 ? Verdict.skip('not today') : args.v === 2 ? Verdict.rewrite({ v: 20 }) : args.v === 3 ? Verdict.stop('enough') : Verdict.continue,
            },
          ],
        },
      },
    )
    const events: AgentEvent[] = []
    runAgentMarbles(({ expectTimeline }) => {
      expectTimeline(run$.pipe(tap((e) => events.push(e)))).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user, msgStart:assistant, toolUseStart:c1, toolUseArgsDelta:c1:{"v":1}, toolUseEnd:c1, toolUseStart:c2, toolUseArgsDelta:c2:{"v":2}, toolUseEnd:c2, toolUseStart:c3, toolUseArgsDelta:c3:{"v":3}, toolUseEnd:c3, toolUseStart:c4, toolUseArgsDelta:c4:{"v":4}, toolUseEnd:c4, msgEnd:assistant:toolUse, policy:preDispatch:skip, policy:preDispatch:rewrite, policy:preDispatch:stop, toolStart:c1, toolEnd:c1:error, toolStart:c2, toolEnd:c2, toolStart:c3, toolEnd:c3:error, toolStart:c4, toolEnd:c4:error, msgStart:toolResult, msgEnd:toolResult:c1, msgStart:toolResult, msgEnd:toolResult:c2, msgStart:toolResult, msgEnd:toolResult:c3, msgStart:toolResult, msgEnd:toolResult:c4, turnEnd:0, agentEnd:policyStop, |
      `)
    })
    const results = toolResultsOf(events).map((r) => [r.toolCallId, r.isError, textOf(r)])
    expect(results).toEqual([
      ['c1', true, "Tool call skipped by policy 'guard': not today"],
      ['c2', false, '20'],
      ['c3', true, "Tool call not executed: policy 'guard' stopped the run: enough"],
      ['c4', true, 'Tool call not executed: the run is stopping (policyStop: enough).'],
    ])
    expect(seenArgs).toEqual([{ v: 20 }])
    expect(events.filter((e) => e.type === 'policyDecision').map((e) => e.type === 'policyDecision' && `${e.action}:${e.toolCallId}`)).toEqual([
      'skip:c1',
      'rewrite:c2',
      'stop:c3',
    ])
    expect(resultOf(events)).toMatchObject({ stopReason: 'policyStop', error: 'enough', stoppedBy: 'guard' })
    expect(model.requests).toHaveLength(1)
  })

  it('post-turn stop and inject', () => {
    const { run$: stopped } = loop([reply.toolCalls([call('c1', 'add', { a: 1, b: 1 })]), reply.text('x')], [addTool], {
      policies: { postTurn: [{ name: 'once', evaluate: () => Verdict.stop('one turn') }] },
    })
    expect(resultOf(collect(stopped))).toMatchObject({ stopReason: 'policyStop', stoppedBy: 'once' })

    let injected = false
    const { run$: nudged, model } = loop([reply.text('first'), reply.text('second')], [], {
      policies: { postTurn: [{ name: 'nudge', evaluate: () => (injected ? Verdict.continue : ((injected = true), Verdict.inject(userMessage('go on')))) }] },
    })
    collect(nudged)
    expect(model.requests).toHaveLength(2)
  })

  it('post-loop policy runs only when the loop would end', () => {
    const calls: number[] = []
    const { run$ } = loop([reply.toolCalls([call('c1', 'add', { a: 1, b: 1 })]), reply.text('2')], [addTool], {
      policies: { postLoop: [{ name: 'audit', evaluate: (v) => (calls.push(v.turnIndex), Verdict.stop('audited')) }] },
    })
    expect(resultOf(collect(run$))).toMatchObject({ stopReason: 'policyStop', stoppedBy: 'audit' })
    expect(calls).toEqual([1])
  })

  it('a policy that throws stops the run (guards fail closed) and says so', () => {
    const { run$ } = loop([reply.text('x')], [], {
      policies: { preTurn: [{ name: 'broken', evaluate: () => { throw new Error('bug') } }] },
    })
    expect(resultOf(collect(run$))).toMatchObject({ stopReason: 'policyStop', error: "policy 'broken' failed: bug" })
  })

  it('an asynchronous policy is waited for in virtual time', () => {
    runAgentMarbles(({ cold, expectTimeline }) => {
      const { run$ } = loop([reply.text('x')], [], {
        policies: { preTurn: [{ name: 'slow', evaluate: () => cold('-----(c|)', { c: Verdict.continue }) }] },
      })
      expectTimeline(run$).toBe(`
        0 agentStart
        5 turnStart:0, msgStart:user, msgEnd:user, msgStart:assistant, textDelta:"x", msgEnd:assistant:stop, turnEnd:0, agentEnd:stop, |
      `)
    })
  })
})

describe('approval', () => {
  it('reject and approve-with-rewrite, with approval events', () => {
    runAgentMarbles(({ cold, expectTimeline }) => {
      const executed: unknown[] = []
      const echo = defineTool({ name: 'echo', description: '', parameters: t.type({ v: t.number }), execute: (a) => (executed.push(a), String(a.v)) })
      const { run$ } = loop([reply.toolCalls([call('c1', 'echo', { v: 1 }), call('c2', 'echo', { v: 2 })]), reply.text('ok')], [echo], {
        // A human takes 10 frames to decide each.
        approveTool: ({ toolCall }) =>
          cold('----------(d|)', { d: toolCall.id === 'c1' ? Approval.reject('too risky') : Approval.approveWith({ v: 99 }) }),
      })
      const seen: AgentEvent[] = []
      expectTimeline(run$.pipe(tap((e) => seen.push(e)))).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user, msgStart:assistant, toolUseStart:c1, toolUseArgsDelta:c1:{"v":1}, toolUseEnd:c1, toolUseStart:c2, toolUseArgsDelta:c2:{"v":2}, toolUseEnd:c2, msgEnd:assistant:toolUse, approve?:c1
        10 rejected:c1, approve?:c2
        20 rewritten:c2, toolStart:c1, toolEnd:c1:error, toolStart:c2, toolEnd:c2, msgStart:toolResult, msgEnd:toolResult:c1, msgStart:toolResult, msgEnd:toolResult:c2, turnEnd:0, turnStart:1, msgStart:assistant, textDelta:"ok", msgEnd:assistant:stop, turnEnd:1, agentEnd:stop, |
      `)
      return () => {
        expect(executed).toEqual([{ v: 99 }])
        expect(toolResultsOf(seen).map(textOf)).toEqual(['Tool call rejected by the approver: too risky', '99'])
      }
    })()
  })

  it('an approver that throws rejects the call', () => {
    const { run$ } = loop([reply.toolCalls([call('c1', 'add', { a: 1, b: 1 })]), reply.text('ok')], [addTool], {
      approveTool: () => {
        throw new Error('ui crashed')
      },
    })
    expect(textOf(toolResultsOf(collect(run$))[0]!)).toBe('Tool call rejected by the approver: the approver failed: ui crashed')
  })
})

describe('abort', () => {
  it('mid-stream: the partial answer is kept as aborted, then turnEnd and agentEnd', () => {
    const controller = new AbortController()
    const seen: AgentEvent[] = []
    runAgentMarbles(({ scheduler, expectTimeline }) => {
      const slow = { marbles: '-s-a-b-c-(p|)', values: { s: chunk.start(), a: chunk.text('one '), b: chunk.text('two '), c: chunk.text('three'), p: chunk.stop() } }
      const { run$ } = loop([slow], [], { signal: controller.signal })
      scheduler.schedule(() => controller.abort(), 4)
      expectTimeline(run$.pipe(tap((e) => seen.push(e)))).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user
        1 msgStart:assistant
        3 textDelta:"one "
        4 msgEnd:assistant:aborted, turnEnd:0, agentEnd:aborted, |
      `)
    })
    const result = resultOf(seen)
    expect(result.messages.at(-1)).toMatchObject({ role: 'assistant', stopReason: 'aborted', content: [{ type: 'text', text: 'one ' }] })
  })

  it('mid-tool: the running tool is aborted and gets an aborted result; the run ends aborted', () => {
    const controller = new AbortController()
    const log: string[] = []
    const seen: AgentEvent[] = []
    runAgentMarbles(({ scheduler, expectTimeline }) => {
      const { run$ } = loop([reply.toolCalls([call('c1', 'slow'), call('c2', 'fast')]), reply.text('never')], [delayedTool('slow', 30, 'x', log), delayedTool('fast', 5, 'y', log)], {
        signal: controller.signal,
      })
      scheduler.schedule(() => controller.abort(), 10)
      expectTimeline(run$.pipe(tap((e) => seen.push(e)))).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user, msgStart:assistant, toolUseStart:c1, toolUseArgsDelta:c1:{}, toolUseEnd:c1, toolUseStart:c2, toolUseArgsDelta:c2:{}, toolUseEnd:c2, msgEnd:assistant:toolUse, toolStart:c1, toolStart:c2
        5 toolEnd:c2
        10 toolEnd:c1:error, msgStart:toolResult, msgEnd:toolResult:c1, msgStart:toolResult, msgEnd:toolResult:c2, turnEnd:0, agentEnd:aborted, |
      `)
    })
    expect(log).toEqual(['start:slow', 'start:fast', 'abort:slow'])
    expect(textOf(toolResultsOf(seen)[0]!)).toBe('Tool call aborted: the run was aborted before it finished.')
  })

  it('between turns: no new turn starts', () => {
    const controller = new AbortController()
    const { run$, model } = loop([reply.toolCalls([call('c1', 'add', { a: 1, b: 1 })]), reply.text('never')], [addTool], { signal: controller.signal })
    const events = collect(run$.pipe(tap((e) => e.type === 'turnEnd' && controller.abort())))
    expect(resultOf(events).stopReason).toBe('aborted')
    expect(model.requests).toHaveLength(1)
    expect(events.filter((e) => e.type === 'turnStart')).toHaveLength(1)
  })

  it('an already aborted signal: nothing runs', () => {
    const controller = new AbortController()
    controller.abort()
    const { run$, model } = loop([reply.text('never')], [], { signal: controller.signal })
    expect(collect(run$).map((e) => e.type)).toEqual(['agentStart', 'agentEnd'])
    expect(model.requests).toHaveLength(0)
  })

  it('unsubscribing mid-tool cancels the tool; the events seen give a valid transcript', () => {
    const log: string[] = []
    const seen: AgentEvent[] = []
    runAgentMarbles(({ scheduler }) => {
      const { run$ } = loop([reply.toolCalls([call('c1', 'slow')]), reply.text('never')], [delayedTool('slow', 30, 'x', log)])
      const sub = run$.subscribe((e) => seen.push(e))
      scheduler.schedule(() => sub.unsubscribe(), 10)
    })
    expect(log).toEqual(['start:slow', 'abort:slow'])
    expect(seen.at(-1)?.type).toBe('toolExecutionStart')
    const transcript = transcriptFromEvents(seen)
    expect(transcript.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult'])
    expect(transcript[2]).toMatchObject({ toolCallId: 'c1', isError: true })
  })

  it('unsubscribing mid-stream: the partial answer is recoverable as aborted', () => {
    const seen: AgentEvent[] = []
    runAgentMarbles(({ scheduler }) => {
      const slow = { marbles: '-s-a-b-c-(p|)', values: { s: chunk.start(), a: chunk.toolStart('c1', 'add'), b: chunk.args('c1', '{"a":'), c: chunk.text('x'), p: chunk.stop() } }
      const { run$ } = loop([slow], [addTool])
      const sub = run$.subscribe((e) => seen.push(e))
      scheduler.schedule(() => sub.unsubscribe(), 6)
    })
    const transcript = transcriptFromEvents(seen)
    expect(transcript.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult'])
    const assistant = transcript[1]
    expect(assistant?.role === 'assistant' && toolCallsOf(assistant)[0]?.partialJson).toBe('{"a":')
    expect(assistant).toMatchObject({ stopReason: 'aborted' })
  })
})

describe('agentLoopContinue', () => {
  it('continues from a tool result without a new prompt', () => {
    const model = scriptedModel([reply.text('the sum is 3')])
    const assistant = {
      role: 'assistant' as const,
      content: [{ type: 'toolCall' as const, id: 'c1', name: 'add', arguments: { a: 1, b: 2 } }],
      provider: 'p',
      model: 'm',
      usage: emptyUsage,
      cost: emptyCost,
      stopReason: 'toolUse' as const,
      timestamp: 0,
    }
    const result: AgentMessage = { role: 'toolResult', toolCallId: 'c1', toolName: 'add', content: [{ type: 'text', text: '3' }], isError: false, timestamp: 0 }
    const events = collect(agentLoopContinue(context([addTool], [hello, assistant, result]), { model: model.model, streamFn: model.streamFn }))
    expect(model.requests[0]?.messages).toEqual([hello, assistant, result])
    expect(resultOf(events).messages.map((m) => m.role)).toEqual(['assistant'])
    expect(events.filter((e) => e.type === 'messageStart').map((e) => e.type === 'messageStart' && e.message.role)).toEqual(['assistant'])
  })

  it('continues after an answer that was cut off (aborted, failed): the model is asked again with it in the transcript', () => {
    for (const stopReason of ['aborted', 'error'] as const) {
      const model = scriptedModel([reply.text('again')])
      const cut = assistantMessage('half an ans', { stopReason, errorMessage: 'cut off' })
      const events = collect(agentLoopContinue(context([], [hello, cut]), { model: model.model, streamFn: model.streamFn }))
      expect(model.requests[0]?.messages).toEqual([hello, cut])
      expect(resultOf(events).messages.map((m) => (m.role === 'assistant' ? m.content : m.role))).toEqual([[{ type: 'text', text: 'again' }]])
    }
  })

  it('refuses to continue after an assistant message, in words', () => {
    const model = scriptedModel([reply.text('x')])
    const errors: unknown[] = []
    agentLoopContinue(context([], [hello, assistantMessage('x')]), { model: model.model, streamFn: model.streamFn }).subscribe({
      error: (e: unknown) => errors.push(e),
    })
    expect(String(errors[0])).toMatch(/the last message is the assistant's; add a user or tool result message first/)
    expect(model.requests).toHaveLength(0)
  })
})

describe('transformContext', () => {
  it('an asynchronous transform decides what the model sees; the transcript is untouched', () => {
    runAgentMarbles(({ cold, expectTimeline }) => {
      const model = scriptedModel([reply.text('ok')])
      const older = userMessage('old news')
      const run$ = agentLoop(hello, context([], [older]), {
        model: model.model,
        streamFn: model.streamFn,
        transformContext: (messages) => cold('---(m|)', { m: messages.slice(-1) }),
      })
      const seen: AgentEvent[] = []
      expectTimeline(run$.pipe(tap((e) => seen.push(e)))).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user
        3 msgStart:assistant, textDelta:"ok", msgEnd:assistant:stop, turnEnd:0, agentEnd:stop, |
      `)
      return () => {
        expect(model.requests[0]?.messages).toEqual([hello])
        expect(resultOf(seen).messages.map((m) => m.role)).toEqual(['user', 'assistant'])
      }
    })()
  })

  it('a failing transform stops the run with an error that says so; the turn ends without an answer', () => {
    const model = scriptedModel([reply.text('never')])
    const events = collect(
      agentLoop(hello, context(), {
        model: model.model,
        streamFn: model.streamFn,
        transformContext: () => {
          throw new Error('window too small')
        },
      }),
    )
    expect(resultOf(events)).toMatchObject({ stopReason: 'error', error: 'transformContext failed: window too small' })
    expect(events.find((e) => e.type === 'turnEnd')).toEqual({ type: 'turnEnd', turnIndex: 0, toolResults: [] })
    expect(model.requests).toHaveLength(0)
  })
})
