import { identity } from 'rxjs'
import { callUser, CallbackError } from '../src/rx/user-callback.js'
import type { AgentMessage } from '../src/types/message.js'
import { appended, nextState, type TurnOperator } from '../src/turn/turn-state.js'
import { onTurnState } from './on-turn-state.js'

/**
 * After a turn's tool batch: takes the steering messages that arrived; they
 * join the next turn. Whether there is one is `decideContinuation`'s call,
 * which must come after this stage (pending messages make the loop go on).
 * A source that throws ends the run with stopReason `error` (`steering source
 * threw: …`).
 *
 * ```
 * source: --S|
 * result: --S'|     S'.pending: S.pending + the steering messages
 * ```
 *
 * Without `poll` there is nothing to take: the stage is `identity`.
 */
export function pollSteering(poll?: () => readonly AgentMessage[]): TurnOperator {
  // Nothing to take: no stage at all (as the policy stages without policies); a run holds one subscription less.
  if (poll === undefined) return identity
  return onTurnState(
    (state) => {
      const found = callUser('steering source', poll)
      if (found instanceof CallbackError) return nextState(state, { stop: { reason: 'error', message: found.message } })
      return found.length === 0 ? state : nextState(state, { pending: appended(state.pending, found) })
    },
    { stage: 'pollSteering' },
  )
}
