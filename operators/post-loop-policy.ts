import { identity, mergeMap } from 'rxjs'
import type { PostLoopPolicy } from '../src/policy/policy.js'
import { runPolicies } from '../src/policy/run-policies.js'
import { appended, nextState, runViewOf, type TurnItem, type TurnOperator } from '../src/turn/turn-state.js'
import { outOfOrder } from '../src/turn/turn-protocol.js'
import { onTurnState } from './on-turn-state.js'
import { abortedState, untilAborted, type AbortOption } from './until-aborted.js'

/**
 * Consults the post-loop policies when the loop would end (the turn is
 * `idle`: no tool calls, no steering). `stop` ends the run with `policyStop`;
 * `inject` queues messages and goes on with another turn. A turn that goes on
 * anyway is passed through untouched. An abort while a policy is pending
 * cancels it and ends the run `aborted` (see {@link untilAborted}).
 *
 * ```
 * source: --S|          S.continuation === 'idle'
 * result: --(dS')|      d: policyDecision (only for stop/inject)
 * ```
 */
export function postLoopPolicy(policies: readonly PostLoopPolicy[] = [], options: AbortOption = {}): TurnOperator {
  if (policies.length === 0) return identity
  return onTurnState((state) => {
    const message = state.assistant
    if (state.continuation === undefined) throw outOfOrder('postLoopPolicy', 'a turn whose continuation is not decided', 'decideContinuation')
    if (state.continuation !== 'idle' || message === undefined) return state
    return runPolicies('postLoop', policies, { ...runViewOf(state), message, toolResults: state.toolResults }).pipe(
      mergeMap((outcome): readonly TurnItem[] => [
        ...outcome.decisions,
        nextState(state, {
          pending: appended(state.pending, outcome.inject),
          continuation: outcome.inject.length > 0 ? 'next' : 'idle',
          ...(outcome.stop === undefined ? {} : { stop: { reason: 'policyStop', message: outcome.stop.reason, by: outcome.stop.by } }),
        }),
      ]),
      untilAborted<TurnItem>(options.abort, () => [abortedState(state, 'a post-loop policy')]),
    )
  }, { stage: 'postLoopPolicy' })
}
