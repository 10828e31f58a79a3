/**
 * What a streamed message draws on its run's model lane: chunk marks and
 * its turn's time to first token from its stream records while it streams,
 * then, once it ended (its records compacted), the marks its `messageEnd`
 * carries (`StreamMarks`).
 */
import type { StreamMarks } from '../agent/agent-log.js'
import type { StreamRecord } from '../agent/session-store.js'
import type { MarkKind, TimelineMark } from './timeline-model.js'
import type { RunBuilder } from './timeline-run.js'

/** A stream record: a mark per kind of chunk it holds, its retries and fallbacks, and the turn's first token. */
export function drawStreamRecord(run: RunBuilder, record: StreamRecord, at: number, position: number): void {
  const kinds = new Set<MarkKind>()
  for (const chunk of record.chunks) {
    switch (chunk.type) {
      case 'textDelta':
        kinds.add('text')
        break
      case 'thinkingDelta':
      case 'thinkingRedacted':
        kinds.add('thinking')
        break
      case 'toolUseStart':
        run.callNames.set(chunk.id, chunk.name)
        kinds.add('toolUse')
        break
      case 'toolUseArgsDelta':
        kinds.add('toolUse')
        break
      case 'retry':
        if (run.turn !== undefined) run.turn.retriesDrawn = true
        if (chunk.model !== undefined) run.mark(run.model, 'fallback', at, `fallback to ${chunk.model.modelId}: ${chunk.error.message}`, position)
        else run.mark(run.model, 'retry', at, `retry ${chunk.attempt} in ${chunk.delayMs} ms: ${chunk.error.message}`, position)
        break
      default:
        break
    }
  }
  if (kinds.size > 0 && run.turn !== undefined && run.turn.firstTokenAt === undefined) {
    run.turn.firstTokenAt = at
    run.turn.ttftMs = at - run.turn.start
  }
  for (const kind of kinds) run.mark(run.model, kind, at, kind === 'toolUse' ? 'tool-use chunks' : `${kind} chunks`, position)
}

/**
 * A finished message's marks (`messageEnd.stream`): its turn's time to first
 * token, and its retries and fallbacks unless its stream records drew them
 * already.
 */
export function drawStreamMarks(run: RunBuilder, marks: StreamMarks, position: number): void {
  const turn = run.turn
  if (turn !== undefined && marks.firstChunkAt !== undefined) {
    turn.firstTokenAt = marks.firstChunkAt
    turn.ttftMs = marks.firstChunkAt - turn.start
  }
  if (turn?.retriesDrawn === true) return
  const drawn: TimelineMark[] = [
    ...(marks.retries ?? []).map((r): TimelineMark => ({ kind: 'retry', at: r.at, label: `retry ${r.attempt} in ${r.delayMs} ms: ${r.error}`, position })),
    ...(marks.fallbacks ?? []).map((f): TimelineMark => ({ kind: 'fallback', at: f.at, label: `fallback to ${f.modelId}: ${f.error}`, position })),
  ]
  run.model.marks.push(...drawn.sort((a, b) => a.at - b.at))
}
