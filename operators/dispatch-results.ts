/**
 * What a dispatched tool call's result is made of: the texts of calls
 * cancelled by an abort or a steering interruption, a call's outcome, and the
 * frozen result message that joins the transcript (see `dispatchTools`).
 */
import { deepFreeze } from '../src/types/deep-freeze.js'
import type { ToolResultMessage } from '../src/types/message.js'
import type { ToolOutput } from '../src/types/tool.js'

export type Outcome = { readonly output: ToolOutput; readonly isError: boolean }

export const cancelledText = {
  abort: { running: 'Tool call aborted: the run was aborted before it finished.', waiting: 'Tool call not executed: the run was aborted.' },
  steering: {
    running: 'Tool call interrupted by a steering message; it did not finish.',
    waiting: 'Tool call skipped: a steering message interrupted the batch before it ran.',
  },
}

/**
 * A tool result frozen all the way down, `details` too, as an Agent's state
 * keeps it (its reducer freezes what enters and skips what is frozen): a
 * transcript's messages cannot change, and the adapters cache the wire text
 * of frozen messages (src/providers/wire-cache.ts; WIRE 50 tool turns, see
 * that file). A value that cannot be frozen (a hostile proxy in `details`)
 * leaves the message unfrozen, a copy, for an Agent to report as before.
 */
export function frozenResult(message: ToolResultMessage): ToolResultMessage {
  try {
    // The message is a literal of known keys (see `CallBatch.complete`) whose only objects are
    // `content` and `details`: those are walked, the message itself frozen without a walk over its keys.
    deepFreeze(message.content)
    if (message.details !== undefined) deepFreeze(message.details)
    Object.freeze(message)
    return message
  } catch {
    return { ...message }
  }
}
