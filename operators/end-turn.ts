import { hasUnansweredCalls, outOfOrder } from '../src/turn/turn-protocol.js'
import type { TurnOperator } from '../src/turn/turn-state.js'
import { onTurnState } from './on-turn-state.js'
import { resident } from '../src/rx/resident.js'
import type { TurnEndEvent } from '../src/types/event.js'
import { assistantMessage, type AssistantMessage, type ToolResultMessage } from '../src/types/message.js'

// It has no options: one operator serves every run (a subscription holds a run's own state).
const endTurnStage: TurnOperator = onTurnState(
  (state) => {
    if (state.stop === undefined && hasUnansweredCalls(state)) throw outOfOrder('endTurn', "the model's tool calls without their results", 'dispatchTools')
    return state.started ? [turnEndOf(state.turnIndex, state.assistant, state.toolResults), state] : state
  },
  { whenStopped: true, stage: 'endTurn' },
)

/** A turn's `turnEnd` event (without `message` when the turn has no answer). */
function turnEndOf(turnIndex: number, assistant: AssistantMessage | undefined, toolResults: readonly ToolResultMessage[]): TurnEndEvent {
  return { type: 'turnEnd', turnIndex, ...(assistant === undefined ? {} : { message: assistant }), toolResults }
}

// Its two layouts, kept (see `resident`): the spread gives a `turnEnd` a hidden class reached by
// weak transitions, and with no `turnEnd` alive after a full GC between runs the class was
// collected, and the code that had seen it thrown away ("weak objects") and compiled again in the
// next run: an Agent's `ActiveRun.next` and `TurnMeter.see` (AGENT LONG 5,000 messages, 10k deltas,
// a full GC before each run, --trace-opt: its `turnEnd`'s map was a new one in every run).
resident(turnEndOf(0, undefined, []))
resident(turnEndOf(0, assistantMessage(''), []))

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
