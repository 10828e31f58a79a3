/**
 * Policies: small objects the loop consults in four slots. Each returns a
 * verdict, synchronously or as an ObservableInput (the first value counts; an
 * empty one counts as `continue`). A policy that throws or errors stops the
 * run: a guard that fails must not fail open.
 */
import { isAsyncAnswer } from '../rx/user-callback.js'
import { from, Observable, of, type ObservableInput } from 'rxjs'
import type { AgentMessage, AssistantMessage, ToolResultMessage } from '../types/message.js'
import type { ModelSpec } from '../types/model.js'
import type { ToolCallContent } from '../types/content.js'
import type { AgentTool } from '../types/tool.js'
import type { Cost, Usage } from '../types/usage.js'
import { errorText } from '../types/codec.js'

/** Go on, stop the run (with a reason), or add messages to the transcript. */
export type PolicyVerdict =
  | { readonly action: 'continue' }
  | { readonly action: 'stop'; readonly reason: string }
  | { readonly action: 'inject'; readonly messages: readonly AgentMessage[] }

/** Per tool call: go on, skip it with an error result, run it with other arguments, or stop the run. */
export type PreDispatchVerdict =
  | { readonly action: 'continue' }
  | { readonly action: 'skip'; readonly reason: string }
  | { readonly action: 'rewrite'; readonly args: Record<string, unknown> }
  | { readonly action: 'stop'; readonly reason: string }

/** Verdict constructors. */
export const Verdict = {
  continue: { action: 'continue' } as const,
  stop: (reason: string) => ({ action: 'stop', reason }) as const,
  inject: (...messages: AgentMessage[]) => ({ action: 'inject', messages }) as const,
  skip: (reason: string) => ({ action: 'skip', reason }) as const,
  rewrite: (args: Record<string, unknown>) => ({ action: 'rewrite', args }) as const,
}

/** What every policy sees about the run so far. */
export interface RunView {
  readonly turnIndex: number
  /** The whole transcript as it stands. */
  readonly messages: readonly AgentMessage[]
  readonly model: ModelSpec
  /** Totals of this run so far. */
  readonly usage: Usage
  readonly cost: Cost
}

/** Before a turn starts (before the model is called). */
export interface PreTurnView extends RunView {
  /** Messages about to join the transcript at the start of this turn (prompts, steering, follow-ups). */
  readonly pending: readonly AgentMessage[]
}

/** Before one tool call is dispatched. */
export interface PreDispatchView extends RunView {
  readonly toolCall: ToolCallContent
  readonly tool: AgentTool
  /**
   * The arguments as they stand. A rewrite (by a policy or the approver) to
   * other arguments starts a new pass over every pre-dispatch policy, so each
   * sees the arguments the call will run with.
   */
  readonly args: Record<string, unknown>
}

/** After a turn ended (its tool results are in). */
export interface PostTurnView extends RunView {
  readonly message: AssistantMessage
  readonly toolResults: readonly ToolResultMessage[]
}

/** When the loop is about to end: no tool calls, no steering. */
export type PostLoopView = PostTurnView

/** A named policy for one slot. */
export interface Policy<View, V> {
  /** Names the policy in `policyDecision` events and in the run's result. */
  readonly name: string
  readonly evaluate: (view: View) => V | ObservableInput<V>
}

export type PreTurnPolicy = Policy<PreTurnView, PolicyVerdict>
export type PreDispatchPolicy = Policy<PreDispatchView, PreDispatchVerdict>
export type PostTurnPolicy = Policy<PostTurnView, PolicyVerdict>
export type PostLoopPolicy = Policy<PostLoopView, PolicyVerdict>

/** The four slots. */
export interface Policies {
  readonly preTurn?: readonly PreTurnPolicy[]
  readonly preDispatch?: readonly PreDispatchPolicy[]
  readonly postTurn?: readonly PostTurnPolicy[]
  readonly postLoop?: readonly PostLoopPolicy[]
}

/**
 * A policy's verdict as an Observable of exactly one value. A synchronous
 * verdict stays synchronous (no scheduling), so policies cost nothing in
 * virtual time.
 */
export function verdictOf<View, V extends { action: string }>(policy: Policy<View, V>, view: View): Observable<V> {
  const fallback = { action: 'continue' } as V
  let raw: V | ObservableInput<V>
  try {
    raw = policy.evaluate(view)
  } catch (error) {
    return of(failed<V>(policy, error))
  }
  if (!isAsyncAnswer<unknown>(raw)) return of(raw as V)
  return new Observable<V>((subscriber) => {
    let got = false
    return from(raw as ObservableInput<V>).subscribe({
      next: (v) => {
        if (got) return
        got = true
        subscriber.next(v)
        subscriber.complete()
      },
      error: (error: unknown) => {
        subscriber.next(failed<V>(policy, error))
        subscriber.complete()
      },
      complete: () => {
        if (!got) subscriber.next(fallback)
        subscriber.complete()
      },
    })
  })
}

/** Every slot's verdicts include `stop`, which is what a failed policy yields. */
function failed<V>(policy: { name: string }, error: unknown): V {
  return { action: 'stop', reason: `policy '${policy.name}' failed: ${errorText(error)}` } as V
}
