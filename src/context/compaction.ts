/**
 * Compaction reports: what a window dropped ({@link compactionOf}), the
 * agent event that announces it, and the overflow recovery a sliding window
 * gives the loop ({@link slidingWindowRecovery}). The window itself is in
 * `sliding-window.ts`, which exports these too.
 */
import { defaultConvertToLlm, type ConvertToLlm } from '../../operators/transform-context.js'
import type { OverflowRecovery } from '../../operators/call-model.js'
import type { TurnState } from '../turn/turn-state.js'
import type { CompactionEvent } from '../types/event.js'
import type { AgentMessage, LlmMessage } from '../types/message.js'
import { cachedEstimate, estimateTokens, type EstimateTokens } from './estimate-tokens.js'
import type { CompactionReport, SlidingWindow } from './sliding-window.js'

/**
 * The report of a compaction that turned `before` into `after` (a
 * subsequence of it, as any window's output is), or `undefined` when nothing
 * was dropped. For transforms other than {@link slidingWindow} whose drops
 * should be reported the same way.
 */
export function compactionOf(
  before: readonly AgentMessage[],
  after: readonly AgentMessage[],
  options: { readonly budget: number; readonly overflow?: boolean; readonly estimate?: EstimateTokens },
): CompactionReport | undefined {
  if (before === after || after.length >= before.length) return undefined
  const estimate = cachedEstimate(options.estimate ?? estimateTokens)
  let total = 0
  for (const message of before) total += estimate(message)
  let keptTokens = 0
  for (const message of after) keptTokens += estimate(message)
  return {
    droppedMessages: before.length - after.length,
    droppedTokens: Math.max(0, total - keptTokens),
    keptMessages: after.length,
    keptTokens,
    budget: options.budget,
    overflow: options.overflow === true,
    overBudget: keptTokens > options.budget,
  }
}

/** The agent event announcing a report: reason `overflow` for the overflow budget, else `window`. */
export function compactionEventOf(report: CompactionReport): CompactionEvent {
  return { type: 'compaction', reason: report.overflow ? 'overflow' : 'window', ...compactionFields(report) }
}

// Only the event's own fields: the event codec has no room for `overflow` / `overBudget`.
function compactionFields(report: CompactionReport): Omit<CompactionEvent, 'type' | 'reason'> {
  const { droppedMessages, droppedTokens, keptMessages, keptTokens, budget } = report
  return { droppedMessages, droppedTokens, keptMessages, keptTokens, budget }
}

/**
 * A `recoverOverflow` for the loop or the Agent: when the provider says the
 * context overflowed, the context that was sent (`state.llmMessages`, else the
 * converted transcript) goes through `window` with the overflow budget.
 * `undefined` (the error stands) when the window can drop nothing more.
 * The budget follows the turn's model's `contextWindow` when it is known.
 * The window's `onCompaction` is not told: the loop emits the `compaction`
 * event itself from the returned recovery.
 */
export function slidingWindowRecovery(
  window: SlidingWindow,
  convertToLlm: ConvertToLlm = defaultConvertToLlm,
): (state: TurnState) => OverflowRecovery | undefined {
  return (state) => {
    const sent = state.llmMessages ?? convertToLlm(state.context.messages)
    const contextWindow = state.model.contextWindow
    const info = contextWindow === undefined ? { turnIndex: state.turnIndex, overflow: true } : { turnIndex: state.turnIndex, overflow: true, contextWindow }
    const { messages, report } = window.compact(sent, info)
    if (report === undefined) return undefined
    // A window only drops messages, so what it keeps of LLM messages is LLM messages.
    return { messages: messages as readonly LlmMessage[], compaction: compactionFields(report) }
  }
}
