import { callUser, CallbackError } from '../src/rx/user-callback.js'
import type { AgentMessage } from '../src/types/message.js'
import { appended, nextState, type TurnOperator } from '../src/turn/turn-state.js'
import { outOfOrder } from '../src/turn/turn-protocol.js'
import { onTurnState } from './on-turn-state.js'

/**
 * When the loop would end (`idle`), takes the follow-up messages that are
 * waiting; if there are any, the loop goes on with them instead of ending.
 * A source that throws ends the run with stopReason `error`
 * (`follow-up source threw: …`).
 *
 * ```
 * source: --S|      S.continuation === 'idle'
 * result: --S'|     S'.continuation === 'next' when follow-ups were waiting
 * ```
 */
export function pollFollowUp(poll?: () => readonly AgentMessage[]): TurnOperator {
  if (poll === undefined) return noFollowUp
  return followUpStage(poll)
}

/** The stage, polling `poll` (none: one stage serves every run). */
function followUpStage(poll: (() => readonly AgentMessage[]) | undefined): TurnOperator {
  return onTurnState((state) => {
    if (state.continuation === undefined) throw outOfOrder('pollFollowUp', 'a turn whose continuation is not decided', 'decideContinuation')
    if (state.continuation !== 'idle' || poll === undefined) return state
    const found = callUser('follow-up source', poll)
    if (found instanceof CallbackError) return nextState(state, { stop: { reason: 'error', message: found.message } })
    if (found.length === 0) return state
    return nextState(state, { pending: appended(state.pending, found), continuation: 'next' })
  }, { stage: 'pollFollowUp' })
}

const noFollowUp: TurnOperator = followUpStage(undefined)
