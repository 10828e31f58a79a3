/**
 * A session's records → its runs drawn as lanes of bars and marks: the same
 * picture as the marble tests, with real times. A pure function of the
 * records (in position order), so the page can redraw it after every record
 * of a live tail.
 *
 * ```
 * records: runStart turnStart stream(text) messageEnd(assistant: 2 tool calls) toolStart(a) toolStart(b) toolEnd(b) toolEnd(a) …
 * model:   [=t====]
 * tool a:          [=========]
 * tool b:           [===]          overlapping bars: the calls ran together
 * ```
 *
 * What the log does not hold is not drawn: the chunks of a finished message
 * are compacted into its `messageEnd` (its content is in the inspector; its
 * chunk marks are there only while it streams). Its time to first token,
 * retries and fallbacks come from its stream records while it streams, then
 * from the marks its `messageEnd` carries (`StreamMarks`; a log written
 * before them has none). A policy's decision is a mark where it was made
 * (a log written before `policyDecision` entries shows only the stop it
 * caused).
 */
import type { SessionRecord } from '../agent/session-store.js'
import type { SessionTimeline } from './timeline-model.js'
import { RunBuilder } from './timeline-run.js'
import { drawStreamRecord } from './timeline-stream.js'

export { messageGist } from './timeline-labels.js'

/**
 * The suspended run goes on (`runResumed`, after its approvals were decided,
 * maybe in another process): the same run. The turn it was suspended in
 * ends at its last record (the resumed loop numbers its turns anew); a mark
 * says when it resumed.
 */
function resume(run: RunBuilder, at: number, position: number): void {
  if (run.turn !== undefined && run.turn.end === undefined) run.turn.end = run.to
  run.see(at)
  run.mark(run.inputs, 'command', at, 'resumed', position)
}

/**
 * Draws a session's records (any prefix of them, in position order) as
 * runs of lanes. Records before the first run (the `init`, commands,
 * queued messages) go to the run that follows them; a `runResumed` goes on
 * with its run (in a log written before `runResumed` existed, a resumed run
 * has a `runStart` of its own: the suspended one is drawn `interrupted`);
 * entries of an unknown kind are skipped.
 */
export function sessionTimeline(sessionId: string, records: readonly SessionRecord[]): SessionTimeline {
  let agentId: string | undefined
  const runs: RunBuilder[] = []
  let current: RunBuilder | undefined
  /** The run a `runResumed` just went on with, until its next entry. */
  let resumed: RunBuilder | undefined
  let before: SessionRecord[] = []
  let lastPosition = 0
  const callNames = new Map<string, string>()
  for (const record of records) {
    lastPosition = Math.max(lastPosition, record.position)
    const { body, at, position } = record
    if (body.type === 'init') {
      agentId = body.agentId
      continue
    }
    if (body.type === 'runResumed' && current?.runId === body.runId) {
      resume(current, at, position)
      resumed = current
      continue
    }
    if (body.type === 'runStart' || body.type === 'runResumed') {
      current?.interrupt()
      current = new RunBuilder(body.runId, runs.length, at, callNames)
      runs.push(current)
      for (const early of before) {
        current.see(early.at)
        if (early.body.type !== 'stream') current.entry(early.body, early.at, early.position)
      }
      before = []
      continue
    }
    if (current === undefined) {
      before.push(record)
      continue
    }
    current.see(at)
    if (body.type === 'stream') drawStreamRecord(current, body, at, position)
    else current.entry(body, at, position)
    if (body.type === 'turnStart' && current === resumed) {
      // The resumed turn runs the suspended answer's calls without a model call (`agentLoopResume`): no model bar.
      current.model.bars.pop()
      current.modelBar = undefined
    }
    if (body.type !== 'stream') resumed = undefined
    if (body.type === 'agentEnd' || body.type === 'runFailed') current = undefined
  }
  const built = runs.map((r) => r.build())
  return { sessionId, agentId, lastPosition, runs: built, pendingApprovals: built.flatMap((r) => r.pendingApprovals) }
}
