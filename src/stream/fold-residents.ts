/**
 * Answers folded once when the fold's module is loaded and kept for the
 * process (see `resident`), so that the hidden classes of a fold, its
 * updates, snapshots and final messages outlive every run: the per-token
 * code and the code that reads a final message embed them, and a full GC
 * that found none alive threw that code away.
 *
 * Internal: imported for its effect by the operators that fold a stream.
 */
import type { ProviderChunk } from '../types/chunk.js'
import type { AssistantMessage } from '../types/message.js'
import { resident } from '../rx/resident.js'
import { MessageFold } from './message-fold.js'

/**
 * A two-delta answer folded to its end: the fold, its head and segment, its
 * update events and growing text, a frozen snapshot and the final message.
 * Kept, so that their hidden classes outlive a run (see `resident`): the
 * per-token code and the code that reads the final message embed them.
 */
function residentAnswer(): readonly unknown[] {
  const fold = new MessageFold({ provider: 'resident', modelId: 'resident', thinkingLevel: 'off' }, Date.now())
  const updates = [fold.push({ type: 'messageStart', id: 'resident', model: '' }), fold.push({ type: 'textDelta', text: 'a' }), fold.push({ type: 'textDelta', text: 'b' })]
  const snapshot = fold.current()
  fold.push({ type: 'stop', reason: 'endTurn' })
  return [fold, updates, snapshot, fold.finish()]
}
resident(residentAnswer())

/**
 * The same for an answer that calls a tool (text, then a call whose arguments
 * stream in two fragments): its snapshots mid-call (a streaming block, partial
 * arguments) and its final message. Its timestamp is a clock's, as a run's is
 * (a small integer would give the field a layout that a run's time then
 * replaces). Exported for the Agent's resident states (`resident-states.ts`).
 *
 * Internal.
 */
export function residentToolAnswer(): AssistantMessage {
  const fold = new MessageFold({ provider: 'resident', modelId: 'resident', thinkingLevel: 'off' }, Date.now())
  const kept: unknown[] = [fold]
  const push = (chunk: ProviderChunk): void => {
    kept.push(fold.push(chunk), fold.current())
  }
  push({ type: 'messageStart', id: 'resident', model: '' })
  push({ type: 'textDelta', text: 'a' })
  push({ type: 'toolUseStart', id: 'c', name: 't' })
  push({ type: 'toolUseArgsDelta', id: 'c', fragment: '{"a":' })
  push({ type: 'toolUseArgsDelta', id: 'c', fragment: '1}' })
  push({ type: 'toolUseEnd', id: 'c' })
  push({ type: 'stop', reason: 'toolUse' })
  const message = fold.finish()
  resident(kept)
  return resident(message)
}
residentToolAnswer()
