/** What `Agent.fromLog` needs of a log before it folds it: decoded, its tools at hand, its runs counted. */
import { invalidInput } from '../types/input.js'
import type { AgentTool } from '../types/tool.js'
import { decodeAgentLog, type AgentLogCommand, type AgentLogEntry, type InitEntry } from './agent-log.js'

/** A decoded log, ready to fold. */
export interface LogReplay {
  readonly entries: readonly AgentLogEntry[]
  readonly init: InitEntry
  /** How many runs the log started (`runStart`; a `runResumed` goes on with one): the next run id counts on from it. */
  readonly runs: number
  /** The position of the last run or turn boundary (a checkpoint's position). */
  readonly boundary: number
}

/** The entry that closes a log ending in the middle of a run. */
export const INTERRUPTED: AgentLogCommand = {
  type: 'runFailed',
  error: 'interrupted: the log ends in the middle of a run',
  settleReason: 'the run was interrupted before its result was recorded',
}

/**
 * The entry that closes a durable session's run cut off by its process's
 * end (a crash, a kill): unanswered tool calls get an error result saying so.
 */
export const PROCESS_STOPPED: AgentLogCommand = {
  type: 'runFailed',
  error: 'interrupted: the process stopped in the middle of the run',
  settleReason: 'the process stopped before its result was recorded',
}

/** The entry that closes a suspended run (waiting for approvals, no process running it) that `abort()` gave up. */
export const SUSPENDED_ABORTED: AgentLogCommand = {
  type: 'runFailed',
  error: 'aborted while waiting for approval',
  settleReason: 'the run was aborted while it waited for approval',
}

/** @throws InvalidInputError naming the path of what does not decode, or of a tool name `tools` lacks. */
export function logReplayOf(log: unknown, tools: readonly AgentTool[], entry: string): LogReplay {
  return replayOfEntries(decodeAgentLog(log, entry, 'log'), tools, entry)
}

/** A log already decoded entry by entry (`init` first), ready to fold. @throws InvalidInputError for an entry out of place, or a tool name `tools` lacks. */
export function replayOfEntries(entries: readonly AgentLogEntry[], tools: readonly AgentTool[], entry: string): LogReplay {
  if (entries[0]?.type !== 'init') throw invalidInput(entry, 'log', '[0].type', `the first entry must be 'init'`, entries[0]?.type)
  entries.forEach((e, i) => {
    if (e.seq !== i) throw invalidInput(entry, 'log', `[${i}].seq`, `entry ${i} is at position ${e.seq}`, e.seq)
  })
  const given = new Set(tools.map((x) => x.name))
  let runs = 0
  let boundary = 0
  entries.forEach((e, i) => {
    const named = e.type === 'init' || e.type === 'tools' ? e.tools : []
    const missing = named.findIndex((name) => !given.has(name))
    if (missing >= 0) throw invalidInput(entry, 'log', `[${i}].tools[${missing}]`, `the log names a tool '${named[missing]!}' that options.tools lacks`, named[missing])
    if (e.type === 'runStart') runs++
    if (e.type === 'turnEnd' || e.type === 'runStart' || e.type === 'runResumed' || e.type === 'agentEnd' || e.type === 'reset') boundary = i
  })
  return { entries, init: entries[0] as InitEntry, runs, boundary }
}
