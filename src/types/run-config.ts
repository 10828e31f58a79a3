/**
 * Configuration types a run's parts share: the loop (`AgentLoopConfig`),
 * the Agent (`AgentOptions`), the context window and the stages in
 * `operators/` that apply them. They live here, with the other types, so
 * that `agent/`, `loop/` and `context/` need not reach into `operators/` for
 * them; `rxagent/operators` re-exports them where they were.
 */
import type { ObservableInput, SchedulerLike } from 'rxjs'
import type { CompactionEvent } from './event.js'
import type { AgentMessage, LlmMessage } from './message.js'
import type { ModelSpec } from './model.js'
import type { ProviderErrorInfo } from './provider-error.js'
import type { StreamFn } from './request.js'

/** A model and the provider that serves it. */
export interface ModelRoute {
  readonly model: ModelSpec
  readonly streamFn: StreamFn
}

/** A smaller context for a turn whose context overflowed, and what was dropped. */
export interface OverflowRecovery {
  readonly messages: readonly LlmMessage[]
  readonly compaction: Omit<CompactionEvent, 'type' | 'reason'>
}

/** How `retryStream` retries. Every field has a default. */
export interface RetryOptions {
  /** Attempts in all, the first included (default 4: three retries). */
  readonly maxAttempts?: number
  /** Delay before the first retry, doubled each time (default 1000 ms). */
  readonly baseDelayMs?: number
  /** No computed delay exceeds this (default 30,000 ms). */
  readonly maxDelayMs?: number
  /**
   * A server-requested delay (Retry-After, RetryInfo) longer than this is not
   * waited for: the error is passed on (default 60,000 ms).
   */
  readonly maxServerDelayMs?: number
  /** Random share of each computed delay, 0–1 (default 0.2: ±20 %). */
  readonly jitter?: number
  /** Whether to retry this error (default: `info.retryable`). A throw fails the call (`retry.shouldRetry threw: …`). */
  readonly shouldRetry?: (info: ProviderErrorInfo, attempt: number) => boolean
  /** The source of randomness for jitter (default `Math.random`); inject for deterministic tests. */
  readonly random?: () => number
  /** Where the delays run; the test scheduler makes them virtual. */
  readonly scheduler?: SchedulerLike
}

/** Rewrites what the model will see this turn (windowing, compaction, redaction). The transcript is not changed. */
export type TransformContext = (
  messages: readonly AgentMessage[],
  /** The turn, and the context window of the turn's model when it is known (a window fits its budgets to it). */
  info: { readonly turnIndex: number; readonly contextWindow?: number },
) => readonly AgentMessage[] | ObservableInput<readonly AgentMessage[]>

/** Turns transcript messages into what a model accepts. */
export type ConvertToLlm = (messages: readonly AgentMessage[]) => readonly LlmMessage[]

/** How a batch of tool calls runs: all at once (optionally at most `limit` at a time), or one after another. */
export type ToolExecution = { readonly mode: 'concurrent'; readonly limit?: number } | { readonly mode: 'sequential' }
