import { identity, mergeMap } from 'rxjs'
import type { PreTurnPolicy } from '../src/policy/policy.js'
import { runPolicies } from '../src/policy/run-policies.js'
import { appended, nextState, runViewOf, type TurnItem, type TurnOperator } from '../src/turn/turn-state.js'
import { onTurnState } from './on-turn-state.js'
import { abortedState, untilAborted, type AbortOption } from './until-aborted.js'

/**
 * Consults the pre-turn policies before a turn starts. `stop` ends the run
 * before the model is called (no turn starts); `inject` adds messages that
 * join the transcript when the turn starts. An abort while a policy is
 * pending cancels it and ends the run `aborted` (see {@link untilAborted}).
 *
 * ```
 * source: --S|
 * result: --(dS')|     d: policyDecision (only for stop/inject)
 * ```
 */
export function preTurnPolicy(policies: readonly PreTurnPolicy[] = [], options: AbortOption = {}): TurnOperator {
  if (policies.length === 0) return identity
  return onTurnState((state) =>
    runPolicies('preTurn', policies, { ...runViewOf(state), pending: state.pending }).pipe(
      mergeMap((outcome): readonly TurnItem[] => [
        ...outcome.decisions,
        nextState(state, {
          pending: appended(state.pending, outcome.inject),
          ...(outcome.stop === undefined ? {} : { stop: { reason: 'policyStop', message: outcome.stop.reason, by: outcome.stop.by } }),
        }),
      ]),
      untilAborted<TurnItem>(options.abort, () => [abortedState(state, 'a pre-turn policy')]),
    ),
    { stage: 'preTurnPolicy' },
  )
}
