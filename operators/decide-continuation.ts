import { hasUnansweredCalls, outOfOrder } from '../src/turn/turn-protocol.js'
import { draftState, type TurnOperator } from '../src/turn/turn-state.js'
import { onTurnState } from './on-turn-state.js'

// It has no options: one operator serves every run (a subscription holds a run's own state).
const decideContinuationStage: TurnOperator = onTurnState(
  (state) => {
    if (state.assistant === undefined) throw outOfOrder('decideContinuation', 'a turn the model has not answered', 'streamLlm')
    if (hasUnansweredCalls(state)) throw outOfOrder('decideContinuation', "the model's tool calls without their results", 'dispatchTools')
    // Every tool call has exactly one result, so results mean the model called tools.
    const calledTools = state.toolResults.length > 0
    const goOn = calledTools || state.pending.length > 0 || state.forceNextTurn === true
    const next = draftState(state)
    next.continuation = goOn ? 'next' : 'idle'
    return Object.freeze(next)
  },
  { stage: 'decideContinuation' },
)

/**
 * Decides whether the loop goes on after this turn: it goes on (`next`) when
 * the model called tools, messages are pending (steering, injected), or a
 * stage forced another turn; otherwise the turn is `idle` and the loop would
 * end here (the post-loop stages may still add a turn). Every turn must pass
 * it, after `dispatchTools` and `pollSteering`.
 *
 * ```
 * source: --S|
 * result: --S'|     S'.continuation: 'next' | 'idle'
 * ```
 */
export function decideContinuation(): TurnOperator {
  return decideContinuationStage
}
