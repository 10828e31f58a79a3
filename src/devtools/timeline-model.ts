/**
 * The shapes the devtools timeline is drawn from (`timeline.ts` builds them
 * from a session's records; the page draws them; `timelineMarbles` writes
 * them as marble strings for tests). All times are milliseconds since the
 * epoch, from the records' `at`.
 */
import type { PolicyAction, PolicySlot } from '../types/event.js'
import type { AgentMessage } from '../types/message.js'

/** The lanes of a run: what arrived (prompts, steering, follow-ups, commands), the model's stream, and one lane per tool call. */
export type LaneKind = 'inputs' | 'model' | 'tool'

/** How a bar ended; `running` while it is open (live), `waiting` for an approval not decided yet. */
export type BarStatus = 'running' | 'waiting' | 'ok' | 'error' | 'aborted' | 'rejected'

/** Something that lasted: a model call (one per turn), a tool's execution, a tool call waiting for its approval. */
export interface TimelineBar {
  readonly id: string
  readonly kind: 'model' | 'tool' | 'approval'
  readonly start: number
  /** `undefined` while it is open: the page draws it up to now. */
  readonly end: number | undefined
  readonly status: BarStatus
  readonly label: string
  /** The position of the record holding the message the bar produced (the inspector opens it). */
  readonly position?: number
}

/** What a mark stands for (one letter each in {@link MARK_LETTERS}). */
export type MarkKind =
  | 'user'
  | 'steering'
  | 'followUp'
  | 'dequeue'
  | 'command'
  | 'text'
  | 'thinking'
  | 'toolUse'
  | 'retry'
  | 'fallback'
  | 'policy'
  | 'approvalRequested'
  | 'approvalDecided'

/** The letter a mark is written as in marble strings (and shown on the page's legend). */
export const MARK_LETTERS: Readonly<Record<MarkKind, string>> = {
  user: 'u',
  steering: 's',
  followUp: 'f',
  dequeue: 'd',
  command: 'c',
  text: 't',
  thinking: 'k',
  toolUse: 'a',
  retry: 'r',
  fallback: 'F',
  policy: 'P',
  approvalRequested: '?',
  approvalDecided: '!',
}

/** Something that happened at one instant. */
export interface TimelineMark {
  readonly kind: MarkKind
  readonly at: number
  readonly label: string
  /** The record it came from. */
  readonly position: number
}

/** One row of the timeline: its bars (what lasted) and marks (what happened at an instant). */
export interface TimelineLane {
  /** `inputs`, `model`, or `tool:<toolCallId>`. */
  readonly id: string
  readonly kind: LaneKind
  readonly label: string
  readonly bars: readonly TimelineBar[]
  readonly marks: readonly TimelineMark[]
}

/** One turn's numbers, for the per-run charts. */
export interface TurnSummary {
  readonly turnIndex: number
  readonly start: number
  readonly end: number | undefined
  /** The model that answered (after fallbacks). */
  readonly model: string | undefined
  /** From the turn's start to the assistant message's end. */
  readonly modelMs: number | undefined
  /** From the turn's start to its first content chunk: from the stream's records while the message streams, then from the marks its `messageEnd` carries; unknown for a message logged without them (an older log), or that had no content. */
  readonly ttftMs: number | undefined
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cacheReadTokens: number
  readonly cacheWriteTokens: number
  readonly totalTokens: number
  /** In the model's currency units (`cost.total`). */
  readonly cost: number
  readonly toolCalls: number
}

/** A message of the run, for the inspector. */
export interface MessageItem {
  readonly position: number
  readonly at: number
  readonly message: AgentMessage
}

/** A tool call waiting for a decision; answer it with `POST /api/sessions/:id/approvals/:toolCallId`. */
export interface PendingApprovalView {
  readonly runId: string
  readonly toolCallId: string
  readonly toolName: string
  readonly args: Readonly<Record<string, unknown>>
  readonly at: number
}

/**
 * A policy's decision (a `policyDecision` entry), drawn as a `policy` mark
 * on the model lane, or on its tool call's lane for a pre-dispatch one; the
 * inspector shows it whole. A log written before these entries has none
 * (its run's policy stop is then drawn from the run's end).
 */
export interface PolicyDecisionView {
  readonly position: number
  readonly at: number
  readonly slot: PolicySlot
  readonly policy: string
  readonly action: PolicyAction
  /** Why (`stop` and `skip` say). */
  readonly reason?: string
  /** The call a pre-dispatch decision was about. */
  readonly toolCallId?: string
}

/** One run: from its `runStart` (through any `runResumed`) to its `agentEnd` / `runFailed` (open while it runs). */
export interface RunTimeline {
  readonly runId: string
  /** 0, 1, 2… in the session. */
  readonly index: number
  readonly start: number
  readonly end: number | undefined
  /** `interrupted`: a later run started while this one had no end (its process went away; `Agent.open` resumes a run waiting for approvals as a new run). */
  readonly status: 'running' | 'done' | 'failed' | 'interrupted'
  readonly stopReason: string | undefined
  readonly error: string | undefined
  /** The first prompt's text, shortened (the run's title). */
  readonly title: string
  /** The earliest time drawn (a steering message queued before the run started is drawn before `start`). */
  readonly from: number
  /** The latest time recorded in the run. */
  readonly to: number
  readonly lanes: readonly TimelineLane[]
  readonly turns: readonly TurnSummary[]
  readonly messages: readonly MessageItem[]
  readonly pendingApprovals: readonly PendingApprovalView[]
  readonly policyDecisions: readonly PolicyDecisionView[]
}

/** A session as the page shows it. */
export interface SessionTimeline {
  readonly sessionId: string
  readonly agentId: string | undefined
  /** The last record's position: a live tail resumes after it. */
  readonly lastPosition: number
  readonly runs: readonly RunTimeline[]
  readonly pendingApprovals: readonly PendingApprovalView[]
}
