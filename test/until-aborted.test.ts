/**
 * `untilAborted`, the one mechanism behind "abort works at any moment", and
 * the `abort` option of every stage that waits: marble tests of the operator,
 * of each stage with a pending cold Observable, and of a custom stage given
 * the run's abort through `TurnStages.abort`.
 */
import { describe, expect, it } from 'vitest'
import { map, of, pipe, type Observable } from 'rxjs'
import { reply, runAgentMarbles, scriptedModel } from '../marbles/index.js'
import { dispatchTools } from '../operators/dispatch-tools.js'
import { onTurnState } from '../operators/on-turn-state.js'
import { postLoopPolicy } from '../operators/post-loop-policy.js'
import { postTurnPolicy } from '../operators/post-turn-policy.js'
import { preTurnPolicy } from '../operators/pre-turn-policy.js'
import { transformContext } from '../operators/transform-context.js'
import { abortedState, untilAborted } from '../operators/until-aborted.js'
import { agentLoop, defaultTurn } from '../src/loop/agent-loop.js'
import { Approval, type ApprovalDecision } from '../src/policy/approval.js'
import { Verdict } from '../src/policy/policy.js'
import { isTurnState, nextState, type TurnItem, type TurnOperator, type TurnState } from '../src/turn/turn-state.js'
import type { AgentMessage } from '../src/types/message.js'
import { context, hello } from './helpers.js'
import { answeredState, ev, freshState, itemLabel, startedState, textAnswer, toolCallAnswer, loggedTool } from './turn-fixtures.js'

describe('untilAborted', () => {
  it('mirrors the source until the abort, then drops it, emits the aborted items and completes', () => {
    runAgentMarbles(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('---a--------b|')
      const abort = cold('-------x')
      expectObservable(source.pipe(untilAborted(abort, () => ['A', 'B']))).toBe('---a---(AB|)')
      expectSubscriptions(source.subscriptions).toBe('^------!')
      expectSubscriptions(abort.subscriptions).toBe('^------!')
    })
  })

  it('a source that completes first releases the abort notifier', () => {
    runAgentMarbles(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-|')
      const abort = cold('-------x')
      expectObservable(source.pipe(untilAborted(abort, () => ['A']))).toBe('-a-|')
      expectSubscriptions(abort.subscriptions).toBe('^--!')
    })
  })

  it('an abort already signalled: the source is never subscribed', () => {
    runAgentMarbles(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-|')
      expectObservable(source.pipe(untilAborted(of('now'), () => ['A']))).toBe('(A|)')
      expectSubscriptions(source.subscriptions).toBe([])
    })
  })

  it('an abort notifier that completes without emitting changes nothing', () => {
    runAgentMarbles(({ cold, expectObservable }) => {
      expectObservable(cold('---a-|').pipe(untilAborted(cold('-|'), () => ['A']))).toBe('---a-|')
    })
  })

  it('unsubscribed before the abort: the source and the notifier are released at that frame, nothing is emitted', () => {
    let aborted = 0
    runAgentMarbles(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a------b|')
      const abort = cold('------x')
      expectObservable(source.pipe(untilAborted(abort, () => (aborted++, ['A']))), '^---!').toBe('-a--')
      expectSubscriptions(source.subscriptions).toBe('^---!')
      expectSubscriptions(abort.subscriptions).toBe('^---!')
    })
    expect(aborted).toBe(0)
  })

  it('without an abort notifier the source is returned as it is', () => {
    const source = of(1)
    expect(source.pipe(untilAborted(undefined, () => [2]))).toBe(source)
  })

  it('a source error passes; an onAbort that throws errors the output', () => {
    runAgentMarbles(({ cold, expectObservable }) => {
      expectObservable(cold('--#').pipe(untilAborted(cold('----x'), () => ['A']))).toBe('--#')
      const boom = new Error('boom')
      expectObservable(
        cold('------a').pipe(
          untilAborted(cold('--x'), () => {
            throw boom
          }),
        ),
      ).toBe('--#', undefined, boom)
    })
  })
})

/** What each stage answers an abort with: its state, stopped `aborted`, and why. */
const abortedLabel = (item: TurnItem): string =>
  isTurnState(item) ? (item.stop === undefined ? 'S' : `S:${item.stop.reason}:${item.stop.message ?? ''}`) : itemLabel(item)

describe('the abort option of each stage that waits (a cold Observable that answers late)', () => {
  const late = '----------(v|)'
  const cases: readonly { name: string; state: TurnState; make: (pending: () => unknown, abort: Observable<unknown>) => TurnOperator; what: string }[] = [
    {
      name: 'preTurnPolicy',
      state: freshState(),
      make: (pending, abort) => preTurnPolicy([{ name: 'slow', evaluate: () => pending() as never }], { abort }),
      what: 'a pre-turn policy',
    },
    {
      name: 'transformContext',
      state: startedState(),
      make: (pending, abort) => transformContext({ transform: () => pending() as never, abort }),
      what: 'the context transform',
    },
    {
      name: 'postTurnPolicy',
      state: answeredState(textAnswer),
      make: (pending, abort) => postTurnPolicy([{ name: 'slow', evaluate: () => pending() as never }], { abort }),
      what: 'a post-turn policy',
    },
    {
      name: 'postLoopPolicy',
      state: answeredState(textAnswer, [], { continuation: 'idle' }),
      make: (pending, abort) => postLoopPolicy([{ name: 'slow', evaluate: () => pending() as never }], { abort }),
      what: 'a post-loop policy',
    },
  ]
  for (const { name, state, make, what } of cases) {
    it(`${name}: the pending Observable is unsubscribed at the abort, the state stops 'aborted'`, () => {
      runAgentMarbles(({ cold, hot, expectObservable, expectSubscriptions }) => {
        const pending$ = cold<unknown>(late, { v: name === 'transformContext' ? [hello] : Verdict.continue })
        const abort = hot('-----x')
        const source = cold<TurnItem>('-a-S', { a: ev('a'), S: state })
        expectObservable(source.pipe(make(() => pending$, abort), map(abortedLabel))).toBe('-a---X', {
          a: 'toolUpdate:a',
          X: `S:aborted:the run was aborted while ${what} was pending`,
        })
        expectSubscriptions(pending$.subscriptions).toBe('---^-!')
      })
    })
  }

  it('dispatchTools: the open approval ends rejected, every call one result, the approver unsubscribed', () => {
    const log: string[] = []
    runAgentMarbles(({ cold, hot, expectObservable, expectSubscriptions, scheduler }) => {
      const decision$ = cold<ApprovalDecision>(late, { v: Approval.approve })
      const abort = hot('-----x')
      const tools = [loggedTool('t', () => 'ran', log, scheduler)]
      const source = cold<TurnItem>('--S', { S: answeredState(toolCallAnswer('t', 't'), tools) })
      expectObservable(source.pipe(dispatchTools({ scheduler, abort, approveTool: () => decision$ }), map(abortedLabel))).toBe(
        '--q--(rsetuvwxyX)',
        {
          q: 'approve?:c1',
          r: 'rejected:c1',
          s: 'toolStart:c1',
          e: 'toolEnd:c1:error',
          t: 'toolStart:c2',
          u: 'toolEnd:c2:error',
          v: 'msgStart:toolResult',
          w: 'msgEnd:toolResult:c1',
          x: 'msgStart:toolResult',
          y: 'msgEnd:toolResult:c2',
          X: 'S:aborted:the run was aborted during tool execution',
        },
      )
      expectSubscriptions(decision$.subscriptions).toBe('--^--!')
      expectSubscriptions(abort.subscriptions).toBe('--^--!')
    })
    expect(log).toEqual([])
  })
})

describe('TurnStages.abort: a custom stage that waits gets the run abort', () => {
  it('the run ends aborted at the abort frame and the stage is unsubscribed', () => {
    const controller = new AbortController()
    runAgentMarbles(({ cold, scheduler, expectTimeline, expectSubscriptions }) => {
      const lookup$ = cold<readonly AgentMessage[]>('----------(m|)', { m: [hello] })
      const model = scriptedModel([reply.text('never')])
      const run$ = agentLoop(hello, context(), {
        model: model.model,
        streamFn: model.streamFn,
        signal: controller.signal,
        turn: (s) => {
          const enrich = onTurnState((state) =>
            lookup$.pipe(
              map((extra) => nextState(state, { pending: [...state.pending, ...extra] })),
              untilAborted<TurnItem>(s.abort, () => [abortedState(state, 'the lookup')]),
            ),
          )
          return pipe(enrich, defaultTurn(s))
        },
      })
      scheduler.schedule(() => controller.abort(), 3)
      expectTimeline(run$).toBe(`
        0 agentStart
        3 agentEnd:aborted, |
      `)
      expectSubscriptions(lookup$.subscriptions).toBe('^--!')
    })
  })

  it('without a signal, TurnStages.abort never emits', () => {
    let emitted = false
    const model = scriptedModel([reply.text('ok')])
    agentLoop(hello, context(), {
      model: model.model,
      streamFn: model.streamFn,
      turn: (s) => (s.abort.subscribe(() => (emitted = true)).unsubscribe(), defaultTurn(s)),
    }).subscribe()
    expect(emitted).toBe(false)
  })
})
