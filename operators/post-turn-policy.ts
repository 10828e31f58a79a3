import { identity, mergeMap } from 'rxjs'
import type { PostTurnPolicy } from '../src/policy/policy.js'
import { runPolicies } from '../src/policy/run-policies.js'
import { appended, nextState, runViewOf, type TurnItem, type TurnOperator } from '../src/turn/turn-state.js'
import { onTurnState } from './on-turn-state.js'
import { abortedState, untilAborted, type AbortOption } from './until-aborted.js'

/**
 * Consults the post-turn policies after `turnEnd`. `stop` ends the run after
 * this turn; `inject` queues messages for the next turn and forces one, even
 * if the model called no tools. An abort while a policy is pending cancels
 * it and ends the run `aborted` (see {@link untilAborted}).
 *
 * ```
 * source: --S|
 * result: --(dS')|     d: policyDecision (only for stop/inject)
 * ```
 */
export function postTurnPolicy(policies: readonly PostTurnPolicy[] = [], options: AbortOption = {}): TurnOperator {
  if (policies.length === 0) return identity
  return onTurnState((state) => {
    const message = state.assistant
    if (message === undefined) return state
    return runPolicies('postTurn', policies, { ...runViewOf(state), message, toolResults: state.toolResults }).pipe(
      mergeMap((outcome): readonly TurnItem[] => [
        ...outcome.decisions,
        nextState(state, {
          pending: appended(state.pending, outcome.inject),
          forceNextTurn: state.forceNextTurn === true || outcome.inject.length > 0,
          ...(outcome.stop === undefined ? {} : { stop: { reason: 'policyStop', message: outcome.stop.reason, by: outcome.stop.by } }),
        }),
      ]),
      untilAborted<TurnItem>(options.abort, () => [abortedState(state, 'a post-turn policy')]),
    )
  }, { stage: 'postTurnPolicy' })
}
