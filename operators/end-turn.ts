import { hasUnansweredCalls, outOfOrder } from '../src/turn/turn-protocol.js'
import type { TurnOperator } from '../src/turn/turn-state.js'
import { onTurnState } from './on-turn-state.js'

// It has no options: one operator serves every run (a subscription holds a run's own state).
const endTurnStage: TurnOperator = onTurnState(
  (state) => {
    if (state.stop === undefined && hasUnansweredCalls(state)) throw outOfOrder('endTurn', "the model's tool calls without their results", 'dispatchTools')
    return state.started
      ? [
          {
            type: 'turnEnd',
            turnIndex: state.turnIndex,
            ...(state.assistant === undefined ? {} : { message: state.assistant }),
            toolResults: state.toolResults,
          },
          state,
        ]
      : state
  },
  { whenStopped: true, stage: 'endTurn' },
)

/**
 * Ends a started turn with `turnEnd`, stopping or not: a turn that started
 * always ends.
 *
 * ```
 * source: --S|
 * result: --(eS)|       e: turnEnd
 * ```
 */
export function endTurn(): TurnOperator {
  return endTurnStage
}
