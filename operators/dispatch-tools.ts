import { concat, concatMap, defer, EMPTY, from, mergeMap, Observable, of, type SchedulerLike, type Subscriber } from 'rxjs'
import type { ApproveTool } from '../src/policy/approval.js'
import type { PreDispatchPolicy } from '../src/policy/policy.js'
import { linked } from '../src/rx/linked-observer.js'
import { answer, planCall, planWithoutAsking, type PlanContext, type Planned, type Unplanned } from '../src/tools/plan-call.js'
import type { ToolCallContent } from '../src/types/content.js'
import type { AgentEvent } from '../src/types/event.js'
import { toolCallsOf, type AgentMessage } from '../src/types/message.js'
import type { AgentTool } from '../src/types/tool.js'
import { outOfOrder } from '../src/turn/turn-protocol.js'
import { runViewOf, type TurnItem, type TurnOperator, type TurnState } from '../src/turn/turn-state.js'
import type { ToolExecution } from '../src/types/run-config.js'
import { cancelledText } from './dispatch-results.js'
import { CallBatch } from './dispatch-batch.js'
import { onTurnState } from './on-turn-state.js'
import { untilAborted } from './until-aborted.js'

export type { ToolExecution } from '../src/types/run-config.js'

export interface DispatchToolsOptions {
  readonly preDispatch?: readonly PreDispatchPolicy[]
  readonly approveTool?: ApproveTool
  /** Which tools `approveTool` is asked about (default: all); the others run without approval events. */
  readonly approvalRequired?: (tool: AgentTool) => boolean
  /** Default: concurrent, no limit. */
  readonly execution?: ToolExecution
  /** Applies to tools without their own `timeoutMs`. */
  readonly toolTimeoutMs?: number
  /**
   * At most this many calls of one message run (default: all); each call
   * beyond it gets an error result saying so, without being planned, asked
   * about or run.
   */
  readonly maxCallsPerMessage?: number
  readonly scheduler: SchedulerLike
  /**
   * When this emits, a pending pre-dispatch policy or approval is cancelled
   * (an open approval request ends rejected), running calls are cancelled,
   * and every unfinished call gets an "aborted" result.
   */
  readonly abort?: Observable<unknown>
  /**
   * Polled after every finished call; messages found interrupt the batch
   * (calls still running are cancelled, calls not started are skipped, each
   * with a result saying so) and join the next turn.
   */
  readonly interruptOnSteering?: () => readonly AgentMessage[]
}

const isPlanned = (item: Planned | AgentEvent): item is Planned => 'kind' in item && item.kind === 'planned'

/**
 * Runs the tool calls of this turn's answer and appends one result per call,
 * in call order.
 *
 * First, for each call in call order, `planCall`: pre-dispatch policies
 * (continue, skip, rewrite, stop), the approver (`toolApprovalRequest`,
 * `toolApprovalEnd`), argument decoding. Then the calls run under the
 * execution policy: each emits `toolExecutionStart`, any
 * `toolExecutionUpdate`s, and `toolExecutionEnd` when it finishes (so ends
 * come in completion order). Last, each result joins the transcript with
 * `messageStart`/`messageEnd`, in call order.
 *
 * Every call gets exactly one result, whatever happens: invalid or cut-off
 * arguments, unknown tool, rejection, a throwing or hanging tool, an abort
 * (also while a policy or the approver is still deciding), a steering
 * interruption, or a response that ended in error.
 *
 * ```
 * source: --S|                         (two calls a, b; b finishes first)
 * result: --(sa sb)--eb--ea--(rr S')|  s: start, e: end, r: result message
 * ```
 */
export function dispatchTools(options: DispatchToolsOptions): TurnOperator {
  const concurrency = options.execution?.mode === 'sequential' ? 1 : (options.execution?.limit ?? Number.POSITIVE_INFINITY)
  return onTurnState(dispatchTurn.bind(undefined, options, concurrency), { whenStopped: true, stage: 'dispatchTools' })
}

/**
 * A turn's state, answered: with itself when there is no call to run. This
 * function and {@link dispatchBatch} are module functions bound to their
 * data, not closures made per run or per turn (see `pullFrom` in
 * from-async-iterable.ts).
 */
function dispatchTurn(options: DispatchToolsOptions, concurrency: number, state: TurnState): Observable<TurnItem> | TurnState {
  const assistant = state.assistant
  if (assistant === undefined && state.stop === undefined) throw outOfOrder('dispatchTools', 'a turn the model has not answered', 'streamLlm')
  const calls = assistant === undefined ? [] : toolCallsOf(assistant)
  if (calls.length === 0) return state
  return new Observable<TurnItem>(dispatchBatch.bind(undefined, options, concurrency, state, calls))
}

/** A subscription of a turn's batch: its calls planned, then run. */
function dispatchBatch(options: DispatchToolsOptions, concurrency: number, state: TurnState, calls: readonly ToolCallContent[], subscriber: Subscriber<TurnItem>): void {
  const batch = new CallBatch(options, concurrency, state, calls, subscriber)
  if (options.abort !== undefined) subscriber.add(options.abort.subscribe(() => batch.cancelAll('abort')))
  const planned = batch.planned
  // Calls past the cap are answered at once; only the first `cap` are planned (policies, approver).
  const cap = Math.min(calls.length, options.maxCallsPerMessage ?? calls.length)
  const overCap = (): void => {
    // Its text only when a call is over the cap: made at every batch, it cost about 550 instructions a
    // turn (TOOLS 200, callgrind, 40 warm-up runs then 4 after two full GCs each: 51.88 -> 51.78 M a run, overCap 0.11 -> 0.02 M).
    if (cap === calls.length) return
    const why = `Tool call not executed: the message has ${calls.length} tool calls; at most ${cap} run per message.`
    for (let index = cap; index < calls.length; index++) planned.push({ kind: 'planned', index, plan: answer(calls[index]!, why) })
  }
  const allowed = cap === calls.length ? calls : calls.slice(0, cap)
  // One layout for every batch (no `{}`-or-field spreads) and bound methods rather than arrows made
  // per turn: the layout a spread made, and the arrows' optimized code, were collected by a full GC
  // between runs, and the planning code compiled again in the next run (`--trace-opt`, agent-tools 200).
  const context: PlanContext = {
    tools: state.context.tools,
    cutByLength: state.assistant?.stopReason === 'length',
    preDispatch: options.preDispatch ?? [],
    view: runViewOf(state),
    stop: batch.currentStop.bind(batch),
    stopWith: batch.stopWith.bind(batch),
    approveTool: options.approveTool,
    approvalRequired: options.approvalRequired,
  }
  const observer = linked<AgentEvent>(subscriber, batch)
  // Nobody to ask (no policy; no approver, or none of these calls needs it — an Agent always has
  // one): planning is synchronous, no Observable per call, unless some tool decodes asynchronously.
  // The calls from `askFrom` on are planned by `planCall`; those before it are planned here.
  // (An Agent always has an approver: planning every call through Observables cost its tool
  // turns 40%: `bench/worker.mjs rxagent agent-tools 200`, CPU median of 5 rounds, 380 → 222 ms.)
  let decoding: (Planned | Promise<Planned>)[] | undefined
  let askFrom = context.preDispatch.length === 0 ? allowed.length : 0
  let checked: Unplanned | undefined
  for (let index = 0; index < askFrom; index++) {
    const plan = planWithoutAsking(allowed[index]!, index, context)
    if (!(plan instanceof Promise) && !('kind' in plan)) {
      askFrom = index
      checked = plan
    } else if (decoding === undefined && !(plan instanceof Promise)) planned.push(plan)
    else (decoding ??= planned.splice(0)).push(plan)
  }
  if (decoding === undefined && askFrom === allowed.length) {
    overCap()
    batch.run().subscribe(observer)
    return
  }
  // The plans made above, in call order (they go through `planned` again, below).
  const known = decoding ?? planned.splice(0)
  // The approval request still waiting for its decision, if any.
  let asking: AgentEvent | undefined
  /**
   * On an abort while planning: the open request ends rejected, every call to be planned and not
   * planned yet is planned as not run (those past the cap are answered by `overCap`, after).
   */
  const abortPlanning = (): readonly (Planned | AgentEvent)[] => {
    batch.cancelAll('abort')
    const items: (Planned | AgentEvent)[] = []
    if (asking?.type === 'toolApprovalRequest') {
      items.push({ type: 'toolApprovalEnd', toolCallId: asking.toolCallId, toolName: asking.toolName, approved: false, rewritten: false, reason: 'the run was aborted' })
    }
    for (let index = planned.length; index < allowed.length; index++) {
      items.push({ kind: 'planned', index, plan: answer(calls[index]!, cancelledText.abort.waiting) })
    }
    return items
  }
  // The abort as this batch sees it, through its one subscription to `options.abort` (above).
  const aborted$ =
    options.abort === undefined
      ? undefined
      : new Observable<void>((o) => (batch.cancelled === 'abort' ? o.next() : batch.cancel$.subscribe(() => batch.cancelled === 'abort' && o.next())))
  const first = askFrom
  concat(
    concat(
      from(known).pipe(concatMap((plan) => (plan instanceof Promise ? from(plan) : of(plan)))),
      from(allowed.slice(first)).pipe(concatMap((call, i) => planCall(call, first + i, context, i === 0 ? checked : undefined))),
    ).pipe(
      untilAborted<Planned | AgentEvent>(aborted$, abortPlanning),
      mergeMap((item): Observable<AgentEvent> => {
        if (isPlanned(item)) return (planned.push(item), EMPTY)
        asking = item.type === 'toolApprovalRequest' ? item : undefined
        return of(item)
      }),
    ),
    defer(() => (overCap(), batch.run())),
  ).subscribe(observer)
}
