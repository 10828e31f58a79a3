import { describe, expect, it } from 'vitest'
import * as t from 'io-ts'
import { map, tap, timer, type ObservableInput } from 'rxjs'
import { agentLoop, type AgentLoopConfig } from '../src/loop/agent-loop.js'
import { budgetPolicy, loopDetection, maxTurnsPolicy, toolDenyList } from '../src/policy/builtin/index.js'
import { Verdict, type PostTurnView, type PreDispatchView, type PreTurnView } from '../src/policy/policy.js'
import { defineTool } from '../src/tools/define-tool.js'
import type { ToolCallContent } from '../src/types/content.js'
import type { AgentEvent, PolicyDecisionEvent } from '../src/types/event.js'
import { modelSpec } from '../src/types/model.js'
import { assistantMessage, userMessage, type AgentMessage, type AssistantMessage } from '../src/types/message.js'
import type { AgentTool } from '../src/types/tool.js'
import { emptyCost, emptyUsage, usage, type Cost } from '../src/types/usage.js'
import { reply, runAgentMarbles, scriptedModel, type ScriptedResponse } from '../marbles/index.js'
import { addTool, collect, context, delayedTool, hello, resultOf, textOf, toolResultsOf } from './helpers.js'

const call = (id: string, name: string, args: Record<string, unknown> = {}) => ({ id, name, args })

function loop(script: readonly ScriptedResponse[] | ((call: number) => ScriptedResponse), tools: readonly AgentTool[], extra: Partial<AgentLoopConfig> = {}) {
  const model = scriptedModel(typeof script === 'function' ? (_request, n) => script(n) : script, extra.model === undefined ? {} : { model: extra.model })
  return { model, run$: agentLoop(hello, context(tools), { model: model.model, streamFn: model.streamFn, ...extra }) }
}

const decisions = (events: readonly AgentEvent[]): PolicyDecisionEvent[] => events.filter((e): e is PolicyDecisionEvent => e.type === 'policyDecision')
const turnStarts = (events: readonly AgentEvent[]): number[] => events.flatMap((e) => (e.type === 'turnStart' ? [e.turnIndex] : []))

/** A tool answering after 10 virtual ms, so each turn of a timeline gets its own frame. */
const search = defineTool({
  name: 'search',
  description: 'Searches.',
  parameters: t.type({ q: t.string, page: t.number }),
  execute: () => timer(10).pipe(map(() => 'no results')),
})

/** A builtin's verdict: they all answer synchronously, which this checks. */
function sync<V extends { action: string }>(v: V | ObservableInput<V>): V {
  if (typeof v !== 'object' || v === null || !('action' in v)) throw new Error(`expected a synchronous verdict, got ${String(v)}`)
  return v
}

const preTurnView = (fields: Partial<PreTurnView> = {}): PreTurnView => ({
  turnIndex: 0,
  messages: [],
  model: modelSpec('p', 'm'),
  usage: emptyUsage,
  cost: emptyCost,
  pending: [],
  ...fields,
})

const cost = (total: number): Cost => ({ ...emptyCost, total })

describe('maxTurnsPolicy', () => {
  it('stops before turn index n starts: exactly n turns run', () => {
    const seen: AgentEvent[] = []
    runAgentMarbles(({ expectTimeline }) => {
      const { run$ } = loop(() => reply.toolCalls([call('c', 'work')]), [delayedTool('work', 10)], { policies: { preTurn: [maxTurnsPolicy(2)] } })
      expectTimeline(run$.pipe(tap((e) => seen.push(e)))).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user, msgStart:assistant, toolUseStart:c, toolUseArgsDelta:c:{}, toolUseEnd:c, msgEnd:assistant:toolUse, toolStart:c
        10 toolEnd:c, msgStart:toolResult, msgEnd:toolResult:c, turnEnd:0, turnStart:1, msgStart:assistant, toolUseStart:c, toolUseArgsDelta:c:{}, toolUseEnd:c, msgEnd:assistant:toolUse, toolStart:c
        20 toolEnd:c, msgStart:toolResult, msgEnd:toolResult:c, turnEnd:1, policy:preTurn:stop, agentEnd:policyStop, |
      `)
    })
    expect(decisions(seen)).toEqual([{ type: 'policyDecision', slot: 'preTurn', policy: 'maxTurns', action: 'stop', reason: 'max turns (2) reached' }])
    expect(resultOf(seen)).toMatchObject({ stopReason: 'policyStop', stoppedBy: 'maxTurns', error: 'max turns (2) reached' })
  })

  it('0 stops before the first turn; the model is never called', () => {
    const { run$, model } = loop([reply.text('never')], [], { policies: { preTurn: [maxTurnsPolicy(0)] } })
    const events = collect(run$)
    expect(events.map((e) => e.type)).toEqual(['agentStart', 'policyDecision', 'agentEnd'])
    expect(model.requests).toHaveLength(0)
  })

  it('does not stop a run that ends on its own', () => {
    const { run$ } = loop([reply.text('done')], [], { policies: { preTurn: [maxTurnsPolicy(1)] } })
    const events = collect(run$)
    expect(resultOf(events).stopReason).toBe('stop')
    expect(decisions(events)).toEqual([])
  })

  it('composes with other pre-turn policies: injections still apply, the first stop in the slot wins', () => {
    const remind = { name: 'remind', evaluate: () => Verdict.inject(userMessage('be brief')) }
    // Both limits are reached before turn 1: 10 tokens used, one turn run.
    const run = (order: 'maxTurnsFirst' | 'budgetFirst') => {
      const limits = [maxTurnsPolicy(1), budgetPolicy({ maxTotalTokens: 10 })]
      const { run$, model } = loop(() => reply.toolCalls([call('c', 'work')], { usage: { input: 6, output: 4 } }), [delayedTool('work', 0)], {
        policies: { preTurn: [remind, ...(order === 'maxTurnsFirst' ? limits : limits.reverse())] },
      })
      const events: AgentEvent[] = []
      runAgentMarbles(() => run$.subscribe((e) => events.push(e)))
      return { events, model }
    }
    const first = run('maxTurnsFirst')
    expect(decisions(first.events).map((d) => `${d.policy}:${d.action}`)).toEqual(['remind:inject', 'remind:inject', 'maxTurns:stop'])
    expect(first.model.requests).toHaveLength(1)
    expect(first.model.requests[0]?.messages.map((m) => textOf(m as never))).toEqual(['hello', 'be brief'])
    const second = run('budgetFirst')
    expect(decisions(second.events).map((d) => `${d.policy}:${d.action}`)).toEqual(['remind:inject', 'remind:inject', 'budget:stop'])
    expect(resultOf(second.events)).toMatchObject({ stoppedBy: 'budget', error: 'budget: total tokens 10 reached the limit 10' })
  })

  it('verdicts at the edge, and bad arguments', () => {
    const policy = maxTurnsPolicy(3)
    expect(policy.name).toBe('maxTurns')
    expect(sync(policy.evaluate(preTurnView({ turnIndex: 2 })))).toEqual(Verdict.continue)
    expect(sync(policy.evaluate(preTurnView({ turnIndex: 3 })))).toEqual(Verdict.stop('max turns (3) reached'))
    expect(() => maxTurnsPolicy(-1)).toThrow(RangeError)
    expect(() => maxTurnsPolicy(1.5)).toThrow(RangeError)
    expect(() => maxTurnsPolicy(Number.NaN)).toThrow(RangeError)
  })
})

describe('budgetPolicy', () => {
  /** Every turn calls a tool and reports 100 input + 50 output tokens. */
  const everyTurnCallsATool = (n: number): ScriptedResponse => reply.toolCalls([call(`c${n}`, 'work')], { usage: { input: 100, output: 50 } })

  it('a limit crossed during turn 2: exactly turns 0, 1, 2 run, then policyStop naming the limit', () => {
    const seen: AgentEvent[] = []
    const { run$, model } = loop(everyTurnCallsATool, [delayedTool('work', 10)], { policies: { preTurn: [budgetPolicy({ maxTotalTokens: 400 })] } })
    runAgentMarbles(({ expectTimeline }) => {
      expectTimeline(run$.pipe(tap((e) => seen.push(e)))).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user, msgStart:assistant, toolUseStart:c0, toolUseArgsDelta:c0:{}, toolUseEnd:c0, msgEnd:assistant:toolUse, toolStart:c0
        10 toolEnd:c0, msgStart:toolResult, msgEnd:toolResult:c0, turnEnd:0, turnStart:1, msgStart:assistant, toolUseStart:c1, toolUseArgsDelta:c1:{}, toolUseEnd:c1, msgEnd:assistant:toolUse, toolStart:c1
        20 toolEnd:c1, msgStart:toolResult, msgEnd:toolResult:c1, turnEnd:1, turnStart:2, msgStart:assistant, toolUseStart:c2, toolUseArgsDelta:c2:{}, toolUseEnd:c2, msgEnd:assistant:toolUse, toolStart:c2
        30 toolEnd:c2, msgStart:toolResult, msgEnd:toolResult:c2, turnEnd:2, policy:preTurn:stop, agentEnd:policyStop, |
      `)
    })
    expect(turnStarts(seen)).toEqual([0, 1, 2])
    expect(model.requests).toHaveLength(3)
    const reason = 'budget: total tokens 450 reached the limit 400'
    expect(decisions(seen)).toEqual([{ type: 'policyDecision', slot: 'preTurn', policy: 'budget', action: 'stop', reason }])
    expect(resultOf(seen)).toMatchObject({ stopReason: 'policyStop', stoppedBy: 'budget', error: reason, usage: { input: 300, output: 150, total: 450 } })
  })

  it('cost, from the model rates: stops when the run has spent the limit', () => {
    // $10 / $30 per million: 100 in + 50 out cost $0.0025 a turn.
    const model = modelSpec('scripted', 'priced', { cost: { input: 10, output: 30, cacheRead: 1, cacheWrite: 12.5 } })
    const { run$ } = loop(everyTurnCallsATool, [delayedTool('work', 0)], { model, policies: { preTurn: [budgetPolicy({ maxCost: 0.006 })] } })
    const events: AgentEvent[] = []
    runAgentMarbles(() => run$.subscribe((e) => events.push(e)))
    expect(turnStarts(events)).toEqual([0, 1, 2])
    expect(resultOf(events).cost.total).toBeCloseTo(0.0075, 10)
    expect(resultOf(events)).toMatchObject({ stoppedBy: 'budget', error: 'budget: cost $0.0075 reached the limit $0.0060' })
  })

  it('input tokens count cache reads and writes (all prompt tokens sent); output counts reasoning once', () => {
    const policy = budgetPolicy({ maxInputTokens: 1000 })
    const under = preTurnView({ usage: usage({ input: 100, cacheRead: 800, cacheWrite: 99 }) })
    const at = preTurnView({ usage: usage({ input: 100, cacheRead: 800, cacheWrite: 100 }) })
    expect(sync(policy.evaluate(under))).toEqual(Verdict.continue)
    expect(sync(policy.evaluate(at))).toEqual(Verdict.stop('budget: input tokens 1000 reached the limit 1000'))

    const output = budgetPolicy({ maxOutputTokens: 500 })
    // reasoning is part of output: 400 output of which 300 reasoning is 400, not 700.
    expect(sync(output.evaluate(preTurnView({ usage: usage({ output: 400, reasoning: 300 }) })))).toEqual(Verdict.continue)
    expect(sync(output.evaluate(preTurnView({ usage: usage({ output: 501, reasoning: 300 }) })))).toEqual(
      Verdict.stop('budget: output tokens 501 reached the limit 500'),
    )
  })

  it('total tokens use the reported total', () => {
    const policy = budgetPolicy({ maxTotalTokens: 100 })
    // A provider total larger than the sum of the kinds (e.g. tool-use prompt overhead) is what counts.
    expect(sync(policy.evaluate(preTurnView({ usage: usage({ input: 10, output: 10, total: 120 }) })))).toEqual(
      Verdict.stop('budget: total tokens 120 reached the limit 100'),
    )
  })

  it('no limits set: always continue, whatever was spent', () => {
    const policy = budgetPolicy({})
    expect(policy.name).toBe('budget')
    const spent = preTurnView({ turnIndex: 99, usage: usage({ input: 1e9, output: 1e9 }), cost: cost(1e6) })
    expect(sync(policy.evaluate(spent))).toEqual(Verdict.continue)
  })

  it('several limits: the first reached in the order cost, input, output, total is named', () => {
    const policy = budgetPolicy({ maxTotalTokens: 10, maxOutputTokens: 10, maxCost: 1 })
    const view = preTurnView({ usage: usage({ input: 20, output: 20 }), cost: cost(0.5) })
    expect(sync(policy.evaluate(view))).toEqual(Verdict.stop('budget: output tokens 20 reached the limit 10'))
  })

  it('small costs keep their digits', () => {
    const policy = budgetPolicy({ maxCost: 0.00001 })
    expect(sync(policy.evaluate(preTurnView({ cost: cost(0.000012) })))).toEqual(
      Verdict.stop('budget: cost $0.000012 reached the limit $0.000010'),
    )
    expect(sync(budgetPolicy({ maxCost: 0 }).evaluate(preTurnView()))).toEqual(Verdict.stop('budget: cost $0.0000 reached the limit $0.0000'))
  })

  it('rejects limits that cannot be meant; an infinite one is never reached', () => {
    expect(() => budgetPolicy({ maxCost: -1 })).toThrow(/cost limit must be a non-negative number, got -1/)
    expect(() => budgetPolicy({ maxTotalTokens: Number.NaN })).toThrow(RangeError)
    // Infinity is a way to say "no limit" and is never reached.
    const unlimited = budgetPolicy({ maxInputTokens: Number.POSITIVE_INFINITY })
    expect(sync(unlimited.evaluate(preTurnView({ usage: usage({ input: 1e12 }) })))).toEqual(Verdict.continue)
  })
})

describe('toolDenyList', () => {
  const deleted: unknown[] = []
  const deleteFile = defineTool({
    name: 'deleteFile',
    description: 'Deletes a file.',
    parameters: t.type({ path: t.string }),
    execute: (args) => (deleted.push(args), 'deleted'),
  })

  const dispatchView = (name: string, args: Record<string, unknown> = {}): PreDispatchView => ({
    ...preTurnView(),
    toolCall: { type: 'toolCall', id: 'c', name, arguments: args },
    tool: name === 'add' ? addTool : deleteFile,
    args,
  })

  it('by name: the denied call gets an error result saying so, the others run, the run goes on', () => {
    deleted.length = 0
    const seen: AgentEvent[] = []
    const { run$, model } = loop(
      [reply.toolCalls([call('c1', 'deleteFile', { path: '/etc/passwd' }), call('c2', 'add', { a: 1, b: 2 })]), reply.text('I may not delete it; 1 + 2 = 3')],
      [deleteFile, addTool],
      { policies: { preDispatch: [toolDenyList(['deleteFile', 'format'])] } },
    )
    runAgentMarbles(({ expectTimeline }) => {
      expectTimeline(run$.pipe(tap((e) => seen.push(e)))).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user, msgStart:assistant, toolUseStart:c1, toolUseArgsDelta:c1:{"path":"/etc/passwd"}, toolUseEnd:c1, toolUseStart:c2, toolUseArgsDelta:c2:{"a":1,"b":2}, toolUseEnd:c2, msgEnd:assistant:toolUse, policy:preDispatch:skip, toolStart:c1, toolEnd:c1:error, toolStart:c2, toolEnd:c2, msgStart:toolResult, msgEnd:toolResult:c1, msgStart:toolResult, msgEnd:toolResult:c2, turnEnd:0, turnStart:1, msgStart:assistant, textDelta:"I may not delete it; 1 + 2 = 3", msgEnd:assistant:stop, turnEnd:1, agentEnd:stop, |
      `)
    })
    expect(deleted).toEqual([])
    expect(toolResultsOf(seen).map((r) => [r.toolCallId, r.isError, textOf(r)])).toEqual([
      ['c1', true, "Tool call skipped by policy 'toolDenyList': the tool 'deleteFile' is denied"],
      ['c2', false, '3'],
    ])
    expect(decisions(seen)).toEqual([
      { type: 'policyDecision', slot: 'preDispatch', policy: 'toolDenyList', action: 'skip', reason: "the tool 'deleteFile' is denied", toolCallId: 'c1' },
    ])
    // The model is told, and answers.
    expect(model.requests[1]?.messages.filter((m) => m.role === 'toolResult').map((m) => textOf(m as never))).toEqual([
      "Tool call skipped by policy 'toolDenyList': the tool 'deleteFile' is denied",
      '3',
    ])
  })

  it('by rule: a string is the reason, true the default reason, false lets the call run', () => {
    const policy = toolDenyList((name, args) => (name === 'deleteFile' ? String(args.path).startsWith('/etc') && 'system files are off limits' : name === 'format'))
    expect(policy.name).toBe('toolDenyList')
    expect(sync(policy.evaluate(dispatchView('deleteFile', { path: '/etc/hosts' })))).toEqual(Verdict.skip('system files are off limits'))
    expect(sync(policy.evaluate(dispatchView('deleteFile', { path: '/tmp/x' })))).toEqual(Verdict.continue)
    expect(sync(policy.evaluate(dispatchView('format')))).toEqual(Verdict.skip("the tool 'format' is denied"))
    expect(sync(policy.evaluate(dispatchView('add')))).toEqual(Verdict.continue)
    expect(sync(toolDenyList(() => '').evaluate(dispatchView('add')))).toEqual(Verdict.skip("the tool 'add' is denied"))
  })

  it('names match exactly, and the list is copied when the policy is made', () => {
    const names = ['deleteFile']
    const policy = toolDenyList(names)
    names.push('add')
    expect(sync(policy.evaluate(dispatchView('add')))).toEqual(Verdict.continue)
    expect(sync(policy.evaluate(dispatchView('DeleteFile')))).toEqual(Verdict.continue)
    expect(sync(toolDenyList(new Set(['add'])).evaluate(dispatchView('add')))).toEqual(Verdict.skip("the tool 'add' is denied"))
    expect(sync(toolDenyList([]).evaluate(dispatchView('add')))).toEqual(Verdict.continue)
  })

  it('composes: a rule placed after a rewriting policy sees the rewritten arguments', () => {
    const { run$ } = loop([reply.toolCalls([call('c1', 'add', { a: 1, b: 2 })]), reply.text('ok')], [addTool], {
      policies: {
        preDispatch: [
          { name: 'unlucky', evaluate: () => Verdict.rewrite({ a: 13, b: 2 }) },
          toolDenyList((_name, args) => args.a === 13 && 'unlucky numbers are not allowed'),
        ],
      },
    })
    const events = collect(run$)
    expect(textOf(toolResultsOf(events)[0]!)).toBe("Tool call skipped by policy 'toolDenyList': unlucky numbers are not allowed")
    expect(decisions(events).map((d) => `${d.policy}:${d.action}`)).toEqual(['unlucky:rewrite', 'toolDenyList:skip'])
  })

  it('a rule that throws stops the run: a guard does not fail open', () => {
    deleted.length = 0
    const { run$ } = loop([reply.toolCalls([call('c1', 'deleteFile', { path: '/x' })]), reply.text('never')], [deleteFile], {
      policies: {
        preDispatch: [
          toolDenyList(() => {
            throw new Error('rules unavailable')
          }),
        ],
      },
    })
    const events = collect(run$)
    expect(deleted).toEqual([])
    expect(resultOf(events)).toMatchObject({ stopReason: 'policyStop', error: "policy 'toolDenyList' failed: rules unavailable" })
  })
})

describe('loopDetection', () => {
  /** The same search, with its argument keys in a different order every other turn. */
  const sameSearch = (n: number): ScriptedResponse => reply.toolCalls([call(`s${n}`, 'search', n % 2 === 0 ? { q: 'rx', page: 1 } : { page: 1, q: 'rx' })])

  it("stop: the third identical call in a row ends the run after that turn's results", () => {
    const seen: AgentEvent[] = []
    const { run$, model } = loop(sameSearch, [search], { policies: { postTurn: [loopDetection({ action: 'stop' })] } })
    runAgentMarbles(({ expectTimeline }) => {
      expectTimeline(run$.pipe(tap((e) => seen.push(e)))).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user, msgStart:assistant, toolUseStart:s0, toolUseArgsDelta:s0:{"q":"rx","page":1}, toolUseEnd:s0, msgEnd:assistant:toolUse, toolStart:s0
        10 toolEnd:s0, msgStart:toolResult, msgEnd:toolResult:s0, turnEnd:0, turnStart:1, msgStart:assistant, toolUseStart:s1, toolUseArgsDelta:s1:{"page":1,"q":"rx"}, toolUseEnd:s1, msgEnd:assistant:toolUse, toolStart:s1
        20 toolEnd:s1, msgStart:toolResult, msgEnd:toolResult:s1, turnEnd:1, turnStart:2, msgStart:assistant, toolUseStart:s2, toolUseArgsDelta:s2:{"q":"rx","page":1}, toolUseEnd:s2, msgEnd:assistant:toolUse, toolStart:s2
        30 toolEnd:s2, msgStart:toolResult, msgEnd:toolResult:s2, turnEnd:2, policy:postTurn:stop, agentEnd:policyStop, |
      `)
    })
    const reason = "loop detected: the tool 'search' was called with the same arguments 3 times in a row"
    expect(decisions(seen)).toEqual([{ type: 'policyDecision', slot: 'postTurn', policy: 'loopDetection', action: 'stop', reason }])
    expect(resultOf(seen)).toMatchObject({ stopReason: 'policyStop', stoppedBy: 'loopDetection', error: reason })
    expect(model.requests).toHaveLength(3)
  })

  it('nudge: a user message after the third identical call, once per streak; the model recovers', () => {
    const seen: AgentEvent[] = []
    // Turns 0-3 repeat the search (turn 3 ignores the nudge), turn 4 answers.
    const script = (n: number): ScriptedResponse => (n < 4 ? sameSearch(n) : reply.text('nothing found'))
    const { run$, model } = loop(script, [search], { policies: { postTurn: [loopDetection({ action: 'nudge', now: () => 42 })] } })
    runAgentMarbles(({ expectTimeline }) => {
      expectTimeline(run$.pipe(tap((e) => seen.push(e)))).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user, msgStart:assistant, toolUseStart:s0, toolUseArgsDelta:s0:{"q":"rx","page":1}, toolUseEnd:s0, msgEnd:assistant:toolUse, toolStart:s0
        10 toolEnd:s0, msgStart:toolResult, msgEnd:toolResult:s0, turnEnd:0, turnStart:1, msgStart:assistant, toolUseStart:s1, toolUseArgsDelta:s1:{"page":1,"q":"rx"}, toolUseEnd:s1, msgEnd:assistant:toolUse, toolStart:s1
        20 toolEnd:s1, msgStart:toolResult, msgEnd:toolResult:s1, turnEnd:1, turnStart:2, msgStart:assistant, toolUseStart:s2, toolUseArgsDelta:s2:{"q":"rx","page":1}, toolUseEnd:s2, msgEnd:assistant:toolUse, toolStart:s2
        30 toolEnd:s2, msgStart:toolResult, msgEnd:toolResult:s2, turnEnd:2, policy:postTurn:inject, turnStart:3, msgStart:user, msgEnd:user, msgStart:assistant, toolUseStart:s3, toolUseArgsDelta:s3:{"page":1,"q":"rx"}, toolUseEnd:s3, msgEnd:assistant:toolUse, toolStart:s3
        40 toolEnd:s3, msgStart:toolResult, msgEnd:toolResult:s3, turnEnd:3, turnStart:4, msgStart:assistant, textDelta:"nothing found", msgEnd:assistant:stop, turnEnd:4, agentEnd:stop, |
      `)
    })
    expect(decisions(seen)).toEqual([{ type: 'policyDecision', slot: 'postTurn', policy: 'loopDetection', action: 'inject' }])
    const nudge = model.requests[3]?.messages.at(-1)
    expect(nudge).toMatchObject({ role: 'user', timestamp: 42 })
    expect(textOf(nudge as never)).toBe(
      `You have called the tool 'search' with the same arguments 3 times in a row ({"page":1,"q":"rx"}), and repeating it will not give a different result. ` +
        'Do not make this call again; try a different approach, or explain what is blocking you.',
    )
    // The nudge follows the tool result, and only one was sent.
    expect(model.requests[3]?.messages.slice(-2).map((m) => m.role)).toEqual(['toolResult', 'user'])
    expect(model.requests[4]?.messages.filter((m) => m.role === 'user')).toHaveLength(2)
    expect(resultOf(seen).stopReason).toBe('stop')
  })

  it('nudge and stop compose: nudge at 2, stop at 4', () => {
    const { run$, model } = loop(sameSearch, [search], {
      policies: { postTurn: [loopDetection({ threshold: 2, action: 'nudge', nudge: 'try another query' }), loopDetection({ threshold: 4, action: 'stop' })] },
    })
    const events: AgentEvent[] = []
    runAgentMarbles(() => run$.subscribe((e) => events.push(e)))
    expect(decisions(events).map((d) => `${d.action}:${d.reason ?? ''}`)).toEqual([
      'inject:',
      "stop:loop detected: the tool 'search' was called with the same arguments 4 times in a row",
    ])
    expect(model.requests).toHaveLength(4)
    expect(model.requests[2]?.messages.filter((m) => m.role === 'user').map((m) => textOf(m as never))).toEqual(['hello', 'try another query'])
  })

  describe('streaks, from the transcript', () => {
    type Call = readonly [name: string, args?: Record<string, unknown>]
    let ids = 0
    const toolCall = ([name, args = {}]: Call): ToolCallContent => ({ type: 'toolCall', id: `t${ids++}`, name, arguments: args })
    const turn = (...calls: Call[]): AssistantMessage =>
      calls.length === 0 ? assistantMessage('just text') : assistantMessage(calls.map(toolCall), { stopReason: 'toolUse' })
    const resultFor = (message: AssistantMessage): AgentMessage[] =>
      message.content.flatMap((c) =>
        c.type === 'toolCall' ? [{ role: 'toolResult' as const, toolCallId: c.id, toolName: c.name, content: [], isError: false, timestamp: 0 }] : [],
      )
    /** A transcript of these turns, each followed by its tool results, seen after the last turn. */
    const after = (...turns: AssistantMessage[]): PostTurnView => {
      const messages = turns.flatMap((m) => [m, ...resultFor(m)])
      const message = turns.at(-1)!
      return { ...preTurnView(), messages: [hello, ...messages], message, toolResults: resultFor(message) as never }
    }
    const stop3 = loopDetection({ action: 'stop' })
    const stops = (view: PostTurnView): string | undefined => {
      const v = sync(stop3.evaluate(view))
      return v.action === 'stop' ? v.reason : undefined
    }
    const A: Call = ['read', { path: 'a.txt', opts: { lines: [1, 2], utf8: true } }]
    const AReordered: Call = ['read', { opts: { utf8: true, lines: [1, 2] }, path: 'a.txt' }]
    const B: Call = ['read', { path: 'b.txt' }]

    it('argument key order does not matter, at any depth', () => {
      expect(stops(after(turn(A), turn(AReordered), turn(A)))).toMatch(/'read' was called with the same arguments 3 times/)
    })

    it('different values, array order or tool names are different calls', () => {
      expect(stops(after(turn(A), turn(A), turn(['read', { path: 'a.txt', opts: { lines: [2, 1], utf8: true } }])))).toBeUndefined()
      expect(stops(after(turn(A), turn(A), turn(['write', A[1]])))).toBeUndefined()
      expect(stops(after(turn(['x', { n: 1 }]), turn(['x', { n: '1' }]), turn(['x', { n: 1 }])))).toBeUndefined()
    })

    it('arguments too deep to serialize (a restored transcript) count as unlike any other call, and the policy does not throw', () => {
      let deep: unknown = {}
      for (let i = 0; i < 100_000; i++) deep = { d: deep }
      const D: Call = ['read', { deep }]
      expect(() => stops(after(turn(D), turn(D), turn(D)))).not.toThrow()
      expect(stops(after(turn(D), turn(D), turn(D)))).toBeUndefined()
      // A deep call between two streaks breaks them, as any different call does.
      expect(stops(after(turn(A), turn(A), turn(D), turn(A)))).toBeUndefined()
    })

    it('a different call or a text-only turn in between resets the streak', () => {
      expect(stops(after(turn(A), turn(A), turn(B), turn(A), turn(A)))).toBeUndefined()
      expect(stops(after(turn(A), turn(B), turn(A), turn(A), turn(A)))).toBeDefined()
      expect(stops(after(turn(A), turn(A), turn(), turn(A)))).toBeUndefined()
    })

    it('counts the call anywhere among a turn’s calls, once per turn', () => {
      expect(stops(after(turn(A, B), turn(['other'], AReordered), turn(A)))).toMatch(/3 times in a row/)
      expect(stops(after(turn(A, A, A)))).toBeUndefined()
      expect(stops(after(turn(A, A), turn(A, A)))).toBeUndefined()
    })

    it('user messages between turns (nudges, steering) do not reset it; the longest streak is named', () => {
      const view = after(turn(A), turn(A), turn(A, B))
      const withSteering = { ...view, messages: [...view.messages.slice(0, 3), userMessage('keep going'), ...view.messages.slice(3)] }
      expect(stops(withSteering)).toBe("loop detected: the tool 'read' was called with the same arguments 3 times in a row")
      expect(stops(after(turn(B), turn(A, B), turn(A, B), turn(B, A)))).toMatch(/4 times in a row/)
    })

    it('calls whose arguments never completed are not repetitions', () => {
      const broken = assistantMessage([{ ...toolCall(A), partialJson: '{"path":' }], { stopReason: 'length' })
      expect(stops(after(turn(A), broken, turn(A)))).toBeUndefined()
      expect(stops(after(turn(A), turn(A), broken))).toBeUndefined()
    })

    it('no tool calls, or the current message not yet in the transcript', () => {
      expect(stops(after(turn()))).toBeUndefined()
      const view = after(turn(A), turn(A), turn(A))
      const current = view.message
      expect(stops({ ...view, messages: view.messages.filter((m) => m !== current && m.role !== 'toolResult') })).toMatch(/3 times/)
    })

    it('nudges exactly when a streak reaches the threshold, even while another streak is past it', () => {
      const nudge = loopDetection({ action: 'nudge', nudge: (c, n) => userMessage(`stop calling ${c.name} (${n}x) with ${JSON.stringify(c.arguments)}`) })
      const injected = (view: PostTurnView): string | undefined => {
        const v = sync(nudge.evaluate(view))
        return v.action === 'inject' ? v.messages.map((m) => textOf(m as never)).join() : undefined
      }
      expect(injected(after(turn(A), turn(A)))).toBeUndefined()
      expect(injected(after(turn(A), turn(A), turn(A)))).toBe(`stop calling read (3x) with ${JSON.stringify(A[1])}`)
      expect(injected(after(turn(A), turn(A), turn(A), turn(A)))).toBeUndefined()
      expect(injected(after(turn(A), turn(A, B), turn(A, B), turn(A, B)))).toBe('stop calling read (3x) with {"path":"b.txt"}')
    })

    it('a default nudge cuts long arguments', () => {
      const policy = loopDetection({ action: 'nudge', threshold: 2, now: () => 7 })
      const long: Call = ['write', { text: 'x'.repeat(1000) }]
      const v = sync(policy.evaluate(after(turn(long), turn(long))))
      expect(v.action).toBe('inject')
      const message = v.action === 'inject' ? v.messages[0] : undefined
      expect(message).toMatchObject({ role: 'user', timestamp: 7 })
      const text = textOf(message as never)
      expect(text).toContain(`({"text":"${'x'.repeat(191)}…)`)
      expect(text.length).toBeLessThan(500)
    })

    it('threshold must be an integer of at least 2; the name is stable', () => {
      expect(loopDetection({ action: 'stop' }).name).toBe('loopDetection')
      expect(() => loopDetection({ action: 'stop', threshold: 1 })).toThrow(/at least 2, got 1/)
      expect(() => loopDetection({ action: 'nudge', threshold: 2.5 })).toThrow(RangeError)
      expect(stops(after(turn(A), turn(A)))).toBeUndefined()
      expect(sync(loopDetection({ action: 'stop', threshold: 2 }).evaluate(after(turn(A), turn(A)))).action).toBe('stop')
    })
  })
})
