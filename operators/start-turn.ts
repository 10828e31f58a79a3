import type { AgentEvent } from '../src/types/event.js'
import { draftWithMessages, type TurnItem, type TurnOperator } from '../src/turn/turn-state.js'
import { onTurnState } from './on-turn-state.js'

// It has no options: one operator serves every run (a subscription holds a run's own state).
const startTurnStage: TurnOperator = onTurnState(
  (state) => {
    const items: TurnItem[] = [{ type: 'turnStart', turnIndex: state.turnIndex }]
    for (const message of state.pending) {
      items.push({ type: 'messageStart', message } satisfies AgentEvent, { type: 'messageEnd', message } satisfies AgentEvent)
    }
    const next = draftWithMessages(state, state.pending)
    next.pending = []
    next.started = true
    items.push(Object.freeze(next))
    return items
  },
  { stage: 'startTurn' },
)

/**
 * Starts the turn: `turnStart`, then each pending message (prompts, steering,
 * follow-ups, injected) joins the transcript with `messageStart`/`messageEnd`.
 *
 * ```
 * source: --S|
 * result: --(tmmS')|    t: turnStart, m: messageStart/End per pending message
 * ```
 */
export function startTurn(): TurnOperator {
  return startTurnStage
}
