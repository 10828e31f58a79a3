/**
 * What the crash and lease tests check of what children reported: the stored
 * records decode and keep every acknowledged entry unchanged; a transcript
 * answers every tool call exactly once; no tool call ran twice, and a result
 * that says a tool succeeded comes from an execution that ended.
 * Each check returns its problems in words (empty: fine), so that a test can
 * report all of them with the seed and the kill point.
 */
import { isDeepStrictEqual } from 'node:util'
import { readFileSync, existsSync } from 'node:fs'
import { decodeAgentLog, type AgentLogEntry } from '../../../src/agent/agent-log.js'
import { SessionRecord } from '../../../src/agent/session-store.js'
import type { AgentMessage } from '../../../src/types/message.js'
import type { ChildLine } from './harness.js'
import type { Execution } from './scenario.js'

/** JSON's view of a value (what a store keeps). */
export const plain = (value: unknown): unknown => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)))

/** The stored records, decoded: their log entries (checked with `decodeAgentLog`) and problems. */
export function decodeStored(records: unknown): { readonly log: readonly AgentLogEntry[]; readonly problems: readonly string[] } {
  const problems: string[] = []
  if (!Array.isArray(records)) return { log: [], problems: [`the records are not an array: ${JSON.stringify(records)?.slice(0, 200)}`] }
  const entries: unknown[] = []
  let position = 0
  for (const [i, record] of (records as unknown[]).entries()) {
    if (!SessionRecord.is(record)) {
      problems.push(`record ${i} does not decode as a SessionRecord: ${JSON.stringify(record).slice(0, 300)}`)
      continue
    }
    if (record.position <= position) problems.push(`record ${i} is at position ${record.position}, not after ${position}`)
    position = record.position
    if (record.body.type !== 'stream') entries.push(record.body)
  }
  if (entries.length === 0) return { log: [], problems }
  try {
    return { log: decodeAgentLog(entries, 'stored records'), problems }
  } catch (error) {
    return { log: [], problems: [...problems, `the stored log does not decode: ${(error as Error).message}`] }
  }
}

/** Every acknowledged entry is in `log` at its place, unchanged. */
export function lostOrChanged(log: readonly AgentLogEntry[], acked: ReadonlyMap<number, unknown>): string[] {
  const problems: string[] = []
  for (const [seq, entry] of acked) {
    const stored = log[seq]
    if (stored === undefined) problems.push(`acknowledged entry ${seq} (${(entry as { type?: string }).type}) is missing: the log has ${log.length} entries`)
    else if (!isDeepStrictEqual(plain(stored), plain(entry))) problems.push(`acknowledged entry ${seq} changed: ${JSON.stringify(entry).slice(0, 300)} → ${JSON.stringify(stored).slice(0, 300)}`)
  }
  return problems
}

/** Every tool call has exactly one result after it (`waiting`: calls that may have none yet); every result answers a call before it. */
export function transcriptProblems(messages: readonly AgentMessage[], waiting: readonly string[] = []): string[] {
  const problems: string[] = []
  const calls = new Map<string, number>()
  const results = new Map<string, number>()
  messages.forEach((m, i) => {
    if (m.role === 'assistant') {
      for (const block of m.content) {
        if (block.type !== 'toolCall') continue
        if (calls.has(block.id)) problems.push(`tool call ${block.id} appears twice (messages ${calls.get(block.id)} and ${i})`)
        calls.set(block.id, i)
      }
    } else if (m.role === 'toolResult') {
      if (!calls.has(m.toolCallId)) problems.push(`message ${i}: a result for ${m.toolCallId}, which no earlier message calls`)
      results.set(m.toolCallId, (results.get(m.toolCallId) ?? 0) + 1)
    }
  })
  for (const [id, at] of calls) {
    const n = results.get(id) ?? 0
    if (n !== 1 && !(n === 0 && waiting.includes(id))) problems.push(`tool call ${id} (message ${at}) has ${n} results`)
  }
  return problems
}

export function readExecutions(file: string): Execution[] {
  if (!existsSync(file)) return []
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Execution)
}

/** Tool calls that started more than once, with the pids that ran them. */
export function repeatedRuns(executions: readonly Execution[]): Map<string, number[]> {
  const starts = new Map<string, number[]>()
  for (const e of executions) if (e.phase === 'start') starts.set(e.id, [...(starts.get(e.id) ?? []), e.pid])
  return new Map([...starts].filter(([, pids]) => pids.length > 1))
}

/** Every successful result in `messages` comes from an execution of its call that ended. */
export function unendedSuccesses(executions: readonly Execution[], messages: readonly AgentMessage[]): string[] {
  const ends = new Set(executions.filter((e) => e.phase === 'end').map((e) => e.id))
  return messages.flatMap((m) =>
    m.role === 'toolResult' && !m.isError && !ends.has(m.toolCallId) ? [`tool call ${m.toolCallId} has a successful result, but no execution of it ended`] : [],
  )
}

/**
 * The tool calls the acknowledged log has settled past asking: decided
 * (`approvalDecided`), started, ended or answered. The durable guarantee:
 * none of these may run again. (A call whose execution was not acknowledged
 * yet — it ran, and the crash came before its start was committed — may run
 * again: "a tool with side effects running at the crash may have run"; but
 * not a call that needed approval: see {@link unacknowledgedApprovedStarts}.)
 */
export function settledCalls(acked: ReadonlyMap<number, unknown>): Set<string> {
  const ids = new Set<string>()
  for (const entry of acked.values()) {
    const e = entry as AgentLogEntry
    if (e.type === 'approvalDecided' || e.type === 'toolExecutionStart' || e.type === 'toolExecutionEnd') ids.add(e.toolCallId)
    if (e.type === 'messageEnd' && e.message.role === 'toolResult') ids.add(e.message.toolCallId)
  }
  return ids
}

/**
 * Write-ahead approvals: a call of a gated tool (`gated`) starts in a process
 * only once its `approvalDecided` entry is acknowledged — before this process
 * (`settled`, from {@link settledCalls}) or by an `ack` line of this process
 * that comes before the tool's `start` line.
 */
export function unacknowledgedApprovedStarts(lines: readonly ChildLine[], settled: ReadonlySet<string>, gated: readonly string[]): string[] {
  const decided = new Set(settled)
  const problems: string[] = []
  for (const line of lines) {
    if (line.t === 'ack') for (const entry of line.entries as readonly AgentLogEntry[]) if (entry.type === 'approvalDecided') decided.add(entry.toolCallId)
    if (line.t === 'tool' && line.phase === 'start' && gated.includes(line.name as string) && !decided.has(line.id as string)) {
      problems.push(`tool call ${String(line.id)} (${String(line.name)}, needs approval) started before its approval decision was acknowledged`)
    }
  }
  return problems
}

/**
 * What one process acknowledged, from its lines: `ack` lines in order, each
 * continuing where the one before stopped, never beyond what its appends
 * committed (`appended` lines before it). Adds them to `acked`.
 */
export function collectAcks(lines: readonly ChildLine[], acked: Map<number, unknown>, startSeq: number): string[] {
  const problems: string[] = []
  let committed = startSeq
  let seq = startSeq
  for (const line of lines) {
    if (line.t === 'appended') committed = Math.max(committed, line.length as number)
    if (line.t !== 'ack') continue
    const entries = line.entries as unknown[]
    const to = line.seq as number
    if (to > committed) problems.push(`durable$ said ${to} before an append committed it (appends committed up to ${committed})`)
    if (to - entries.length !== seq) problems.push(`ack to ${to} with ${entries.length} entries does not continue from ${seq}`)
    entries.forEach((entry, i) => {
      const at = to - entries.length + i
      if ((entry as { seq?: unknown }).seq !== at) problems.push(`acked entry at ${at} says seq ${(entry as { seq?: unknown }).seq}`)
      acked.set(at, entry)
    })
    seq = to
  }
  return problems
}

/**
 * Runs never interleave: each `runStart` comes after the previous run's end —
 * except the run that resumes a suspended one (a reopened session whose run
 * waited for approvals): `runStart` with no prompts right after the
 * `approvalDecided` entries that answered the suspended run's last
 * `approvalRequested` entries. `open` is the run the log ends in (if any).
 */
export function runsOf(log: readonly AgentLogEntry[]): { readonly problems: string[]; readonly open: number | undefined } {
  const problems: string[] = []
  let open: number | undefined
  log.forEach((e, i) => {
    if (e.type === 'runStart') {
      if (open !== undefined && !resumes(log, i)) problems.push(`run started at ${e.seq} while the run started at ${open} had not ended`)
      open = e.seq
    } else if (e.type === 'agentEnd' || e.type === 'runFailed') open = undefined
  })
  return { problems, open }
}

function resumes(log: readonly AgentLogEntry[], at: number): boolean {
  const start = log[at]!
  if (start.type !== 'runStart' || start.prompts.length > 0) return false
  let i = at - 1
  while (i >= 0 && log[i]!.type === 'approvalDecided') i--
  return i < at - 1 && log[i]?.type === 'approvalRequested'
}

export const interleavedRuns = (log: readonly AgentLogEntry[]): string[] => runsOf(log).problems
