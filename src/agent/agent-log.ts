/**
 * The Agent's log: every change to an agent — a run's events as they matter
 * for its state, and the commands (prompt, steer, model change, approval
 * decisions, reset…) — as one small, self-contained, io-ts-decodable entry.
 * The agent's state is the fold of this log (`agent-reducer.ts`); a
 * checkpoint is a position in it; `Agent.fromLog` replays it.
 *
 * What is recorded, and what is not:
 * - a streamed message is recorded once, as its final message (`messageEnd`);
 *   its deltas are not in the log (they only change the transient
 *   `streamMessage`, which is empty whenever a run is not streaming);
 * - tools are recorded by name (they hold functions): replaying resolves the
 *   names against the tools the replaying agent is given;
 * - models are recorded as `ModelSpec`s; a route's stream function is not;
 * - a streamed assistant message's `messageEnd` carries its {@link StreamMarks}
 *   (when the turn started, its first chunk, retries and fallbacks): a few
 *   numbers, so that a finished run's timeline keeps them;
 * - a policy's decision other than `continue` (the loop's `policyDecision`
 *   event) is recorded as it was decided: slot, policy, action, and the
 *   reason and tool call when it has them. It changes no state; it is there
 *   so that a stored run shows why it was steered or stopped.
 *
 * Every entry has `seq`, its position in the log (0, 1, 2…): an entry is
 * appended at the next position, which a durable store can check.
 */
import * as t from 'io-ts'
import { NonNegativeInteger, NonNegativeNumber, describeValue, struct, taggedUnion } from '../types/codec.js'
import { compileIs } from '../types/fast-is.js'
import { decodeInput, invalidInput } from '../types/input.js'
import { AgentMessage } from '../types/message.js'
import { ModelSpec } from '../types/model.js'
import { StopReason } from '../types/stop-reason.js'
import { PolicyAction, PolicySlot } from '../types/event.js'

/** The log format this rxagent writes and reads (in the `init` entry). */
export const AGENT_LOG_FORMAT = 1

const seq = { seq: NonNegativeInteger }
const entry = <T extends string, P extends t.Props>(type: T, props: P, name: string) => t.type({ ...seq, type: t.literal(type), ...props }, name)
const Queue = t.keyof({ steering: null, followUp: null }, 'Queue')
const Messages = t.readonlyArray(AgentMessage)

/** The first entry: who the agent is and what it starts from. */
export const InitEntry = entry(
  'init',
  {
    version: t.literal(AGENT_LOG_FORMAT),
    agentId: t.string,
    systemPrompt: t.string,
    model: ModelSpec,
    availableModels: t.readonlyArray(ModelSpec),
    /** The tools' names; replaying resolves them against the tools it is given. */
    tools: t.readonlyArray(t.string),
    messages: Messages,
  },
  'InitEntry',
)

/** A run starts (`prompt`, `continue`, `structured`) with these prompts (possibly none). */
export const RunStartEntry = entry('runStart', { runId: t.string, prompts: Messages }, 'RunStartEntry')
/**
 * A suspended run (it waited for approvals when its session was closed or
 * its process stopped) goes on in this process, once its last approval is
 * decided: the same run as its `runStart`, not a new one — it ends with one
 * `agentEnd` or `runFailed`. Its loop's `agentStart` is not logged again.
 */
export const RunResumedEntry = entry('runResumed', { runId: t.string }, 'RunResumedEntry')
export const AgentStartEntry = entry('agentStart', {}, 'AgentStartEntry')
export const TurnStartEntry = entry('turnStart', { turnIndex: NonNegativeInteger }, 'TurnStartEntry')
/** A discarded attempt of a streamed message: it is called again after `delayMs`. */
export const StreamRetryMark = t.type({ at: t.number, attempt: NonNegativeInteger, delayMs: NonNegativeNumber, error: t.string }, 'StreamRetryMark')
/** The next model of the fallback chain took the message over. */
export const StreamFallbackMark = t.type({ at: t.number, provider: t.string, modelId: t.string, error: t.string }, 'StreamFallbackMark')
/**
 * When a streamed assistant message happened, in ms from the agent's
 * scheduler: its turn's start (the model call begins there, as in
 * `turnMetrics`), its first content chunk (absent when none came), its end,
 * and the retries and fallbacks on the way (absent when none). Its chunks are
 * not kept; these marks are what a finished run's timeline draws.
 */
export const StreamMarks = struct(
  'StreamMarks',
  { startedAt: t.number, endedAt: t.number },
  { firstChunkAt: t.number, retries: t.readonlyArray(StreamRetryMark), fallbacks: t.readonlyArray(StreamFallbackMark) },
)
export type StreamMarks = t.TypeOf<typeof StreamMarks>
/**
 * A message joined the transcript (a streamed one as its final message).
 * `stream`, on a streamed assistant message, says when it streamed; a log
 * written before it existed has none.
 */
export const MessageEndEntry = t.intersection(
  [entry('messageEnd', { message: AgentMessage }, 'MessageEndEntry'), t.partial({ stream: StreamMarks })],
  'MessageEndEntry',
)
export const ToolStartEntry = entry('toolExecutionStart', { toolCallId: t.string }, 'ToolStartEntry')
export const ToolEndEntry = entry('toolExecutionEnd', { toolCallId: t.string }, 'ToolEndEntry')
export const TurnEndEntry = entry('turnEnd', { turnIndex: NonNegativeInteger }, 'TurnEndEntry')
/** The run ended (the result's messages are the `messageEnd` entries before it). */
export const AgentEndEntry = t.intersection(
  [entry('agentEnd', { stopReason: StopReason }, 'AgentEndEntry'), t.partial({ error: t.string })],
  'AgentEndEntry',
)
/**
 * The run ended without an `agentEnd`: it failed (`error`), or the log ends in
 * its middle and was replayed. With `settleReason`, unanswered tool calls get
 * an error result saying it, so that the transcript stays valid.
 */
export const RunFailedEntry = t.intersection(
  [entry('runFailed', { error: t.string }, 'RunFailedEntry'), t.partial({ settleReason: t.string })],
  'RunFailedEntry',
)
export const EnqueueEntry = entry('enqueue', { queue: Queue, message: AgentMessage }, 'EnqueueEntry')
/** The run took the `count` oldest messages of a queue. */
export const DequeueEntry = entry('dequeue', { queue: Queue, count: NonNegativeInteger }, 'DequeueEntry')
export const ClearQueueEntry = entry('clearQueue', { queue: Queue }, 'ClearQueueEntry')
export const ModelEntry = entry('model', { model: ModelSpec }, 'ModelEntry')
export const ToolsEntry = entry('tools', { tools: t.readonlyArray(t.string) }, 'ToolsEntry')
export const SystemPromptEntry = entry('systemPrompt', { systemPrompt: t.string }, 'SystemPromptEntry')
export const PlanModeEntry = entry('planMode', { on: t.boolean }, 'PlanModeEntry')

/** What an approval was decided: run (possibly with other arguments), or not, with a reason. */
export const ApprovalDecisionCodec = t.union(
  [struct('Approved', { approved: t.literal(true) }, { args: t.record(t.string, t.unknown) }), struct('Rejected', { approved: t.literal(false) }, { reason: t.string })],
  'ApprovalDecision',
)

/** A tool call waits for a decision (see `state.pendingApprovals`). */
export const ApprovalRequestedEntry = entry(
  'approvalRequested',
  { toolCallId: t.string, toolName: t.string, args: t.record(t.string, t.unknown) },
  'ApprovalRequestedEntry',
)
/** Who decided: the `approveTool` callback, `resolveApproval`, or the run ending first (`abort`). */
export const ApprovalDecidedEntry = entry(
  'approvalDecided',
  { toolCallId: t.string, decision: ApprovalDecisionCodec, by: t.keyof({ approveTool: null, resolveApproval: null, abort: null }) },
  'ApprovalDecidedEntry',
)
/**
 * A policy did something other than continue (the loop's `policyDecision`
 * event): `stop` and `skip` say why (`reason`); a pre-dispatch decision names
 * its tool call (`toolCallId`). Changes no state (an injection's messages and
 * a stop's end are entries of their own).
 *
 * Added within log format {@link AGENT_LOG_FORMAT} 1: a log without it still
 * decodes, but an rxagent older than this entry cannot read a log that holds
 * one (it rejects the unknown entry type, naming its position).
 */
export const PolicyDecisionEntry = t.intersection(
  [entry('policyDecision', { slot: PolicySlot, policy: t.string, action: PolicyAction }, 'PolicyDecisionEntry'), t.partial({ reason: t.string, toolCallId: t.string })],
  'PolicyDecisionEntry',
)
/** The transcript, the queues, the pending approvals and the last error are forgotten. */
export const ResetEntry = entry('reset', {}, 'ResetEntry')

/** One entry of an agent's log. */
export const AgentLogEntry = taggedUnion(
  'type',
  [
    InitEntry,
    RunStartEntry,
    RunResumedEntry,
    AgentStartEntry,
    TurnStartEntry,
    MessageEndEntry,
    ToolStartEntry,
    ToolEndEntry,
    TurnEndEntry,
    AgentEndEntry,
    RunFailedEntry,
    EnqueueEntry,
    DequeueEntry,
    ClearQueueEntry,
    ModelEntry,
    ToolsEntry,
    SystemPromptEntry,
    PlanModeEntry,
    ApprovalRequestedEntry,
    ApprovalDecidedEntry,
    PolicyDecisionEntry,
    ResetEntry,
  ],
  'AgentLogEntry',
)
export type AgentLogEntry = t.TypeOf<typeof AgentLogEntry>

/**
 * `AgentLogEntry.is`, compiled (`src/types/fast-is.ts`): a session read back
 * from a store is all fresh objects. Decoding the 10,016 entries of the
 * DURABLE open bench's log took 35 ms with io-ts's `validate` (`/tmp`-style
 * timing of `decodeAgentLog` over a parsed log, medians of 20 after a full
 * GC); the compiled check takes a few ms. No codec of an entry transforms its
 * input, so an entry the check accepts is its own decoded value.
 */
export const isAgentLogEntry: (u: unknown) => u is AgentLogEntry = compileIs(AgentLogEntry) as (u: unknown) => u is AgentLogEntry
export type InitEntry = t.TypeOf<typeof InitEntry>

/** An entry before it is appended: the log gives it its `seq`. */
export type AgentLogCommand = AgentLogEntry extends infer E ? (E extends { readonly seq: number } ? Omit<E, 'seq'> : never) : never

/**
 * Decodes a log from wherever it was kept: an array whose first entry is
 * `init` in a format this rxagent reads, and whose entries are at positions
 * 0, 1, 2….
 *
 * @throws InvalidInputError naming the path (`[3].message.content`), `[0].version` for a newer or unknown format, or `[n].seq` for an entry out of place.
 */
export function decodeAgentLog(u: unknown, entry: string, what = 'log'): readonly AgentLogEntry[] {
  if (!Array.isArray(u) || u.length === 0) throw invalidInput(entry, what, '', `expected a non-empty array of log entries, got ${describeValue(u)}`, u)
  const first: unknown = u[0]
  const version = typeof first === 'object' && first !== null ? (first as { version?: unknown }).version : undefined
  if ((first as { type?: unknown } | null)?.type === 'init' && version !== AGENT_LOG_FORMAT) {
    const newer = typeof version === 'number' && Number.isInteger(version) && version > AGENT_LOG_FORMAT
    const problem = newer ? `log format ${version} is newer than this rxagent understands (${AGENT_LOG_FORMAT})` : `unknown log format ${describeValue(version)} (this rxagent understands ${AGENT_LOG_FORMAT})`
    throw invalidInput(entry, what, '[0].version', problem, version)
  }
  // The compiled check first, entry by entry; io-ts's decode only for an entry it rejects, for the error's path.
  const entries = u.every(isAgentLogEntry) ? (u as readonly AgentLogEntry[]) : decodeInput(t.readonlyArray(AgentLogEntry), u, entry, what)
  if (entries[0]!.type !== 'init') throw invalidInput(entry, what, '[0].type', `the first entry must be 'init', got ${describeValue(entries[0]!.type)}`, entries[0]!.type)
  entries.forEach((e, i) => {
    if (e.seq !== i) throw invalidInput(entry, what, `[${i}].seq`, `entry ${i} is at position ${e.seq}`, e.seq)
  })
  return entries
}
