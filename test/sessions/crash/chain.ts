/**
 * One crash chain: a session worked on by a row of processes, each SIGKILLed
 * at a point chosen (from the seed) among mid-stream, mid-tool, during an
 * append, while waiting for approval, during open, or at a random time; each
 * next process reopens the session fresh and is checked against everything
 * the processes before it acknowledged. The chain ends with a process that
 * is not killed (it must finish the run) and reads the stored log back once
 * its session is closed, to compare with what it held.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import type { AgentLogEntry } from '../../../src/agent/agent-log.js'
import type { AgentMessage } from '../../../src/types/message.js'
import { collectAcks, decodeStored, interleavedRuns, lostOrChanged, plain, readExecutions, repeatedRuns, runsOf, settledCalls, transcriptProblems, unacknowledgedApprovedStarts, unendedSuccesses } from './checks.js'
import type { ChildConfig, StoreConfig } from './child.js'
import { startChild, type ChildHandle, type ChildLine } from './harness.js'
import { FINAL_TEXT, GATED_TOOLS } from './scenario.js'

/** Where a process is killed. */
export type Trigger =
  | { readonly kind: 'delta'; readonly n: number }
  | { readonly kind: 'tool'; readonly delayMs: number }
  | { readonly kind: 'append'; readonly n: number }
  | { readonly kind: 'approval'; readonly delayMs: number }
  | { readonly kind: 'open'; readonly delayMs: number }
  | { readonly kind: 'time'; readonly ms: number }

export const TRIGGER_KINDS = ['delta', 'tool', 'append', 'approval', 'open', 'time'] as const

export interface ChainOptions {
  readonly index: number
  readonly script: string
  readonly store: StoreConfig
  readonly dir: string
  readonly kills: number
  readonly random: () => number
  /** A stable lease holder for every process of the chain (a restarted worker), or each its own (the next one waits for the dead one's lease to expire). */
  readonly stableHolder: boolean
}

export interface ChainReport {
  readonly kills: readonly { readonly trigger: Trigger; readonly lastLines: string }[]
  readonly processes: number
  readonly problems: readonly string[]
  /** Tool calls that ran twice, allowed by the guarantee: their execution was not acknowledged when the process running it was killed (never a call that needed approval: that is a problem). */
  readonly reruns: readonly string[]
}

function pickTrigger(kind: (typeof TRIGGER_KINDS)[number], random: () => number): Trigger {
  const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1))
  switch (kind) {
    case 'delta':
      return { kind, n: int(1, 60) }
    case 'tool':
      return { kind, delayMs: int(0, 120) }
    case 'append':
      return { kind, n: int(1, 30) }
    case 'approval':
      return { kind, delayMs: int(0, 40) }
    case 'open':
      return { kind, delayMs: int(0, 150) }
    case 'time':
      return { kind, ms: int(200, 2500) }
  }
}

/** Kills `child` when `trigger`'s point comes (and only then). */
function killer(trigger: Trigger | undefined): (line: ChildLine, child: ChildHandle) => void {
  let appends = 0
  const later = (child: ChildHandle, ms: number) => setTimeout(() => child.kill(), ms)
  return (line, child) => {
    if (trigger === undefined) return
    if (trigger.kind === 'delta' && line.t === 'delta' && line.n === trigger.n) child.kill()
    else if (trigger.kind === 'tool' && line.t === 'tool' && line.name === 'slow' && line.phase === 'start') later(child, trigger.delayMs)
    else if (trigger.kind === 'append' && line.t === 'append' && ++appends === trigger.n) child.kill()
    else if (trigger.kind === 'approval' && line.t === 'holding') later(child, trigger.delayMs)
    else if (trigger.kind === 'open' && line.t === 'raw') later(child, trigger.delayMs)
    else if (trigger.kind === 'time' && line.t === 'started') later(child, trigger.ms)
  }
}

const find = (child: ChildHandle, t: string) => child.lines.find((l) => l.t === t)
const lastLines = (child: ChildHandle) =>
  child.lines
    .slice(-4)
    .map((l) => (l.t === 'ack' ? `ack ${String(l.seq)}` : l.t === 'tool' ? `tool ${String(l.name)} ${String(l.phase)}` : l.t))
    .join(' > ')

/** Runs one chain; every problem found (a child that hangs too) is returned in words with where it was found. */
export async function runChain(options: ChainOptions): Promise<ChainReport> {
  try {
    return await chain(options)
  } catch (error) {
    return { kills: [], processes: 0, problems: [`chain ${options.index}: ${(error as Error).message}`], reruns: [] }
  }
}

async function chain(options: ChainOptions): Promise<ChainReport> {
  const { index, random } = options
  const sessionId = `crash-${index}`
  const executions = join(options.dir, `executions-${index}.jsonl`)
  const acked = new Map<number, unknown>()
  const kills: { trigger: Trigger; lastLines: string }[] = []
  const problems: string[] = []
  const base = { store: options.store, executions, sessionId, chunkDelayMs: 3 } as const
  // A short lease, but not so short that a process starved of CPU on a busy machine loses it while alive (4 s did, at load 20).
  const lease = options.stableHolder ? {} : { lease: { ttlMs: 8000, onBusy: 'wait' as const, waitMs: 60_000 } }
  const holder = options.stableHolder ? { holder: `chain-${index}` } : {}
  let last: ChildHandle | undefined
  let processes = 0
  /** An approval a killed process left waiting (durable): the next process that opens must find it pending. */
  let held: string | undefined
  for (let p = 0; ; p++) {
    const final = kills.length >= options.kills || p >= options.kills * 3
    const trigger = final ? undefined : pickTrigger(TRIGGER_KINDS[(index + p) % TRIGGER_KINDS.length]!, random)
    const config: ChildConfig = {
      mode: 'run',
      ...base,
      ...lease,
      ...holder,
      extraRuns: 1,
      ...(final ? { readBack: true } : {}),
      ...(trigger?.kind === 'approval' ? { holdApproval: 1 } : {}),
    }
    const where = `chain ${index}, process ${p}${trigger === undefined ? ' (final)' : ` (kill at ${JSON.stringify(trigger)})`}`
    const settled = settledCalls(acked)
    processes++
    const child = startChild(options.script, config, killer(trigger))
    const exit = await child.exited(60_000)
    for (const l of child.lines) {
      if (l.t === 'tool' && l.phase === 'start' && settled.has(l.id as string)) problems.push(`${where}: tool call ${String(l.id)} ran again, though the log had acknowledged its decision, start or result`)
    }
    problems.push(...unacknowledgedApprovedStarts(child.lines, settled, GATED_TOOLS).map((p) => `${where}: ${p}`))
    if (process.env.RXAGENT_CRASH_DUMP !== undefined) {
      writeFileSync(join(process.env.RXAGENT_CRASH_DUMP, `chain-${index}-p${p}.jsonl`), child.lines.map((l) => JSON.stringify(l)).join('\n') + '\n')
    }
    problems.push(...checkProcess(child, acked, where))
    const opened = find(child, 'opened')
    if (held !== undefined && opened !== undefined && !(opened.pendingApprovals as readonly { toolCallId: string }[]).some((a) => a.toolCallId === held)) {
      problems.push(`${where}: the approval ${held} left waiting by the killed process is not pending after open: ${JSON.stringify(opened.pendingApprovals)}`)
    }
    if (opened !== undefined) held = undefined
    const holding = find(child, 'holding')
    if (child.killed && holding !== undefined) held = holding.toolCallId as string
    if (child.killed) {
      kills.push({ trigger: trigger!, lastLines: lastLines(child) })
    } else if (exit.code !== 0 || find(child, 'done') === undefined) {
      problems.push(`${where}: exited ${JSON.stringify(exit)} without finishing\n${child.describe()}`)
      return { kills, processes: p + 1, problems, reruns: [] }
    }
    if (final) {
      last = child
      break
    }
  }
  // The last process finished: its transcript is whole, and the store holds exactly its log.
  const done = find(last, 'done')!
  const messages = done.messages as readonly AgentMessage[]
  problems.push(...transcriptProblems(messages).map((p) => `final transcript of chain ${index}: ${p}`))
  const answer = messages.at(-1)
  if (answer?.role !== 'assistant' || answer.stopReason !== 'stop' || !answer.content.some((c) => c.type === 'text' && c.text === FINAL_TEXT)) {
    problems.push(`chain ${index}: the last run did not end with the final answer: ${JSON.stringify(answer).slice(0, 300)}`)
  }
  const executed = readExecutions(executions)
  problems.push(...unendedSuccesses(executed, messages).map((p) => `chain ${index}: ${p}`))
  const repeated = repeatedRuns(executed)
  const gated = new Set(executed.filter((e) => GATED_TOOLS.includes(e.name)).map((e) => e.id))
  for (const [id, pids] of repeated) {
    if (gated.has(id)) problems.push(`chain ${index}: tool call ${id} needs approval and ran twice (pids ${pids.join(', ')}): its decision is committed before it runs, so no later process may ask and run it again`)
  }
  const reruns = [...repeated.keys()].filter((id) => !gated.has(id))
  const raw = find(last, 'readBack')
  if (raw === undefined) problems.push(`chain ${index}: the last process did not read the log back\n${last.describe()}`)
  else {
    const { log, problems: decoding } = decodeStored(raw.records)
    problems.push(...decoding.map((p) => `chain ${index}, final read: ${p}`))
    problems.push(...[...lostOrChanged(log, acked), ...interleavedRuns(log)].map((p) => `chain ${index}, final read: ${p}`))
    const held = done.log as readonly unknown[]
    if (!isDeepStrictEqual(plain(log), plain(held))) {
      const differs = log.findIndex((e, i) => !isDeepStrictEqual(plain(e), plain(held[i])))
      problems.push(`chain ${index}: the store holds ${log.length} entries, the last process had ${held.length} after flush(); first difference at ${differs}`)
    }
  }
  return { kills, processes, problems, reruns }
}

/** Checks one process's lines against what was acknowledged before it, then adds what it acknowledged. */
function checkProcess(child: ChildHandle, acked: Map<number, unknown>, where: string): string[] {
  const problems: string[] = []
  const at = (p: string) => `${where}: ${p}`
  for (const line of child.lines) if (line.t === 'error' || line.t === 'openError') problems.push(at(`the child reported ${JSON.stringify(line)}`))
  const raw = find(child, 'raw')
  if (raw !== undefined) {
    const { log, problems: decoding } = decodeStored(raw.records)
    problems.push(...decoding.map(at), ...lostOrChanged(log, acked).map(at), ...interleavedRuns(log).map(at))
  }
  const opened = find(child, 'opened')
  if (opened === undefined) return problems
  const log = opened.log as readonly AgentLogEntry[]
  problems.push(...lostOrChanged(log, acked).map((p) => at(`after open: ${p}`)))
  if (opened.durableSeq !== log.length) problems.push(at(`open resolved with ${log.length} entries of which only ${String(opened.durableSeq)} were durable`))
  // A suspended run's last answer waits for approvals: its calls may have no result yet.
  const pending = (opened.pendingApprovals as readonly { toolCallId: string }[]).map((a) => a.toolCallId)
  const messages = opened.messages as readonly AgentMessage[]
  const waiting = pending.length === 0 ? [] : messages.filter((m) => m.role === 'assistant').at(-1)?.content.flatMap((c) => (c.type === 'toolCall' ? [c.id] : [])) ?? []
  problems.push(...transcriptProblems(messages, waiting).map((p) => at(`transcript after open: ${p}`)))
  if (pending.some((id) => !waiting.includes(id))) problems.push(at(`pending approvals ${JSON.stringify(pending)} are not calls of the last answer`))
  if (runsOf(log).open !== undefined && pending.length === 0) problems.push(at(`after open the log ends mid-run (last entry ${log.at(-1)?.type}) with no approval pending`))
  for (const [seq, entry] of log.slice(0, opened.durableSeq as number).entries()) acked.set(seq, entry)
  problems.push(...collectAcks(child.lines, acked, opened.durableSeq as number).map(at))
  return problems
}
