import { resident } from '../src/rx/resident.js'
import { residentToolAnswer } from '../src/stream/fold-residents.js'
import type { TurnEndEvent } from '../src/types/event.js'
import type { AssistantMessage, ToolResultMessage } from '../src/types/message.js'
import { hasUnansweredCalls, outOfOrder } from '../src/turn/turn-protocol.js'
import type { TurnOperator } from '../src/turn/turn-state.js'
import { onTurnState } from './on-turn-state.js'

/**
 * A turn's `turnEnd`: two literals, not one with a spread `message`, so that each kind has one
 * hidden class, kept alive between runs by a resident of each (below). With no `turnEnd` alive
 * after a full GC between runs, the Agent's code that reads them (`AgentStore.recordEntry`,
 * `TurnMeter.turnEnded`) found its type feedback changed in every run and was never optimized
 * (--trace-opt-verbose: "resetting ticks … due to IC change").
 */
function turnEndEvent(turnIndex: number, message: AssistantMessage | undefined, toolResults: readonly ToolResultMessage[]): TurnEndEvent {
  return message === undefined ? { type: 'turnEnd', turnIndex, toolResults } : { type: 'turnEnd', turnIndex, message, toolResults }
}

// It has no options: one operator serves every run (a subscription holds a run's own state).
const endTurnStage: TurnOperator = onTurnState(
  (state) => {
    if (state.stop === undefined && hasUnansweredCalls(state)) throw outOfOrder('endTurn', "the model's tool calls without their results", 'dispatchTools')
    return state.started
      ? [turnEndEvent(state.turnIndex, state.assistant, state.toolResults), state]
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

// Their hidden classes outlive a run (see `resident`): a turn with an answer, and one without.
resident(turnEndEvent(0, residentToolAnswer(), []))
resident(turnEndEvent(0, undefined, []))
