/**
 * New agent states without immer: the root of a state copied field by
 * field, for the entries every run logs (see {@link assigned}) and for
 * immer's stand-in of a lazily held transcript (`agent-reducer.ts`).
 *
 * Internal: not exported from the package.
 */
import type { AgentMessage } from '../types/message.js'
import { lazyTranscriptOf, Transcript } from '../types/lazy-transcript.js'
import { lazyAgentState, type AgentState } from './agent-state.js'

/** `state` with `messages` and `streamMessage`, field by field: an object literal of a known shape is built on V8's fast path. */
export function withFields(state: AgentState, messages: readonly AgentMessage[], streamMessage: AgentState['streamMessage']): AgentState {
  return {
    systemPrompt: state.systemPrompt,
    model: state.model,
    tools: state.tools,
    messages,
    isRunning: state.isRunning,
    streamMessage,
    pendingToolCalls: state.pendingToolCalls,
    pendingApprovals: state.pendingApprovals,
    steeringQueue: state.steeringQueue,
    followUpQueue: state.followUpQueue,
    error: state.error,
    availableModels: state.availableModels,
    planMode: state.planMode,
  }
}

/** A transcript where immer's root holds `messages`, in `produce` and {@link assigned} only (which publish it lazily). */
export const asMessages = (transcript: Transcript): readonly AgentMessage[] => transcript as unknown as readonly AgentMessage[]

/** The fields of a state, writable: what {@link assigned} hands its recipe. */
export type Fields = { -readonly [K in keyof AgentState]: AgentState[K] }

/**
 * What `produce` (`agent-reducer.ts`) does for the entries every run logs (its start, each
 * message, its end), without immer: the root copied field by field, `recipe`
 * run on the copy, and the copy published as `produce` publishes it (frozen,
 * or lazily held) unless it changed nothing. immer's `produce` builds a proxy
 * and a scope and finalizes them at every call; after a full GC between runs
 * its code ran cold at each run's start: agent-long 5k (3 deltas), time to
 * the first delta 0.91 -> 0.76 ms, CPU per run 1.40 -> 1.14 ms (medians of 3
 * alternating A/B rounds of 300 runs each after a full GC, a timing script
 * over bench/runtimes/rxagent.mjs). A tool call's `toolExecutionStart` and
 * `toolExecutionEnd` too: agent-tools 200 (callgrind, 6 runs each after a
 * full GC, /tmp-style fixed-run driver over bench/runtimes/rxagent.mjs) 572M
 * -> 516M instructions a run, immer's functions no longer recompiled at every
 * run. The rarer entries keep immer.
 */
export function assigned(state: AgentState, recipe: (d: Fields) => void): AgentState {
  const lazy = lazyTranscriptOf(state)
  const next: Fields = withFields(state, lazy === undefined ? state.messages : asMessages(lazy), state.streamMessage)
  recipe(next)
  const messages: unknown = next.messages
  if (messages === (lazy ?? state.messages) && sameFields(state, next)) return state
  return messages instanceof Transcript ? lazyAgentState(next, messages, next.streamMessage) : Object.freeze(next)
}

/** Whether `next` holds what `state` holds in every field but `messages` (compared by the caller). */
function sameFields(state: AgentState, next: Fields): boolean {
  return (
    next.systemPrompt === state.systemPrompt &&
    next.model === state.model &&
    next.tools === state.tools &&
    next.isRunning === state.isRunning &&
    next.streamMessage === state.streamMessage &&
    next.pendingToolCalls === state.pendingToolCalls &&
    next.pendingApprovals === state.pendingApprovals &&
    next.steeringQueue === state.steeringQueue &&
    next.followUpQueue === state.followUpQueue &&
    next.error === state.error &&
    next.availableModels === state.availableModels &&
    next.planMode === state.planMode
  )
}
