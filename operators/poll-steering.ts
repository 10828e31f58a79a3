import { callUser, CallbackError } from '../src/rx/user-callback.js'
import type { AgentMessage } from '../src/types/message.js'
import { appended, nextState, type TurnOperator } from '../src/turn/turn-state.js'
import { onTurnState } from './on-turn-state.js'

/**
 * After a turn: takes the steering messages that arrived (they join the next
 * turn) and decides whether the loop goes on. It goes on (`next`) when the
 * model called tools, messages are pending, or a stage forced another turn;
 * otherwise the turn is `idle` and the loop would end here. A source that
 * throws ends the run with stopReason `error` (`steering source threw: …`).
 *
 * ```
 * source: --S|
 * result: --S'|     S'.continuation: 'next' | 'idle'
 * ```
 */
export function pollSteering(poll: () => readonly AgentMessage[] = () => []): TurnOperator {
  return onTurnState((state) => {
    const found = callUser('steering source', poll)
    if (found instanceof CallbackError) return nextState(state, { stop: { reason: 'error', message: found.message } })
    const pending = appended(state.pending, found)
    // Every tool call has exactly one result, so results mean the model called tools.
    const calledTools = state.toolResults.length > 0
    const goOn = calledTools || pending.length > 0 || state.forceNextTurn === true
    return nextState(state, { pending, continuation: goOn ? 'next' : 'idle' })
  })
}
