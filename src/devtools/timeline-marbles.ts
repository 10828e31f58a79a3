/**
 * A run's lanes written as marble strings, one character per `unitMs` from
 * the run's first instant: `=` where a bar runs (`~` while it waits for an
 * approval), a mark's letter ({@link MARK_LETTERS}) where it happened, `-`
 * elsewhere. Tests compare timelines this way; a terminal can print them.
 *
 * ```
 * inputs:       u---------
 * model:        ==t=======  (marks overwrite bars)
 * tool read c1: ?~~!====--
 * ```
 */
import { MARK_LETTERS, type RunTimeline } from './timeline-model.js'

/** Each lane of `run` as `label → marbles`; open bars run to the run's last record. */
export function timelineMarbles(run: RunTimeline, unitMs: number): Readonly<Record<string, string>> {
  if (!(unitMs > 0)) throw new RangeError(`timelineMarbles: unitMs must be a positive number of milliseconds, got ${String(unitMs)}`)
  const slot = (at: number): number => Math.floor((at - run.from) / unitMs)
  const width = slot(run.end ?? run.to) + 1
  const out: Record<string, string> = {}
  for (const lane of run.lanes) {
    const line: string[] = Array.from({ length: width }, () => '-')
    for (const bar of lane.bars) {
      const from = slot(bar.start)
      const to = Math.max(from + 1, slot(bar.end ?? run.to))
      for (let i = from; i < to && i < width; i++) line[i] = bar.kind === 'approval' ? '~' : '='
    }
    for (const mark of lane.marks) {
      const i = slot(mark.at)
      if (i >= 0 && i < width) line[i] = MARK_LETTERS[mark.kind]
    }
    out[lane.label] = line.join('')
  }
  return out
}
