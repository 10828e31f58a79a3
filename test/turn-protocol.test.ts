/**
 * The stage protocol of a custom turn is checked: a turn that ends without
 * deciding what comes next, stages out of order, a turn that swallows its
 * state or emits two fail the run with an error naming the problem and the
 * stage where it shows, instead of ending silently or hanging.
 */
import { describe, expect, it } from 'vitest'
import { concat, delay, EMPTY, filter, map, mergeMap, of, pipe, timer, toArray, type Observable, type OperatorFunction } from 'rxjs'
import { chunk, reply, runAgentMarbles, scriptedModel, type ScriptedResponse } from '../marbles/index.js'
import { onTurnState } from '../operators/on-turn-state.js'
import { agentLoop, composeTurn, defaultTurn, type AgentLoopConfig, type TurnStages } from '../src/loop/agent-loop.js'
import { isTurnState, nextState, type TurnItem, type TurnOperator } from '../src/turn/turn-state.js'
import type { AgentEvent } from '../src/types/event.js'
import { addTool, context, hello } from './helpers.js'

interface Outcome {
  readonly events: AgentEvent[]
  completed: boolean
  error?: unknown
}

/** Subscribes and records what happened synchronously (or by the end of virtual time under runAgentMarbles). */
function watch(run$: Observable<AgentEvent>): Outcome {
  const outcome: Outcome = { events: [], completed: false }
  run$.subscribe({
    next: (e) => outcome.events.push(e),
    error: (error: unknown) => (outcome.error = error),
    complete: () => (outcome.completed = true),
  })
  return outcome
}

const toolThenText = (): ScriptedResponse[] => [reply.toolCalls([{ id: 'c1', name: 'add', args: { a: 2, b: 3 } }]), reply.text('5')]

function run(turn: AgentLoopConfig['turn'], script: readonly ScriptedResponse[] = toolThenText()): Observable<AgentEvent> {
  const model = scriptedModel(script)
  return agentLoop(hello, context([addTool]), { model: model.model, streamFn: model.streamFn, ...(turn === undefined ? {} : { turn }) })
}

/** What comes after `postTurnPolicy` in the standard turn. */
const decideAndFollowUp = (s: TurnStages): TurnOperator => pipe(s.pollSteering, s.decideContinuation, s.postLoopPolicy, s.pollFollowUp)

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

function expectFailure(outcome: Outcome, ...patterns: RegExp[]): void {
  const last = outcome.events.at(-1)
  expect(outcome.completed, `the run completed (last event: ${last?.type === 'agentEnd' ? `agentEnd ${last.result.stopReason}` : last?.type})`).toBe(false)
  expect(outcome.error, 'the run neither ended nor failed').toBeDefined()
  for (const pattern of patterns) expect(messageOf(outcome.error)).toMatch(pattern)
}

describe('a turn that ends without deciding whether the loop goes on', () => {
  it('fails the run, naming decideContinuation, instead of ending it with toolUse', () => {
    const outcome = watch(run((s) => pipe(s.preTurnPolicy, s.startTurn, s.transformContext, s.streamLlm, s.dispatchTools, s.endTurn, s.postTurnPolicy)))
    expectFailure(outcome, /ended without deciding whether the loop goes on/, /decideContinuation/, /endTurn/)
  })

  it('the post-loop stages without the decision (pollSteering left out) fail the run, naming decideContinuation', () => {
    const outcome = watch(
      run((s) => pipe(s.preTurnPolicy, s.startTurn, s.transformContext, s.streamLlm, s.dispatchTools, s.endTurn, s.postTurnPolicy, s.postLoopPolicy, s.pollFollowUp)),
    )
    expectFailure(outcome, /pollFollowUp/, /decideContinuation/)
  })

  it('steering taken after the decision (pollSteering after decideContinuation) fails the run instead of dropping the messages', () => {
    const model = scriptedModel([reply.text('done')])
    const late = watch(
      agentLoop(hello, context(), {
        model: model.model,
        streamFn: model.streamFn,
        steering: () => [hello],
        turn: (s) =>
          pipe(s.preTurnPolicy, s.startTurn, s.transformContext, s.streamLlm, s.dispatchTools, s.endTurn, s.postTurnPolicy, s.decideContinuation, s.pollSteering),
      }),
    )
    expectFailure(late, /pending/, /pollSteering/, /decideContinuation/)
  })

  it('post-loop stages before the decision fail the run, naming both stages', () => {
    const outcome = watch(
      run((s) => pipe(s.preTurnPolicy, s.startTurn, s.transformContext, s.streamLlm, s.dispatchTools, s.endTurn, s.postTurnPolicy, s.pollFollowUp, s.decideContinuation)),
    )
    expectFailure(outcome, /pollFollowUp/, /decideContinuation/)
  })
})

describe('stages out of order', () => {
  it('dispatchTools before streamLlm fails the run, naming both stages', () => {
    const outcome = watch(
      run((s) => pipe(s.preTurnPolicy, s.startTurn, s.transformContext, s.dispatchTools, s.streamLlm, s.endTurn, s.postTurnPolicy, decideAndFollowUp(s))),
    )
    expectFailure(outcome, /dispatchTools/, /streamLlm/)
  })

  it('decideContinuation before dispatchTools fails the run instead of ending it with toolUse', () => {
    const outcome = watch(
      run((s) => pipe(s.preTurnPolicy, s.startTurn, s.transformContext, s.streamLlm, s.pollSteering, s.decideContinuation, s.dispatchTools, s.endTurn, s.postLoopPolicy)),
    )
    expectFailure(outcome, /decideContinuation/, /dispatchTools/)
  })

  it('streamLlm before startTurn fails the run, naming both stages', () => {
    const outcome = watch(
      run((s) => pipe(s.preTurnPolicy, s.transformContext, s.streamLlm, s.startTurn, s.dispatchTools, s.endTurn, s.postTurnPolicy, decideAndFollowUp(s))),
    )
    expectFailure(outcome, /streamLlm/, /startTurn/)
  })
})

describe('a turn that swallows its state', () => {
  const dropStates: TurnOperator = filter((item: TurnItem) => !isTurnState(item))

  it('a filter at the end of a synchronous turn fails the run instead of hanging', () => {
    expectFailure(watch(run((s) => pipe(defaultTurn(s), dropStates))), /no state/, /pollFollowUp/)
  })

  it('a toArray fails the run instead of hanging', () => {
    const collectAll = toArray() as unknown as TurnOperator
    expectFailure(watch(run((s) => pipe(defaultTurn(s), collectAll))), /no state/)
  })

  it('a filter after an asynchronous model call fails the run when the answer arrives', () => {
    // Checked after virtual time ran out: the outcome is read in the callback's closure.
    const outcome = runAgentMarbles(() => {
      const slow: ScriptedResponse = { marbles: '--s-t-(p|)', values: { s: chunk.start(), t: chunk.text('hi'), p: chunk.stop() } }
      return watch(run((s) => pipe(s.preTurnPolicy, s.startTurn, s.transformContext, s.streamLlm, dropStates, s.dispatchTools, s.endTurn, decideAndFollowUp(s)), [slow]))
    })
    expectFailure(outcome, /no state/, /streamLlm/)
  })

  it('a stage written with onTurnState whose Observable completes without a state fails the run, naming it', () => {
    const swallow = onTurnState(() => EMPTY, { stage: 'mySwallower' })
    expectFailure(watch(run((s) => pipe(defaultTurn(s), swallow))), /no state/, /mySwallower/)
  })

  it('a stage written with onTurnState that answers a state with an event only fails the run', () => {
    const eventOnly = onTurnState((state): TurnItem => ({ type: 'turnStart', turnIndex: state.turnIndex }))
    expectFailure(watch(run((s) => pipe(defaultTurn(s), eventOnly))), /no state/)
  })

  it('a stage that delays the state (held asynchronously by onTurnState) is fine', () => {
    const outcome = runAgentMarbles(() => watch(run((s) => pipe(defaultTurn(s), onTurnState((state) => timer(5).pipe(map(() => state)))))))
    expect(outcome.error).toBeUndefined()
    expect(outcome.completed).toBe(true)
  })
})

describe('the limit of the dropped-state check', () => {
  it('a state held asynchronously by a plain operator (not onTurnState) is taken as dropped: the run fails with the advice', () => {
    const outcome = runAgentMarbles(() => watch(run((s) => pipe(defaultTurn(s), delay(5)))))
    expectFailure(outcome, /no state/, /onTurnState/)
  })
})

describe('a turn that emits two states', () => {
  const twice: OperatorFunction<TurnItem, TurnItem> = mergeMap((item: TurnItem) => (isTurnState(item) ? [item, item] : [item]))

  it('fails the run, naming the last stage that passed the state on', () => {
    expectFailure(watch(run((s) => pipe(defaultTurn(s), twice))), /two states|second state/, /pollFollowUp/)
  })

  it('a late duplicate of an earlier turn while the next one is in flight fails the run', () => {
    const outcome = runAgentMarbles(() => {
      const slow: ScriptedResponse = { marbles: '----------s-t-(p|)', values: { s: chunk.start(), t: chunk.text('hi'), p: chunk.stop() } }
      const lateCopy: TurnOperator = mergeMap((item: TurnItem) =>
        isTurnState(item) && item.turnIndex === 0 ? concat(of(item), timer(3).pipe(map(() => item))) : of(item),
      )
      return watch(run((s) => pipe(defaultTurn(s), lateCopy), [reply.toolCalls([{ id: 'c1', name: 'add', args: { a: 2, b: 3 } }]), slow]))
    })
    expectFailure(outcome, /second state|two states/, /turn 0/)
  })

  it('a stage written with onTurnState that answers with two states fails the run, naming it', () => {
    const doubler = onTurnState((state) => [state, nextState(state, {})], { stage: 'myDoubler' })
    expectFailure(watch(run((s) => pipe(defaultTurn(s), doubler))), /two states|second state/, /myDoubler/)
  })
})

describe('composing more stages than pipe takes', () => {
  it('composeTurn composes any number of stages, typed', () => {
    const marks: number[] = []
    const mark = (n: number): TurnOperator => onTurnState((state) => (marks.push(n), state))
    const outcome = watch(
      run((s) =>
        composeTurn(
          mark(1), s.preTurnPolicy, s.startTurn, s.transformContext, mark(2), s.streamLlm, s.dispatchTools, mark(3),
          s.endTurn, s.postTurnPolicy, s.pollSteering, s.decideContinuation, s.postLoopPolicy, s.pollFollowUp, mark(4),
        ),
      ),
    )
    expect(outcome.error).toBeUndefined()
    expect(outcome.completed).toBe(true)
    expect(marks).toEqual([1, 2, 3, 4, 1, 2, 3, 4])
  })
})
