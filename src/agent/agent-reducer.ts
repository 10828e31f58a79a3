/**
 * The one reducer: an agent's state is its log folded by
 * {@link reduceAgentLog}, commands and run events alike, with immer (but
 * the entries every run logs: `agent-state-update.ts`).
 *
 * immer only copies what an entry changes: the root, and the one array the
 * entry grows or shrinks. That array is built here, frozen, and handed to
 * the draft whole — immer skips what is frozen, so appending a message to a
 * long transcript is one array copy, never a walk of the messages (immer's
 * auto-freeze is recursive, and tool results carry `details` of any depth:
 * every message is frozen without recursion, `deepFreeze`, before it enters).
 *
 * The one update that is not a log entry is the message being streamed
 * ({@link withStreamMessage}): a `messageUpdate` per token only swaps
 * `streamMessage` on a shallow copy of the root (the history array is shared
 * as is). An immer `produce` per token would cost more than the rest of the
 * runtime, and the log records a streamed message once, as its final message.
 */
import { castDraft, Immer, type Draft } from 'immer'
import { deepFreeze } from '../types/deep-freeze.js'
import type { AgentMessage, AssistantMessage } from '../types/message.js'
import type { ModelSpec } from '../types/model.js'
import { settleTranscript } from '../types/settle.js'
import { appendMessages, emptyTranscript } from '../types/growing-transcript.js'
import type { AgentTool } from '../types/tool.js'
import type { AgentLogCommand, AgentLogEntry } from './agent-log.js'
import { initialAgentState, lazyAgentState, type AgentState, type PendingApproval } from './agent-state.js'
import { lazilyAppended, lazyTranscriptOf, Transcript, transcriptLength } from '../types/lazy-transcript.js'
import { asMessages, assigned, withFields, type Fields } from './agent-state-update.js'

/**
 * The reducer's immer, without its recursive auto-freeze: whatever an entry
 * puts in the state is frozen before it enters (the arrays built here, messages
 * by `deepFreeze`, a model too), so the one object left to freeze is the new
 * root, frozen by {@link produce} — shallowly, as immer's own freeze ended up
 * doing (it stops at frozen values), but without walking every field of the
 * root at every entry (~10 produces per tool turn): agent-tools 200 CPU
 * 214 -> 204 ms (medians of 5 A/B rounds of bench/worker.mjs; 297 -> 271 ms,
 * 20 rounds alternating in one process).
 */
const immer = new Immer({ autoFreeze: false })

/**
 * immer's `produce`, the new root frozen (see {@link immer}). A root whose
 * transcript is held lazily (`lazy-transcript.ts`) is given to immer as a
 * stand-in whose `messages` is the {@link Transcript} itself (immer copies a
 * root with a spread, which would make the array); a result whose `messages`
 * is a `Transcript` (the stand-in's, or one a `messageEnd` appended) is
 * published lazily again.
 */
function produce(state: AgentState, recipe: (d: Draft<AgentState>) => void): AgentState {
  const lazy = lazyTranscriptOf(state)
  const base = lazy === undefined ? state : standIn(state, lazy)
  const next = immer.produce(base, recipe)
  if (next === base) return state
  const messages: unknown = next.messages
  return messages instanceof Transcript ? lazyAgentState(next, messages, next.streamMessage) : Object.freeze(next)
}

/** `state` with `messages` as its transcript, not its array: what immer works on (see {@link produce}). */
const standIn = (state: AgentState, transcript: Transcript): AgentState => withFields(state, asMessages(transcript), state.streamMessage)

/** The tools named by a `tools` or `init` entry. */
export type ToolResolver = (names: readonly string[]) => readonly AgentTool[]

const frozen = <T>(items: T[]): readonly T[] => Object.freeze(items)
const EMPTY: readonly never[] = Object.freeze([])
/** `list` without the item at `at`, frozen; `list` itself when `at` is -1. */
function without<T>(list: readonly T[], at: number): readonly T[] {
  if (at < 0) return list
  // A loop, not `filter` with an arrow made per call: the arrow's optimized code died with the
  // last of them at a full GC, and was compiled again in every run (agent-tools 200, --trace-opt
  // over runs 2-9, each after a full GC: 8 of 8).
  const kept: T[] = []
  for (let i = 0; i < list.length; i++) if (i !== at) kept.push(list[i]!)
  return frozen(kept)
}

/** Whether two specs name the same model. */
export const sameModel = (a: ModelSpec, b: ModelSpec): boolean => a.provider === b.provider && a.modelId === b.modelId

/** The state an `init` entry starts from. */
export function stateOfInit(entry: Extract<AgentLogEntry | AgentLogCommand, { type: 'init' }>, tools: ToolResolver): AgentState {
  // Messages all the way down, without recursion (see the module comment).
  for (const message of entry.messages) deepFreeze(message)
  // Frozen as every value of the state is (see `immer`).
  deepFreeze(entry.model)
  return initialAgentState({ systemPrompt: entry.systemPrompt, model: entry.model, tools: tools(entry.tools), messages: entry.messages, availableModels: entry.availableModels })
}

/** The state after `entry`. Returns `state` itself when the entry changes nothing. */
export function reduceAgentLog(state: AgentState, entry: AgentLogEntry | AgentLogCommand, tools: ToolResolver): AgentState {
  switch (entry.type) {
    case 'init':
      return stateOfInit(entry, tools)
    case 'runStart':
    case 'runResumed':
    case 'agentStart':
      return assigned(state, running)
    case 'messageEnd':
      return withMessages(state, [entry.message])
    // Every tool call of a run logs these two: without immer, as the run's other entries (see `assigned`).
    case 'toolExecutionStart': {
      const pending = frozen([...state.pendingToolCalls, entry.toolCallId])
      return assigned(state, (d) => {
        d.pendingToolCalls = pending
      })
    }
    case 'toolExecutionEnd': {
      const pending = without(state.pendingToolCalls, state.pendingToolCalls.indexOf(entry.toolCallId))
      return pending === state.pendingToolCalls
        ? state
        : assigned(state, (d) => {
            d.pendingToolCalls = pending
          })
    }
    case 'agentEnd': {
      const error = entry.stopReason === 'error' || entry.stopReason === 'aborted' ? (entry.error ?? entry.stopReason) : undefined
      return assigned(state, (d) => {
        endRun(d)
        d.error = error
      })
    }
    case 'runFailed': {
      const reason = entry.settleReason
      const messages = reason === undefined ? state.messages : frozen(settleTranscript(state.messages, reason).map(frozenMessage))
      return produce(state, (d) => {
        endRun(d)
        d.messages = castDraft(messages)
        d.error = entry.error
      })
    }
    case 'enqueue': {
      const message = frozenMessage(entry.message)
      return produce(state, (d) => {
        if (entry.queue === 'steering') d.steeringQueue = castDraft(frozen([...state.steeringQueue, message]))
        else d.followUpQueue = castDraft(frozen([...state.followUpQueue, message]))
      })
    }
    case 'dequeue':
      if (entry.count === 0) return state
      return produce(state, (d) => {
        if (entry.queue === 'steering') d.steeringQueue = castDraft(frozen(state.steeringQueue.slice(entry.count)))
        else d.followUpQueue = castDraft(frozen(state.followUpQueue.slice(entry.count)))
      })
    case 'clearQueue':
      return produce(state, (d) => {
        if (entry.queue === 'steering') d.steeringQueue = castDraft(EMPTY)
        else d.followUpQueue = castDraft(EMPTY)
      })
    case 'model':
      return produce(state, (d) => {
        d.model = castDraft(frozenMessage(entry.model))
        if (!state.availableModels.some((m) => sameModel(m, entry.model))) d.availableModels = castDraft(frozen([...state.availableModels, entry.model]))
      })
    case 'tools': {
      const resolved = frozen([...tools(entry.tools)])
      return produce(state, (d) => {
        d.tools = castDraft(resolved)
      })
    }
    case 'systemPrompt':
      return produce(state, (d) => {
        d.systemPrompt = entry.systemPrompt
      })
    case 'planMode':
      return produce(state, (d) => {
        d.planMode = entry.on
      })
    case 'approvalRequested': {
      const pending: PendingApproval = Object.freeze({ toolCallId: entry.toolCallId, toolName: entry.toolName, args: frozenMessage(entry.args) })
      return produce(state, (d) => {
        d.pendingApprovals = castDraft(frozen([...state.pendingApprovals, pending]))
      })
    }
    case 'approvalDecided': {
      const pending = without(state.pendingApprovals, state.pendingApprovals.findIndex((p) => p.toolCallId === entry.toolCallId))
      return pending === state.pendingApprovals
        ? state
        : produce(state, (d) => {
            d.pendingApprovals = castDraft(pending)
          })
    }
    case 'reset':
      return produce(state, (d) => {
        endRun(d)
        // A new empty transcript of its own (see `emptyTranscript`); an empty one stays.
        if (transcriptLength(state) > 0) d.messages = castDraft(emptyTranscript())
        d.steeringQueue = castDraft(EMPTY)
        d.followUpQueue = castDraft(EMPTY)
        d.error = undefined
      })
    case 'turnStart':
    case 'turnEnd':
    case 'policyDecision':
      return state
  }
}

/**
 * `messageEnd` for each of `messages`, in order: they join the transcript
 * (frozen first) and an assistant message ends the streamed one.
 */
function withMessages(state: AgentState, messages: readonly AgentMessage[]): AgentState {
  if (messages.length === 0) return state
  for (const m of messages) deepFreeze(m)
  // A growing transcript: an exact-size copy of a shared backing array (a frozen array's own copy is slow).
  // A long transcript is appended lazily: no copy of the history (`lazy-transcript.ts`).
  const lazy = lazilyAppended(state, messages)
  const appended = lazy !== undefined ? asMessages(lazy) : appendMessages(state.messages, messages)
  let answer = false
  for (let i = 0; i < messages.length; i++) if (messages[i]!.role === 'assistant') answer = true
  return assigned(state, (d) => {
    d.messages = appended
    if (answer) d.streamMessage = undefined
  })
}

/** `value`, frozen all the way down without recursion (see the module comment). */
function frozenMessage<T>(value: T): T {
  deepFreeze(value)
  return value
}

/** A run starts (or goes on): running, no error. */
const running = (d: Fields): void => {
  d.isRunning = true
  d.error = undefined
}

/** What no run outlives: the streamed message, executing calls, approvals waiting. */
function endRun(d: Draft<AgentState> | Fields): void {
  d.isRunning = false
  d.streamMessage = undefined
  if (d.pendingToolCalls.length > 0) d.pendingToolCalls = castDraft(EMPTY)
  if (d.pendingApprovals.length > 0) d.pendingApprovals = castDraft(EMPTY)
}

/**
 * How many snapshots of a streamed message keep a lazy transcript lazy
 * before its array is made: a lazy snapshot costs about 0.5–0.9 µs more
 * than a plain one (its accessor), a copy of 60,000 messages 0.3–0.4 ms, so
 * a long answer pays at most ~50 µs before it copies once, as before, and
 * the short answers of a long conversation (the AGENT restored rows: 20
 * deltas) never copy.
 */
const LAZY_STREAM_SNAPSHOTS = 64

/**
 * The transient update: `message` is being streamed (or, `undefined`, a retry
 * or fallback dropped it). Not a log entry; see the module comment.
 */
export function withStreamMessage(state: AgentState, message: AssistantMessage | undefined): AgentState {
  if (state.streamMessage === message) return state
  // A lazy transcript no one has read stays lazy for a while (see LAZY_STREAM_SNAPSHOTS).
  const lazy = lazyTranscriptOf(state)
  if (lazy !== undefined && !lazy.materialized && lazy.lazyViews++ < LAZY_STREAM_SNAPSHOTS) return lazyAgentState(state, lazy, message)
  return Object.freeze(withFields(state, state.messages, message))
}

/**
 * Folds a whole log: {@link reduceAgentLog} entry by entry, except that the
 * messages of consecutive `messageEnd` entries join the transcript together,
 * where the next entry reads or replaces it (`runFailed`, `reset`) or at the
 * end. Every other entry leaves the transcript alone (and no entry but the
 * transient stream update sets `streamMessage`), so the order does not
 * change the state; the log-replay property tests hold the fold to the live
 * Agent's state. Each transcript of a live agent is its own frozen copy, so
 * appending them one at a time copied the whole history at every message:
 * opening the DURABLE bench's 10,016-entry session (3,338 messages) allocated
 * some 45 MB of copies, and `foldAgentLog` took 56 ms; 14 ms batched (a
 * timing script over that log, medians of 20 after a full GC).
 */
export function foldAgentLog(entries: readonly AgentLogEntry[], tools: ToolResolver): AgentState {
  const init = entries[0]
  if (init?.type !== 'init') throw new Error('an agent log starts with an init entry')
  let state = stateOfInit(init, tools)
  let messages: AgentMessage[] = []
  for (let i = 1; i < entries.length; i++) {
    const e = entries[i]!
    if (e.type === 'messageEnd') {
      messages.push(e.message)
      continue
    }
    if (messages.length > 0 && (e.type === 'runFailed' || e.type === 'reset' || e.type === 'init')) {
      state = withMessages(state, messages)
      messages = []
    }
    state = reduceAgentLog(state, e, tools)
  }
  return messages.length > 0 ? withMessages(state, messages) : state
}
