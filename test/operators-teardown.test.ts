/**
 * The standard teardown test, for every stage operator and for runTool,
 * runTurns and agentLoop: unsubscribing mid-way unsubscribes everything the
 * operator started (source, inner Observables, model stream, tools and their
 * AbortSignal, timers, the abort notifier, policy / approval / transform
 * Observables, steering and follow-up sources) at that very frame, the
 * events seen before are exactly the expected ones, and nothing runs after.
 *
 * Also, per operator: events pass through untouched and synchronously, and a
 * synchronous source is no longer pulled once the output is unsubscribed.
 */
import { describe, expect, it } from 'vitest'
import { asyncScheduler, concatMap, filter, finalize, from, map, merge, Observable, of, take, type SchedulerLike, type Subscription } from 'rxjs'
import { chunk, eventLabel, reply, runAgentMarbles, scriptedModel } from '../marbles/index.js'
import { accumulateMessage } from '../operators/accumulate-message.js'
import { dispatchTools } from '../operators/dispatch-tools.js'
import { endTurn } from '../operators/end-turn.js'
import { mapMessages } from '../operators/map-messages.js'
import { onTurnState } from '../operators/on-turn-state.js'
import { pollFollowUp } from '../operators/poll-follow-up.js'
import { pollSteering } from '../operators/poll-steering.js'
import { decideContinuation } from '../operators/decide-continuation.js'
import { postLoopPolicy } from '../operators/post-loop-policy.js'
import { postTurnPolicy } from '../operators/post-turn-policy.js'
import { preTurnPolicy } from '../operators/pre-turn-policy.js'
import { startTurn } from '../operators/start-turn.js'
import { streamLlm } from '../operators/stream-llm.js'
import { transformContext } from '../operators/transform-context.js'
import { agentLoop } from '../src/loop/agent-loop.js'
import { runTurns } from '../src/loop/run-turns.js'
import { Approval, type ApprovalDecision } from '../src/policy/approval.js'
import { Verdict, type PolicyVerdict, type PreDispatchVerdict } from '../src/policy/policy.js'
import * as t from 'io-ts'
import { defineTool } from '../src/tools/define-tool.js'
import { runTool, type ToolRunEvent } from '../src/tools/run-tool.js'
import { isTurnState, nextState, type TurnItem, type TurnOperator, type TurnState } from '../src/turn/turn-state.js'
import type { ProviderChunk } from '../src/types/chunk.js'
import type { AgentEvent } from '../src/types/event.js'
import { assistantMessage, userMessage, type AgentMessage } from '../src/types/message.js'
import { hello } from './helpers.js'
import {
  answeredState,
  ctx,
  ev,
  expectNothingScheduledAt,
  freshState,
  itemLabel,
  loggedTool,
  spyScheduler,
  startedState,
  testModel,
  textAnswer,
  toolCallAnswer,
  trackedAbort,
  unsubAt,
} from './turn-fixtures.js'

/** Marble values: labels of the events `ev('a')`, `ev('b')`, `ev('f')` and of the state. */
const L = { a: 'toolUpdate:a', b: 'toolUpdate:b', f: 'toolUpdate:f', S: 'S' }
const V: Record<string, ProviderChunk> = { s: chunk.start(), t: chunk.text('x'), p: chunk.stop() }
const cancelled = (id: string) => `tool call '${id}' was cancelled`

// ---------------------------------------------------------------------------
// Every stage, configured so that it does its real work on the state.
// ---------------------------------------------------------------------------

interface StageCase {
  readonly name: string
  readonly make: (scheduler: SchedulerLike) => TurnOperator
}

const continuePolicy = { name: 'ok', evaluate: () => Verdict.continue }

const stages: readonly StageCase[] = [
  { name: 'onTurnState', make: () => onTurnState((s) => nextState(s, { forceNextTurn: true })) },
  { name: 'preTurnPolicy', make: () => preTurnPolicy([continuePolicy]) },
  { name: 'startTurn', make: () => startTurn() },
  { name: 'transformContext', make: () => transformContext({ transform: (m) => of(m) }) },
  { name: 'streamLlm', make: (scheduler) => streamLlm({ streamFn: scriptedModel([reply.text('x')]).streamFn, scheduler }) },
  { name: 'dispatchTools', make: (scheduler) => dispatchTools({ scheduler }) },
  { name: 'endTurn', make: () => endTurn() },
  { name: 'postTurnPolicy', make: () => postTurnPolicy([continuePolicy]) },
  { name: 'pollSteering', make: () => pollSteering(() => []) },
  { name: 'decideContinuation', make: () => decideContinuation() },
  { name: 'postLoopPolicy', make: () => postLoopPolicy([continuePolicy]) },
  { name: 'pollFollowUp', make: () => pollFollowUp(() => []) },
  { name: 'mapMessages', make: () => mapMessages((m) => m) },
]

/** A state every stage above does something with (idle, for the post-loop stages). */
const stageState = (): TurnState => answeredState(textAnswer, [], { continuation: 'idle' })

describe('every stage passes events through untouched and synchronously', () => {
  it.each(stages)('$name', ({ make }) => {
    const a = ev('a')
    const b = ev('b')
    const seen: { frame: number; item: TurnItem }[] = []
    let completedAt: number | undefined
    runAgentMarbles(({ cold, scheduler }) => {
      const source = cold<TurnItem>('ab(S|)', { a, b, S: stageState() })
      source.pipe(make(scheduler)).subscribe({
        next: (item) => seen.push({ frame: scheduler.now(), item }),
        complete: () => (completedAt = scheduler.now()),
      })
    })
    expect(seen[0]?.frame).toBe(0)
    expect(seen[0]?.item).toBe(a)
    expect(seen[1]?.frame).toBe(1)
    expect(seen[1]?.item).toBe(b)
    // The state's items follow at its frame, the state last.
    expect(seen.slice(2).every((s) => s.frame === 2)).toBe(true)
    expect(seen.filter((s) => isTurnState(s.item))).toHaveLength(1)
    expect(isTurnState(seen.at(-1)!.item)).toBe(true)
    expect(completedAt).toBe(2)
  })
})


describe('every stage stops pulling a synchronous source once its output is unsubscribed', () => {
  /** Emits ten events synchronously, checking for closure before each, as `of`/`from` do. */
  const tenEvents = (effects: number[]) =>
    new Observable<TurnItem>((subscriber) => {
      for (let i = 0; !subscriber.closed && i < 10; i++) {
        effects.push(i)
        subscriber.next(ev(String(i)))
      }
    })
  for (const { name, make } of stages) {
    it(name, () => {
      const effects: number[] = []
      const got: TurnItem[] = []
      tenEvents(effects)
        .pipe(make(asyncScheduler), take(3))
        .subscribe((item) => got.push(item))
      expect(got).toHaveLength(3)
      expect(effects).toEqual([0, 1, 2])
    })
  }

  it('accumulateMessage', () => {
    const effects: number[] = []
    new Observable<ProviderChunk>((subscriber) => {
      for (let i = 0; !subscriber.closed && i < 10; i++) {
        effects.push(i)
        subscriber.next(i === 0 ? chunk.start() : chunk.text(String(i)))
      }
    })
      .pipe(accumulateMessage({ model: testModel, now: () => 0 }), take(3))
      .subscribe()
    expect(effects).toEqual([0, 1, 2])
  })

  // Same cause, with a real effect: the state that follows is still
  // projected after the unsubscription, so the model is called for nothing.
  it('streamLlm: a state after the unsubscription does not call the model', () => {
    const model = scriptedModel([reply.text('x')])
    from<TurnItem[]>([ev('a'), startedState()])
      .pipe(streamLlm({ streamFn: model.streamFn, scheduler: asyncScheduler }), take(1))
      .subscribe()
    expect(model.requests).toHaveLength(0)
  })
})

// ---------------------------------------------------------------------------
// Per operator: unsubscribing mid-way.
// ---------------------------------------------------------------------------

describe('onTurnState: teardown', () => {
  it('unsubscribes the source and the running inner Observable at the unsubscription frame', () => {
    runAgentMarbles(({ cold, expectObservable, expectSubscriptions, scheduler }) => {
      const S = startedState()
      const source = cold<TurnItem>('-a-S', { a: ev('a'), S })
      const inner = cold<TurnItem>('-f--T|', { f: ev('f'), T: nextState(S, { forceNextTurn: true }) })
      const result$ = source.pipe(onTurnState(() => inner))
      expectObservable(result$.pipe(map(itemLabel)), '^-----!').toBe('-a--f-', L)
      expectSubscriptions(source.subscriptions).toBe('^-----!')
      expectSubscriptions(inner.subscriptions).toBe('---^--!')
      expectNothingScheduledAt(scheduler, 7)
    })
  })

  it('unsubscribed before the state arrives: the state is never projected', () => {
    let projected = 0
    runAgentMarbles(({ cold, expectObservable, expectSubscriptions, scheduler }) => {
      const source = cold<TurnItem>('-a---S', { a: ev('a'), S: startedState() })
      const inner = cold<TurnItem>('-f|', { f: ev('f') })
      const result$ = source.pipe(onTurnState(() => (projected++, inner)))
      expectObservable(result$.pipe(map(itemLabel)), '^---!').toBe('-a--', L)
      expectSubscriptions(source.subscriptions).toBe('^---!')
      expectSubscriptions(inner.subscriptions).toBe([])
      expectNothingScheduledAt(scheduler, 5)
    })
    expect(projected).toBe(0)
  })
})

describe('preTurnPolicy: teardown', () => {
  it('unsubscribes the pending policy Observable; later policies are never evaluated', () => {
    const evaluated: string[] = []
    runAgentMarbles(({ cold, expectObservable, expectSubscriptions, scheduler }) => {
      const verdict$ = cold<PolicyVerdict>('----(v|)', { v: Verdict.continue })
      const source = cold<TurnItem>('-a-S', { a: ev('a'), S: freshState() })
      const result$ = source.pipe(
        preTurnPolicy([
          { name: 'slow', evaluate: () => (evaluated.push('slow'), verdict$) },
          { name: 'next', evaluate: () => (evaluated.push('next'), Verdict.stop('never asked')) },
        ]),
      )
      expectObservable(result$.pipe(map(itemLabel)), '^----!').toBe('-a---', L)
      expectSubscriptions(source.subscriptions).toBe('^----!')
      expectSubscriptions(verdict$.subscriptions).toBe('---^-!')
      expectNothingScheduledAt(scheduler, 6)
    })
    expect(evaluated).toEqual(['slow'])
  })
})

/** A synchronous stage: what it emits for the state comes out at once; the source is all there is to unsubscribe. */
function syncStageTeardown(op: TurnOperator, state: TurnState, atState: string, values: Record<string, string>): void {
  runAgentMarbles(({ cold, expectObservable, expectSubscriptions, scheduler }) => {
    const source = cold<TurnItem>('-a-S--b', { a: ev('a'), b: ev('b'), S: state })
    expectObservable(source.pipe(op, map(itemLabel)), '^----!').toBe(`-a-${atState}`, { ...L, ...values })
    expectSubscriptions(source.subscriptions).toBe('^----!')
    expectNothingScheduledAt(scheduler, 6)
  })
}

describe('startTurn: teardown (synchronous)', () => {
  it('emits the turn start at the state, and unsubscribes the source', () => {
    syncStageTeardown(startTurn(), freshState(), '(tuvS)', { t: 'turnStart:0', u: 'msgStart:user', v: 'msgEnd:user' })
  })

  it('unsubscribed before the state: no turn starts', () => {
    runAgentMarbles(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<TurnItem>('-a---S', { a: ev('a'), S: freshState() })
      expectObservable(source.pipe(startTurn(), map(itemLabel)), '^---!').toBe('-a', L)
      expectSubscriptions(source.subscriptions).toBe('^---!')
    })
  })
})

describe('transformContext: teardown', () => {
  it('unsubscribes the asynchronous transform', () => {
    const transformed: number[] = []
    runAgentMarbles(({ cold, expectObservable, expectSubscriptions, scheduler }) => {
      const transform$ = cold<readonly AgentMessage[]>('----(m|)', { m: [hello] })
      const source = cold<TurnItem>('-a-S', { a: ev('a'), S: startedState() })
      const result$ = source.pipe(transformContext({ transform: (_m, { turnIndex }) => (transformed.push(turnIndex), transform$) }))
      expectObservable(result$.pipe(map(itemLabel)), '^----!').toBe('-a---', L)
      expectSubscriptions(source.subscriptions).toBe('^----!')
      expectSubscriptions(transform$.subscriptions).toBe('---^-!')
      expectNothingScheduledAt(scheduler, 6)
    })
    expect(transformed).toEqual([0])
  })
})

describe('accumulateMessage: teardown', () => {
  it('unsubscribes the chunk source and the abort notifier', () => {
    runAgentMarbles(({ cold, expectObservable, expectSubscriptions, scheduler }) => {
      const chunks = cold<ProviderChunk>('-s-t-t-p|', V)
      const abort = cold('---------------x')
      const result$ = chunks.pipe(accumulateMessage({ model: testModel, now: () => scheduler.now(), abort }))
      expectObservable(result$.pipe(map(eventLabel)), '^----!').toBe('-S-t-', { S: 'msgStart:assistant', t: 'textDelta:"x"' })
      expectSubscriptions(chunks.subscriptions).toBe('^----!')
      expectSubscriptions(abort.subscriptions).toBe('^----!')
      expectNothingScheduledAt(scheduler, 6)
    })
  })
})

describe('streamLlm: teardown', () => {
  it('unsubscribes the model stream, the abort notifier and the source; the model is called once', () => {
    let calls = 0
    runAgentMarbles(({ cold, expectObservable, expectSubscriptions, scheduler }) => {
      const stream$ = cold<ProviderChunk>('-s-t-t-(p|)', V)
      const abort = cold('---------------x')
      const source = cold<TurnItem>('--S', { S: startedState() })
      const result$ = source.pipe(streamLlm({ streamFn: () => (calls++, stream$), scheduler, abort }))
      expectObservable(result$.pipe(map(itemLabel)), '^-----!').toBe('---m-t', { m: 'msgStart:assistant', t: 'textDelta:"x"' })
      expectSubscriptions(source.subscriptions).toBe('^-----!')
      expectSubscriptions(stream$.subscriptions).toBe('--^---!')
      expectSubscriptions(abort.subscriptions).toBe('--^---!')
      expectNothingScheduledAt(scheduler, 7)
    })
    expect(calls).toBe(1)
  })
})

describe('dispatchTools: teardown', () => {
  it('a running tool: its signal is aborted at the unsubscription, its timeout never fires, the abort notifier is released', () => {
    const log: string[] = []
    const spy = runAgentMarbles(({ cold, expectObservable, expectSubscriptions, scheduler }) => {
      // c1 `slow`: 30 frames, timeout 20; c2 `fast`: progress at 4, done at 6. Dispatched at 2, unsubscribed at 10.
      const slow$ = cold<string>('30ms (x|)', { x: 'slow done' })
      const fast$ = cold<string>('----p-(y|)', { p: 'half way', y: 'fast done' })
      const abort = cold('-------------------------------------x')
      const spy = spyScheduler(scheduler)
      const tools = [loggedTool('slow', () => slow$, log, scheduler, 20), loggedTool('fast', () => fast$, log, scheduler)]
      const source = cold<TurnItem>('--S', { S: answeredState(toolCallAnswer('slow', 'fast'), tools) })
      const result$ = source.pipe(dispatchTools({ scheduler: spy.scheduler, abort }), finalize(spy.close))
      expectObservable(result$.pipe(map(itemLabel)), unsubAt(10)).toBe('--(ab)u-c', {
        a: 'toolStart:c1',
        b: 'toolStart:c2',
        u: 'toolUpdate:c2',
        c: 'toolEnd:c2',
      })
      expectSubscriptions(source.subscriptions).toBe(unsubAt(10))
      expectSubscriptions(abort.subscriptions).toBe('--^-------!')
      expectSubscriptions(fast$.subscriptions).toBe('--^-----!')
      return spy
    })
    expect(log).toEqual(['start:slow@2', 'start:fast@2', `abort:slow@10: ${cancelled('c1')}`])
    // The fast tool's progress flush ran at 6; nothing (the slow tool's timeout, due at 22) ran after the unsubscription.
    expect(spy.ran).toEqual([6])
    expect(spy.ranAfterClose).toEqual([])
  })

  it("a running tool: the tool's Observable is unsubscribed at the unsubscription frame", () => {
    runAgentMarbles(({ cold, expectObservable, expectSubscriptions, scheduler }) => {
      const slow$ = cold<string>('30ms (x|)', { x: 'slow done' })
      const log: string[] = []
      const source = cold<TurnItem>('--S', { S: answeredState(toolCallAnswer('slow'), [loggedTool('slow', () => slow$, log, scheduler)]) })
      expectObservable(source.pipe(dispatchTools({ scheduler }), map(itemLabel)), unsubAt(10)).toBe('--a', { a: 'toolStart:c1' })
      expectSubscriptions(slow$.subscriptions).toBe('--^-------!')
      expectNothingScheduledAt(scheduler, 11)
    })
  })

  it('a pending approval: the approval Observable is unsubscribed, no tool starts', () => {
    const log: string[] = []
    runAgentMarbles(({ cold, expectObservable, expectSubscriptions, scheduler }) => {
      const approval$ = cold<ApprovalDecision>('----------(d|)', { d: Approval.approve })
      const abort = cold('-------------------------------------x')
      const source = cold<TurnItem>('--S', { S: answeredState(toolCallAnswer('slow'), [loggedTool('slow', () => 'done', log, scheduler)]) })
      const result$ = source.pipe(dispatchTools({ scheduler, abort, approveTool: () => approval$ }))
      expectObservable(result$.pipe(map(itemLabel)), unsubAt(6)).toBe('--a', { a: 'approve?:c1' })
      expectSubscriptions(source.subscriptions).toBe(unsubAt(6))
      expectSubscriptions(approval$.subscriptions).toBe('--^---!')
      expectSubscriptions(abort.subscriptions).toBe('--^---!')
      expectNothingScheduledAt(scheduler, 7)
    })
    expect(log).toEqual([])
  })

  it('a pending pre-dispatch policy: its Observable is unsubscribed, no approval asked, no tool starts', () => {
    const log: string[] = []
    let asked = 0
    runAgentMarbles(({ cold, expectObservable, expectSubscriptions, scheduler }) => {
      const verdict$ = cold<PreDispatchVerdict>('----(v|)', { v: Verdict.continue })
      const source = cold<TurnItem>('--S', { S: answeredState(toolCallAnswer('slow'), [loggedTool('slow', () => 'done', log, scheduler)]) })
      const result$ = source.pipe(
        dispatchTools({ scheduler, preDispatch: [{ name: 'slow', evaluate: () => verdict$ }], approveTool: () => (asked++, Approval.approve) }),
      )
      expectObservable(result$.pipe(map(itemLabel)), '^---!').toBe('----')
      expectSubscriptions(verdict$.subscriptions).toBe('--^-!')
      expectNothingScheduledAt(scheduler, 5)
    })
    expect(log).toEqual([])
    expect(asked).toBe(0)
  })
})

describe('endTurn: teardown (synchronous)', () => {
  it('emits turnEnd at the state, and unsubscribes the source', () => {
    syncStageTeardown(endTurn(), answeredState(textAnswer), '(eS)', { e: 'turnEnd:0' })
  })
})

describe('postTurnPolicy: teardown', () => {
  it('unsubscribes the pending policy Observable', () => {
    runAgentMarbles(({ cold, expectObservable, expectSubscriptions, scheduler }) => {
      const verdict$ = cold<PolicyVerdict>('----(v|)', { v: Verdict.stop('late') })
      const source = cold<TurnItem>('-a-S', { a: ev('a'), S: answeredState(textAnswer) })
      const result$ = source.pipe(postTurnPolicy([{ name: 'slow', evaluate: () => verdict$ }]))
      expectObservable(result$.pipe(map(itemLabel)), '^----!').toBe('-a---', L)
      expectSubscriptions(source.subscriptions).toBe('^----!')
      expectSubscriptions(verdict$.subscriptions).toBe('---^-!')
      expectNothingScheduledAt(scheduler, 6)
    })
  })
})

describe('pollSteering: teardown (synchronous)', () => {
  it('polls at the state, and unsubscribes the source', () => {
    let polls = 0
    syncStageTeardown(pollSteering(() => (polls++, [])), answeredState(textAnswer), 'S', {})
    expect(polls).toBe(1)
  })
})

describe('postLoopPolicy: teardown', () => {
  it('unsubscribes the pending policy Observable', () => {
    runAgentMarbles(({ cold, expectObservable, expectSubscriptions, scheduler }) => {
      const verdict$ = cold<PolicyVerdict>('----(v|)', { v: Verdict.inject(userMessage('more')) })
      const source = cold<TurnItem>('-a-S', { a: ev('a'), S: answeredState(textAnswer, [], { continuation: 'idle' }) })
      const result$ = source.pipe(postLoopPolicy([{ name: 'slow', evaluate: () => verdict$ }]))
      expectObservable(result$.pipe(map(itemLabel)), '^----!').toBe('-a---', L)
      expectSubscriptions(source.subscriptions).toBe('^----!')
      expectSubscriptions(verdict$.subscriptions).toBe('---^-!')
      expectNothingScheduledAt(scheduler, 6)
    })
  })
})

describe('pollFollowUp: teardown (synchronous)', () => {
  it('polls at the idle state, and unsubscribes the source', () => {
    let polls = 0
    syncStageTeardown(pollFollowUp(() => (polls++, [])), answeredState(textAnswer, [], { continuation: 'idle' }), 'S', {})
    expect(polls).toBe(1)
  })
})

describe('mapMessages: teardown', () => {
  const shout = (m: AgentMessage): AgentMessage => (m.role === 'assistant' ? { ...m, content: [{ type: 'text', text: 'HI' }] } : m)

  it('rewrites up to the unsubscription, and unsubscribes the source', () => {
    runAgentMarbles(({ cold, expectObservable, expectSubscriptions, scheduler }) => {
      const source = cold<TurnItem>('-a-m--S', { a: ev('a'), m: { type: 'messageEnd', message: textAnswer }, S: answeredState(textAnswer) })
      const result$ = source.pipe(mapMessages(shout))
      const texts = result$.pipe(map((i) => (i.type === 'messageEnd' && i.message.role === 'assistant' ? `end:${JSON.stringify(i.message.content)}` : itemLabel(i))))
      expectObservable(texts, '^----!').toBe('-a-m-', { ...L, m: 'end:[{"type":"text","text":"HI"}]' })
      expectSubscriptions(source.subscriptions).toBe('^----!')
      expectNothingScheduledAt(scheduler, 6)
    })
  })

  it('an unsubscribed turn leaves nothing behind for the next subscription of the same operator', () => {
    const op = mapMessages(shout)
    const later = startedState()
    let out: TurnItem | undefined
    runAgentMarbles(({ cold, expectObservable }) => {
      const first = cold<TurnItem>('-m---S', { m: { type: 'messageEnd', message: textAnswer }, S: answeredState(textAnswer) })
      expectObservable(first.pipe(op, map(itemLabel)), '^--!').toBe('-m', { m: 'msgEnd:assistant:stop' })
    })
    of<[TurnItem]>(later).pipe(op).subscribe((i) => (out = i))
    expect(out).toBe(later)
  })

  it('two concurrent subscriptions of one operator each get their own rewrites', () => {
    const op = mapMessages(shout)
    const a = assistantMessage('a')
    const b = assistantMessage('b')
    const finals: TurnState[] = []
    runAgentMarbles(({ cold }) => {
      const runA = cold<TurnItem>('-m---S|', { m: { type: 'messageEnd', message: a }, S: answeredState(a) })
      const runB = cold<TurnItem>('--n-T|', { n: { type: 'messageEnd', message: b }, T: answeredState(b) })
      for (const run$ of [runA, runB]) run$.pipe(op).subscribe((i) => isTurnState(i) && finals.push(i))
    })
    expect(finals.map((s) => JSON.stringify(s.assistant?.content))).toEqual(['[{"type":"text","text":"HI"}]', '[{"type":"text","text":"HI"}]'])
  })
})

// ---------------------------------------------------------------------------
// runTool, runTurns, agentLoop.
// ---------------------------------------------------------------------------

describe('runTool: teardown', () => {
  it("aborts the tool's signal, and cancels the timeout timer and the progress flushes", () => {
    const log: string[] = []
    const spy = runAgentMarbles(({ cold, expectObservable, scheduler }) => {
      const tool$ = cold<string>('-a-b 30ms (c|)', { a: 'one', b: 'two', c: 'three' })
      const spy = spyScheduler(scheduler)
      const run$ = runTool(loggedTool('slow', () => tool$, log, scheduler), {}, { toolCallId: 'c1', scheduler: spy.scheduler, timeoutMs: 20 })
      expectObservable(run$.pipe(finalize(spy.close), map((e: ToolRunEvent) => e.type)), '^---!').toBe('-u-u', { u: 'update' })
      return spy
    })
    expect(log).toEqual(['start:slow@0', `abort:slow@4: ${cancelled('c1')}`])
    // The progress flushes ran at 1 and 3; neither the timeout (due at 20) nor any flush ran after the unsubscription.
    expect(spy.ran).toEqual([1, 3])
    expect(spy.ranAfterClose).toEqual([])
  })

  it('a progress flush scheduled in the very frame of the unsubscription never runs', () => {
    const log: string[] = []
    const got: ToolRunEvent[] = []
    const spy = runAgentMarbles(({ scheduler }) => {
      const spy = spyScheduler(scheduler)
      let sub: Subscription | undefined
      // Emits progress at frame 3, and the subscriber leaves in the same moment,
      // after the flush of that progress was scheduled and before it ran.
      const tool = loggedTool(
        'slow',
        () =>
          new Observable<string>((o) =>
            scheduler.schedule(() => {
              o.next('progress')
              spy.close()
              sub?.unsubscribe()
            }, 3),
          ),
        log,
        scheduler,
      )
      sub = runTool(tool, {}, { toolCallId: 'c1', scheduler: spy.scheduler, timeoutMs: 20 }).subscribe((e) => got.push(e))
      return spy
    })
    expect(got).toEqual([])
    expect(spy.ran).toEqual([])
    expect(spy.ranAfterClose).toEqual([])
    expect(log).toEqual(['start:slow@0', `abort:slow@3: ${cancelled('c1')}`])
  })

  it('a tool that first reads its signal after the cancellation or the timeout finds it aborted, with the reason', () => {
    const reasons: unknown[] = []
    for (const end of ['unsubscribe', 'timeout'] as const) {
      runAgentMarbles(({ cold, expectObservable, scheduler }) => {
        let signal: () => AbortSignal = () => new AbortController().signal
        const tool = defineTool({
          name: 'late',
          description: 'Reads its signal only later.',
          parameters: t.type({}),
          // Keeps the context, not the signal: the signal is read at frame 8.
          execute: (_args, context) => {
            signal = () => context.signal
            return cold<string>('---------|')
          },
        })
        const run$ = runTool(tool, {}, { toolCallId: 'c1', scheduler, timeoutMs: 5 })
        const marbles = end === 'unsubscribe' ? '^-!' : '^'
        expectObservable(run$.pipe(map((e) => e.type)), marbles).toBe(end === 'unsubscribe' ? '' : '-----(e|)', { e: 'end' })
        scheduler.schedule(() => {
          const s = signal()
          reasons.push(s.aborted ? (s.reason as Error).message : 'not aborted')
        }, 8)
      })
    }
    expect(reasons).toEqual([cancelled('c1'), 'timed out after 5 ms'])
  })

  it("unsubscribes the tool's Observable at the unsubscription frame", () => {
    runAgentMarbles(({ cold, expectObservable, expectSubscriptions, scheduler }) => {
      const tool$ = cold<string>('-a-b 30ms (c|)', { a: 'one', b: 'two', c: 'three' })
      const run$ = runTool(loggedTool('slow', () => tool$, [], scheduler), {}, { toolCallId: 'c1', scheduler, timeoutMs: 20 })
      expectObservable(run$.pipe(map((e) => e.type)), '^---!').toBe('-u-u', { u: 'update' })
      expectSubscriptions(tool$.subscriptions).toBe('^---!')
      expectNothingScheduledAt(scheduler, 5)
    })
  })
})

/** A turn pipeline that answers each turn's first state with `turn(state)`. */
const perTurn =
  (turn: (state: TurnState) => Observable<TurnItem>) =>
  (states: Observable<TurnItem>): Observable<TurnItem> =>
    states.pipe(concatMap((s) => turn(s as TurnState)))

describe('runTurns: teardown', () => {
  it('unsubscribes the current turn; no later turn starts', () => {
    let turns = 0
    runAgentMarbles(({ cold, expectObservable, expectSubscriptions, scheduler }) => {
      const S0 = startedState()
      const S1 = nextState(S0, { turnIndex: 1 })
      const turn0 = cold<TurnItem>('-a-(S|)', { a: ev('a'), S: S0 })
      const turn1 = cold<TurnItem>('--b-----(S|)', { b: ev('b'), S: S1 })
      const result$ = runTurns(
        S0,
        perTurn(() => [turn0, turn1][turns++]!),
        (final) => (final === S0 ? { next: S1 } : { end: final }),
      )
      expectObservable(result$.pipe(map(itemLabel)), unsubAt(7)).toBe('-a---b-', L)
      expectSubscriptions(turn0.subscriptions).toBe('^--!')
      expectSubscriptions(turn1.subscriptions).toBe('---^---!')
      expectNothingScheduledAt(scheduler, 8)
    })
    expect(turns).toBe(2)
  })

  it('synchronous turns: none starts after a synchronous unsubscription', () => {
    let turns = 0
    const S0 = startedState()
    const got: TurnItem[] = []
    runTurns(
      S0,
      perTurn((s) => (turns++, from<TurnItem[]>([ev(String(s.turnIndex)), s]))),
      (final) => ({ next: nextState(final, { turnIndex: final.turnIndex + 1 }) }),
    )
      .pipe(take(3))
      .subscribe((i) => got.push(i))
    expect(got.map(itemLabel)).toEqual(['toolUpdate:0', 'toolUpdate:1', 'toolUpdate:2'])
    expect(turns).toBe(3)
  })

  it('stops pulling a synchronous turn once its output is unsubscribed', () => {
    const effects: number[] = []
    const S0 = startedState()
    runTurns(
      S0,
      perTurn(
        (s) =>
          new Observable<TurnItem>((o) => {
            for (let i = 0; !o.closed && i < 10; i++) (effects.push(i), o.next(ev(String(i))))
            o.next(s)
            o.complete()
          }),
      ),
      (final) => ({ end: final }),
    )
      .pipe(take(3))
      .subscribe()
    expect(effects).toEqual([0, 1, 2])
  })

  it('subscribes the pipeline once for the whole run, whatever the number of turns', () => {
    let subscriptions = 0
    const S0 = startedState()
    const got: string[] = []
    const counted: TurnOperator = (states) =>
      new Observable<TurnItem>((o) => {
        subscriptions++
        return states.subscribe(o)
      })
    runTurns(
      S0,
      (states) => counted(states).pipe(concatMap((s) => of<TurnItem[]>(ev(String((s as TurnState).turnIndex)), s))),
      (final) => (final.turnIndex < 4 ? { next: nextState(final, { turnIndex: final.turnIndex + 1 }) } : { end: final }),
    ).subscribe((i) => got.push(itemLabel(i)))
    expect(got).toHaveLength(6)
    expect(subscriptions).toBe(1)
  })

  it('a pipeline may subscribe to the states more than once (a partition)', () => {
    const S0 = startedState()
    const got: string[] = []
    const even = (s: TurnItem): boolean => (s as TurnState).turnIndex % 2 === 0
    runTurns(
      S0,
      (states) =>
        merge(
          states.pipe(filter(even), concatMap((s) => of<TurnItem[]>(ev('even'), s))),
          states.pipe(filter((s) => !even(s)), concatMap((s) => of<TurnItem[]>(ev('odd'), s))),
        ),
      (final) => (final.turnIndex < 3 ? { next: nextState(final, { turnIndex: final.turnIndex + 1 }) } : { end: final }),
    ).subscribe((i) => got.push(itemLabel(i)))
    expect(got.slice(0, 4)).toEqual(['toolUpdate:even', 'toolUpdate:odd', 'toolUpdate:even', 'toolUpdate:odd'])
    expect(got).toHaveLength(5)
  })

  it('a turn that answers with two states, or a pipeline that completes early, is a clear error', () => {
    const S0 = startedState()
    const errors: string[] = []
    const onError = { error: (e: unknown) => errors.push((e as Error).message) }
    runTurns(S0, (states) => states.pipe(concatMap((s) => of(s, s))), (final) => ({ next: final })).subscribe(onError)
    runTurns(S0, (states) => states.pipe(take(1)), (final) => ({ next: final })).subscribe(onError)
    expect(errors).toEqual([
      'turn 0 emitted two states; each turn must end with exactly one',
      'the turn pipeline completed before the run ended (a custom operator completed it)',
    ])
  })
})

describe('agentLoop: teardown', () => {
  const steer = userMessage('steer')
  const more = userMessage('more')
  /** The first nine events of a run whose (synchronous) answer calls tool c1. */
  const toolTurn = {
    a: 'agentStart',
    b: 'turnStart:0',
    c: 'msgStart:user',
    d: 'msgEnd:user',
    e: 'msgStart:assistant',
    f: 'toolUseStart:c1',
    g: 'toolUseArgsDelta:c1:{}',
    h: 'toolUseEnd:c1',
    i: 'msgEnd:assistant:toolUse',
  }

  it('mid-stream: unsubscribes the model stream, the steering and follow-up sources, and removes the abort listeners', () => {
    const abort = trackedAbort()
    let calls = 0
    let listenersMidStream: number | undefined
    let listenersAfter: number | undefined
    const seen: AgentEvent[] = []
    runAgentMarbles(({ cold, expectObservable, expectSubscriptions, scheduler }) => {
      const stream$ = cold<ProviderChunk>('-------s-t-t-(p|)', V)
      const steering$ = cold<AgentMessage>('------------s', { s: steer })
      const followUp$ = cold<AgentMessage>('--------------f', { f: more })
      const run$ = agentLoop(hello, ctx(), {
        model: testModel,
        streamFn: () => (calls++, stream$),
        scheduler,
        signal: abort.signal,
        steering: steering$,
        followUp: followUp$,
      })
      scheduler.schedule(() => (listenersMidStream = abort.listeners()), 8)
      expectObservable(
        run$.pipe(map((e) => (seen.push(e), eventLabel(e)))),
        unsubAt(10),
      ).toBe('(abcd)-e-f', { a: 'agentStart', b: 'turnStart:0', c: 'msgStart:user', d: 'msgEnd:user', e: 'msgStart:assistant', f: 'textDelta:"x"' })
      expectSubscriptions(stream$.subscriptions).toBe(unsubAt(10))
      expectSubscriptions(steering$.subscriptions).toBe(unsubAt(10))
      expectSubscriptions(followUp$.subscriptions).toBe(unsubAt(10))
      expectNothingScheduledAt(scheduler, 11, () => {
        listenersAfter = abort.listeners()
        // Aborting after the unsubscription reaches nobody.
        abort.controller.abort()
      })
    })
    expect(calls).toBe(1)
    expect(listenersMidStream).toBe(1)
    expect(listenersAfter).toBe(0)
    expect(seen).toHaveLength(6)
  })

  it('mid-tool: aborts the running tool, its timeout never fires, releases the steering and follow-up sources and the abort listeners', () => {
    const abort = trackedAbort()
    const log: string[] = []
    const model = scriptedModel([reply.toolCalls([{ id: 'c1', name: 'slow', args: {} }]), reply.text('never')])
    let listenersMidTool: number | undefined
    let listenersAfter: number | undefined
    const spy = runAgentMarbles(({ cold, expectObservable, expectSubscriptions, scheduler }) => {
      const slow$ = cold<string>('30ms (x|)', { x: 'slow done' })
      const steering$ = cold<AgentMessage>('25ms s', { s: steer })
      const followUp$ = cold<AgentMessage>('25ms f', { f: more })
      const spy = spyScheduler(scheduler)
      const run$ = agentLoop(hello, ctx([loggedTool('slow', () => slow$, log, scheduler)]), {
        model: model.model,
        streamFn: model.streamFn,
        scheduler: spy.scheduler,
        signal: abort.signal,
        steering: steering$,
        followUp: followUp$,
        toolTimeoutMs: 25,
      })
      scheduler.schedule(() => (listenersMidTool = abort.listeners()), 10)
      scheduler.schedule(() => (listenersAfter = abort.listeners()), 21)
      expectObservable(run$.pipe(finalize(spy.close), map(eventLabel)), unsubAt(20)).toBe('(abcdefghij)', { ...toolTurn, j: 'toolStart:c1' })
      expectSubscriptions(steering$.subscriptions).toBe(unsubAt(20))
      expectSubscriptions(followUp$.subscriptions).toBe(unsubAt(20))
      return spy
    })
    expect(log).toEqual(['start:slow@0', `abort:slow@20: ${cancelled('c1')}`])
    // The tool's timeout (due at 25) never ran.
    expect(spy.ranAfterClose).toEqual([])
    expect(model.requests).toHaveLength(1)
    expect(listenersMidTool).toBe(1)
    expect(listenersAfter).toBe(0)
  })

  it("mid-tool: the tool's Observable is unsubscribed and nothing is left scheduled", () => {
    const model = scriptedModel([reply.toolCalls([{ id: 'c1', name: 'slow', args: {} }]), reply.text('never')])
    runAgentMarbles(({ cold, expectObservable, expectSubscriptions, scheduler }) => {
      const slow$ = cold<string>('30ms (x|)', { x: 'slow done' })
      const run$ = agentLoop(hello, ctx([loggedTool('slow', () => slow$, [], scheduler)]), {
        model: model.model,
        streamFn: model.streamFn,
        scheduler,
        toolTimeoutMs: 25,
      })
      expectObservable(run$.pipe(map(eventLabel)), unsubAt(20)).toBe('(abcdefghij)', { ...toolTurn, j: 'toolStart:c1' })
      expectSubscriptions(slow$.subscriptions).toBe('^-------------------!')
      expectNothingScheduledAt(scheduler, 21)
    })
  })

  it('a pending pre-turn policy: its Observable and the steering source are unsubscribed, the model is never called', () => {
    const model = scriptedModel([reply.text('never')])
    runAgentMarbles(({ cold, expectObservable, expectSubscriptions, scheduler }) => {
      const verdict$ = cold<PolicyVerdict>('-----(v|)', { v: Verdict.continue })
      const steering$ = cold<AgentMessage>('------s', { s: steer })
      const run$ = agentLoop(hello, ctx(), {
        model: model.model,
        streamFn: model.streamFn,
        scheduler,
        steering: steering$,
        policies: { preTurn: [{ name: 'slow', evaluate: () => verdict$ }] },
      })
      expectObservable(run$.pipe(map(eventLabel)), '^--!').toBe('a', { a: 'agentStart' })
      expectSubscriptions(verdict$.subscriptions).toBe('^--!')
      expectSubscriptions(steering$.subscriptions).toBe('^--!')
      expectNothingScheduledAt(scheduler, 4)
    })
    expect(model.requests).toHaveLength(0)
  })

  it('a pending approval: its Observable is unsubscribed, the tool never runs', () => {
    const log: string[] = []
    const model = scriptedModel([reply.toolCalls([{ id: 'c1', name: 'slow', args: {} }]), reply.text('never')])
    runAgentMarbles(({ cold, expectObservable, expectSubscriptions, scheduler }) => {
      const approval$ = cold<ApprovalDecision>('20ms (d|)', { d: Approval.approve })
      const run$ = agentLoop(hello, ctx([loggedTool('slow', () => 'done', log, scheduler)]), {
        model: model.model,
        streamFn: model.streamFn,
        scheduler,
        approveTool: () => approval$,
      })
      expectObservable(run$.pipe(map(eventLabel)), unsubAt(15)).toBe('(abcdefghij)', { ...toolTurn, j: 'approve?:c1' })
      expectSubscriptions(approval$.subscriptions).toBe(unsubAt(15))
      expectNothingScheduledAt(scheduler, 16)
    })
    expect(log).toEqual([])
  })

  it('a synchronous run stops at a synchronous unsubscription: no model call, no tool run', () => {
    const executed: string[] = []
    const model = scriptedModel([reply.toolCalls([{ id: 'c1', name: 'echo', args: {} }]), reply.text('done')])
    const got: string[] = []
    agentLoop(hello, ctx([loggedTool('echo', () => 'echoed', executed, asyncScheduler)]), { model: model.model, streamFn: model.streamFn })
      .pipe(take(2))
      .subscribe((e) => got.push(eventLabel(e)))
    expect(got).toEqual(['agentStart', 'turnStart:0'])
    expect(model.requests).toHaveLength(0)
    expect(executed).toEqual([])
  })
})
