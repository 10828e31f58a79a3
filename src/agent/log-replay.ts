/** What `Agent.fromLog` needs of a log before it folds it: decoded, its tools at hand, its runs counted. */
import { invalidInput } from '../types/input.js'
import type { AgentTool } from '../types/tool.js'
import { decodeAgentLog, type AgentLogCommand, type AgentLogEntry, type InitEntry } from './agent-log.js'

/** A decoded log, ready to fold. */
export interface LogReplay {
  readonly entries: readonly AgentLogEntry[]
  readonly init: InitEntry
  /** How many runs the log started (the next run id counts on from it). */
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

/** @throws InvalidInputError naming the path of what does not decode, or of a tool name `tools` lacks. */
export function logReplayOf(log: unknown, tools: readonly AgentTool[], entry: string): LogReplay {
  const entries = decodeAgentLog(log, entry, 'log')
  const given = new Set(tools.map((x) => x.name))
  let runs = 0
  let boundary = 0
  entries.forEach((e, i) => {
    const named = e.type === 'init' || e.type === 'tools' ? e.tools : []
    const missing = named.findIndex((name) => !given.has(name))
    if (missing >= 0) throw invalidInput(entry, 'log', `[${i}].tools[${missing}]`, `the log names a tool '${named[missing]!}' that options.tools lacks`, named[missing])
    if (e.type === 'runStart') runs++
    if (e.type === 'turnEnd' || e.type === 'runStart' || e.type === 'agentEnd' || e.type === 'reset') boundary = i
  })
  return { entries, init: entries[0] as InitEntry, runs, boundary }
}
