import { concat, concatMap, defer, EMPTY, from, mergeMap, Observable, of, Subject, Subscription, type SchedulerLike, type Subscriber } from 'rxjs'
import type { ApproveTool } from '../src/policy/approval.js'
import type { PreDispatchPolicy } from '../src/policy/policy.js'
import { linked } from '../src/rx/linked-observer.js'
import { callUser, CallbackError } from '../src/rx/user-callback.js'
import { answer, executionArgs, planCall, planWithoutAsking, type Planned, type Unplanned } from '../src/tools/plan-call.js'
import { errorOutput, startTool } from '../src/tools/run-tool.js'
import type { AgentEvent } from '../src/types/event.js'
import { toolCallsOf, type AgentMessage, type ToolResultMessage } from '../src/types/message.js'
import type { AgentTool, ToolOutput } from '../src/types/tool.js'
import { outOfOrder } from '../src/turn/turn-protocol.js'
import { appended, runViewOf, withMessagesAnd, type LoopStop, type TurnItem, type TurnOperator } from '../src/turn/turn-state.js'
import type { ToolExecution } from '../src/types/run-config.js'
import { cancelledText, frozenResult, type Outcome } from './dispatch-results.js'
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
  return onTurnState(
    (state) => {
      const assistant = state.assistant
      if (assistant === undefined && state.stop === undefined) throw outOfOrder('dispatchTools', 'a turn the model has not answered', 'streamLlm')
      const calls = assistant === undefined ? [] : toolCallsOf(assistant)
      if (calls.length === 0) return state
      return new Observable<TurnItem>((subscriber) => {
        const outcomes: (Outcome | undefined)[] = new Array(calls.length)
        const steering: AgentMessage[] = []
        let stop: LoopStop | undefined = state.stop
        let cancelled: 'abort' | 'steering' | undefined
        const cancel$ = new Subject<void>()

        const cancelAll = (why: 'abort' | 'steering'): void => {
          if (cancelled !== undefined) return
          cancelled = why
          if (why === 'abort') stop = { reason: 'aborted', message: 'the run was aborted during tool execution' }
          cancel$.next()
        }
        if (options.abort !== undefined) subscriber.add(options.abort.subscribe(() => cancelAll('abort')))

        /**
         * Starts one call: its execution events go to `o`; `release` is called once it has
         * its outcome and has let go of what it held. A synchronous tool is answered at once,
         * with no Observable and no subscription: most tools are, and a turn runs several.
         */
        const execute = ({ index, plan }: Planned, o: Subscriber<AgentEvent>, release: () => void): void => {
          const { call } = plan
          let finished = false
          let running: Subscription | undefined
          const finish = (output: ToolOutput, isError: boolean): void => {
            if (finished) return
            finished = true
            outcomes[index] = { output, isError }
            o.next({ type: 'toolExecutionEnd', toolCallId: call.id, toolName: call.name, result: output, isError })
            // Polled before the slot is freed: a call must not start if steering is about to
            // interrupt the batch.
            if (options.interruptOnSteering !== undefined && cancelled === undefined) {
              const found = callUser('steering source', options.interruptOnSteering)
              // A failing source ends the run after this batch; the calls already planned still run.
              if (found instanceof CallbackError) stop ??= { reason: 'error', message: found.message }
              else if (found.length > 0) {
                steering.push(...found)
                cancelAll('steering')
              }
            }
            if (running !== undefined) {
              o.remove(running)
              running.unsubscribe()
            }
            release()
          }
          o.next({ type: 'toolExecutionStart', toolCallId: call.id, toolName: call.name, ...executionArgs(plan) })
          if (cancelled !== undefined) return finish(errorOutput(cancelledText[cancelled].waiting), true)
          if (plan.kind === 'answer') return finish(errorOutput(plan.message), true)
          const timeoutMs = plan.tool.timeoutMs ?? options.toolTimeoutMs
          const start = startTool(plan.tool, plan.args, {
            toolCallId: call.id,
            scheduler: options.scheduler,
            ...(timeoutMs === undefined ? {} : { timeoutMs }),
          })
          if ('ended' in start) return finish(start.ended.output, start.ended.isError)
          const held = new Subscription()
          running = held
          o.add(held)
          held.add(cancel$.subscribe(() => finish(errorOutput(cancelledText[cancelled ?? 'abort'].running), true)))
          // Added to a closed `held` (the call already finished) it is torn down at once.
          held.add(
            start.running.subscribe(
              linked(
                held,
                {
                  next: (event) =>
                    event.type === 'update'
                      ? o.next({ type: 'toolExecutionUpdate', toolCallId: call.id, toolName: call.name, partialResult: event.output })
                      : finish(event.output, event.isError),
                  error: (error: unknown) => o.error(error),
                },
                o,
              ),
            ),
          )
        }

        /** Every planned call under the execution policy (at most `concurrency` at a time); completes when all have outcomes. */
        const run$ = (): Observable<AgentEvent> =>
          new Observable<AgentEvent>((o) => {
            let next = 0
            let active = 0
            let starting = false
            const startMore = (): void => {
              // A loop rather than recursion: calls that finish at once free their slot inside it.
              if (starting) return
              starting = true
              while (active < concurrency && next < planned.length && !o.closed) {
                active++
                execute(planned[next++]!, o, release)
              }
              starting = false
              if (active === 0 && next >= planned.length) o.complete()
            }
            const release = (): void => {
              active--
              if (!o.closed) startMore()
            }
            startMore()
          })

        /** The results, in call order, join the transcript, frozen (see {@link frozenResult}). */
        const conclude = (): void => {
          const now = options.scheduler.now()
          const results = calls.map((call, i): ToolResultMessage => {
            const { output, isError } = outcomes[i] ?? { output: errorOutput('Tool call produced no result.'), isError: true }
            const { id: toolCallId, name: toolName } = call
            const content = output.content
            const details: unknown = output.details
            return frozenResult(
              details === undefined
                ? { role: 'toolResult', toolCallId, toolName, content, isError, timestamp: now }
                : { role: 'toolResult', toolCallId, toolName, content, isError, timestamp: now, details },
            )
          })
          for (const message of results) {
            subscriber.next({ type: 'messageStart', message })
            subscriber.next({ type: 'messageEnd', message })
          }
          subscriber.next(
            withMessagesAnd(state, results, {
              toolResults: results,
              pending: appended(state.pending, steering),
              ...(stop === undefined ? {} : { stop }),
            }),
          )
          subscriber.complete()
        }

        const planned: Planned[] = []
        // Calls past the cap are answered at once; only the first `cap` are planned (policies, approver).
        const cap = Math.min(calls.length, options.maxCallsPerMessage ?? calls.length)
        const overCap = (): void => {
          const why = `Tool call not executed: the message has ${calls.length} tool calls; at most ${cap} run per message.`
          for (let index = cap; index < calls.length; index++) planned.push({ kind: 'planned', index, plan: answer(calls[index]!, why) })
        }
        const allowed = cap === calls.length ? calls : calls.slice(0, cap)
        const context = {
          tools: state.context.tools,
          cutByLength: assistant?.stopReason === 'length',
          preDispatch: options.preDispatch ?? [],
          view: runViewOf(state),
          stop: () => stop,
          stopWith: (s: LoopStop) => (stop = s),
          ...(options.approveTool === undefined ? {} : { approveTool: options.approveTool }),
          ...(options.approvalRequired === undefined ? {} : { approvalRequired: options.approvalRequired }),
        }
        const observer = linked<AgentEvent>(subscriber, { next: (event) => subscriber.next(event), complete: conclude })
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
          run$().subscribe(observer)
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
          cancelAll('abort')
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
            : new Observable<void>((o) => (cancelled === 'abort' ? o.next() : cancel$.subscribe(() => cancelled === 'abort' && o.next())))
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
          defer(() => (overCap(), run$())),
        ).subscribe(observer)
      })
    },
    { whenStopped: true, stage: 'dispatchTools' },
  )
}
