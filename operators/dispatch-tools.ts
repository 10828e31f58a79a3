import { concat, concatMap, defer, EMPTY, from, mergeMap, Observable, of, Subject, type SchedulerLike, type Subscription } from 'rxjs'
import { isLeft } from 'fp-ts/lib/Either.js'
import { approvalOf, type ApproveTool } from '../src/policy/approval.js'
import { verdictOf, type PreDispatchPolicy } from '../src/policy/policy.js'
import { errorOutput, runTool } from '../src/tools/run-tool.js'
import type { ToolCallContent } from '../src/types/content.js'
import type { AgentEvent } from '../src/types/event.js'
import { toolCallsOf, type AgentMessage, type ToolResultMessage } from '../src/types/message.js'
import type { AgentTool, ToolOutput } from '../src/types/tool.js'
import {
  appended,
  nextState,
  runViewOf,
  withMessages,
  type LoopStop,
  type TurnItem,
  type TurnOperator,
} from '../src/turn/turn-state.js'
import { onTurnState } from './on-turn-state.js'

/** How a batch of tool calls runs: all at once (optionally at most `limit` at a time), or one after another. */
export type ToolExecution = { readonly mode: 'concurrent'; readonly limit?: number } | { readonly mode: 'sequential' }

export interface DispatchToolsOptions {
  readonly preDispatch?: readonly PreDispatchPolicy[]
  readonly approveTool?: ApproveTool
  /** Default: concurrent, no limit. */
  readonly execution?: ToolExecution
  /** Applies to tools without their own `timeoutMs`. */
  readonly toolTimeoutMs?: number
  readonly scheduler: SchedulerLike
  /** When this emits, running calls are cancelled and every unfinished call gets an "aborted" result. */
  readonly abort?: Observable<unknown>
  /**
   * Polled after every finished call; messages found interrupt the batch
   * (calls still running are cancelled, calls not started are skipped, each
   * with a result saying so) and join the next turn.
   */
  readonly interruptOnSteering?: () => readonly AgentMessage[]
}

/** What becomes of one call: run it, or answer it at once with an error. */
type Plan =
  | { readonly kind: 'run'; readonly call: ToolCallContent; readonly tool: AgentTool; readonly args: unknown }
  | { readonly kind: 'answer'; readonly call: ToolCallContent; readonly message: string }

type Prepared = { readonly kind: 'plan'; readonly index: number; readonly plan: Plan }

const answer = (call: ToolCallContent, message: string): Plan => ({ kind: 'answer', call, message })

function stoppedText(stop: LoopStop): string {
  const why = stop.message === undefined ? '' : `: ${stop.message}`
  if (stop.reason === 'error' || stop.reason === 'aborted') {
    return `Tool call not executed: the model's response ended with stopReason '${stop.reason}'${why}.`
  }
  return `Tool call not executed: the run is stopping (${stop.reason}${why}).`
}

/** Checks that need no policy: arguments complete and parsed, tool known. */
function precheck(call: ToolCallContent, tools: readonly AgentTool[], cutByLength: boolean): Plan | AgentTool {
  if (call.parseError !== undefined) return answer(call, `Tool call not executed: its ${call.parseError}.`)
  if (call.partialJson !== undefined) {
    return answer(
      call,
      cutByLength
        ? `Tool call not executed: its arguments were cut off because the response hit the output token limit (stopReason 'length').`
        : `Tool call not executed: the stream ended before its arguments were complete.`,
    )
  }
  const tool = tools.find((t) => t.name === call.name)
  if (tool !== undefined) return tool
  const names = tools.map((t) => t.name)
  return answer(
    call,
    `Tool '${call.name}' not found. ${names.length === 0 ? 'No tools are available.' : `Available tools: ${names.join(', ')}.`}`,
  )
}

/**
 * Runs the tool calls of this turn's answer and appends one result per call,
 * in call order.
 *
 * For each call, in call order: pre-dispatch policies (continue, skip,
 * rewrite, stop), then the approval callback (`toolApprovalRequest`,
 * `toolApprovalEnd`), then argument decoding. Then the calls run under the
 * execution policy: each emits `toolExecutionStart`, any
 * `toolExecutionUpdate`s, and `toolExecutionEnd` when it finishes (so ends
 * come in completion order). Last, each result joins the transcript with
 * `messageStart`/`messageEnd`, in call order.
 *
 * Every call gets exactly one result, whatever happens: invalid or cut-off
 * arguments, unknown tool, rejection, a throwing or hanging tool, an abort,
 * a steering interruption, or a response that ended in error.
 *
 * ```
 * source: --S|                      (two calls a, b; b finishes first)
 * result: --(sa sb)--eb--ea--(rr S')|  s: start, e: end, r: result message
 * ```
 */
export function dispatchTools(options: DispatchToolsOptions): TurnOperator {
  const concurrency = options.execution?.mode === 'sequential' ? 1 : (options.execution?.limit ?? Number.POSITIVE_INFINITY)
  return onTurnState(
    (state) => {
      const assistant = state.assistant
      const calls = assistant === undefined ? [] : toolCallsOf(assistant)
      if (calls.length === 0) return state
      return new Observable<TurnItem>((subscriber) => {
        const tools = state.context.tools
        const cutByLength = assistant?.stopReason === 'length'
        const outputs: ({ output: ToolOutput; isError: boolean } | undefined)[] = new Array(calls.length)
        let stop: LoopStop | undefined = state.stop
        let cancelled: 'abort' | 'steering' | undefined
        const cancel$ = new Subject<void>()
        const steering: AgentMessage[] = []
        const emit = (event: AgentEvent) => subscriber.next(event)

        const cancelAll = (why: 'abort' | 'steering'): void => {
          if (cancelled !== undefined) return
          cancelled = why
          if (why === 'abort') stop = { reason: 'aborted', message: 'the run was aborted during tool execution' }
          cancel$.next()
        }
        if (options.abort !== undefined) subscriber.add(options.abort.subscribe(() => cancelAll('abort')))

        /** Pre-dispatch policies, approval and decoding for one call. */
        const prepare = (call: ToolCallContent, index: number): Observable<Prepared | AgentEvent> => {
          const done = (plan: Plan): Observable<Prepared> => of({ kind: 'plan', index, plan })
          if (stop !== undefined) return done(answer(call, stoppedText(stop)))
          const checked = precheck(call, tools, cutByLength)
          if (!('execute' in checked)) return done(checked)
          const tool = checked
          const policies = options.preDispatch ?? []
          let args: Record<string, unknown> = call.arguments

          const decodeArgs = (): Observable<Prepared> =>
            defer(() => {
              const decoded = tool.decodeArguments(args)
              if (isLeft(decoded)) {
                return done(answer(call, `Invalid arguments for tool '${tool.name}':\n${decoded.left.map((l) => `  - ${l}`).join('\n')}`))
              }
              return done({ kind: 'run', call, tool, args: decoded.right })
            })

          const approve = (): Observable<Prepared | AgentEvent> => {
            const approver = options.approveTool
            if (approver === undefined) return decodeArgs()
            const request: AgentEvent = { type: 'toolApprovalRequest', toolCallId: call.id, toolName: call.name, args }
            return concat(
              of(request),
              approvalOf(approver, { toolCall: call, tool, args }).pipe(
                concatMap((decision): Observable<Prepared | AgentEvent> => {
                  const end: AgentEvent = {
                    type: 'toolApprovalEnd',
                    toolCallId: call.id,
                    toolName: call.name,
                    approved: decision.approved,
                    rewritten: decision.approved && decision.args !== undefined,
                    ...(!decision.approved && decision.reason !== undefined ? { reason: decision.reason } : {}),
                  }
                  if (!decision.approved) {
                    const why = decision.reason === undefined ? '.' : `: ${decision.reason}`
                    return concat(of(end), done(answer(call, `Tool call rejected by the approver${why}`)))
                  }
                  if (decision.args !== undefined) args = decision.args
                  return concat(of(end), decodeArgs())
                }),
              ),
            )
          }

          const runPolicy = (i: number): Observable<Prepared | AgentEvent> => {
            const policy = policies[i]
            if (policy === undefined) return approve()
            return verdictOf(policy, { ...runViewOf(state), toolCall: call, tool, args }).pipe(
              concatMap((verdict): Observable<Prepared | AgentEvent> => {
                const decision = (action: 'skip' | 'rewrite' | 'stop', reason?: string): AgentEvent => ({
                  type: 'policyDecision',
                  slot: 'preDispatch',
                  policy: policy.name,
                  action,
                  toolCallId: call.id,
                  ...(reason === undefined ? {} : { reason }),
                })
                switch (verdict.action) {
                  case 'continue':
                    return runPolicy(i + 1)
                  case 'rewrite':
                    args = verdict.args
                    return concat(of(decision('rewrite')), runPolicy(i + 1))
                  case 'skip':
                    return concat(of(decision('skip', verdict.reason)), done(answer(call, `Tool call skipped by policy '${policy.name}': ${verdict.reason}`)))
                  case 'stop':
                    stop = { reason: 'policyStop', message: verdict.reason, by: policy.name }
                    return concat(
                      of(decision('stop', verdict.reason)),
                      done(answer(call, `Tool call not executed: policy '${policy.name}' stopped the run: ${verdict.reason}`)),
                    )
                }
              }),
            )
          }

          return runPolicy(0)
        }

        /** One call's execution events; records its output. */
        const execute = ({ index, plan }: Prepared): Observable<AgentEvent> =>
          new Observable<AgentEvent>((o) => {
            const { call } = plan
            let finished = false
            let running: Subscription | undefined
            const finish = (output: ToolOutput, isError: boolean): void => {
              if (finished) return
              finished = true
              running?.unsubscribe()
              outputs[index] = { output, isError }
              o.next({ type: 'toolExecutionEnd', toolCallId: call.id, toolName: call.name, result: output, isError })
              // Polled before completing: completion frees a concurrency slot, and a
              // call must not start if steering is about to interrupt the batch.
              if (options.interruptOnSteering !== undefined && cancelled === undefined) {
                const found = options.interruptOnSteering()
                if (found.length > 0) {
                  steering.push(...found)
                  cancelAll('steering')
                }
              }
              o.complete()
            }
            o.next({ type: 'toolExecutionStart', toolCallId: call.id, toolName: call.name, args: call.arguments })
            if (cancelled !== undefined) {
              finish(
                errorOutput(
                  cancelled === 'abort'
                    ? 'Tool call not executed: the run was aborted.'
                    : 'Tool call skipped: a steering message interrupted the batch before it ran.',
                ),
                true,
              )
              return
            }
            if (plan.kind === 'answer') {
              finish(errorOutput(plan.message), true)
              return
            }
            const cancelSub = cancel$.subscribe(() =>
              finish(
                errorOutput(
                  cancelled === 'abort'
                    ? 'Tool call aborted: the run was aborted before it finished.'
                    : 'Tool call interrupted by a steering message; it did not finish.',
                ),
                true,
              ),
            )
            const timeoutMs = plan.tool.timeoutMs ?? options.toolTimeoutMs
            running = runTool(plan.tool, plan.args, {
              toolCallId: call.id,
              scheduler: options.scheduler,
              ...(timeoutMs === undefined ? {} : { timeoutMs }),
            }).subscribe((event) => {
              if (event.type === 'update') {
                o.next({ type: 'toolExecutionUpdate', toolCallId: call.id, toolName: call.name, partialResult: event.output })
              } else finish(event.output, event.isError)
            })
            if (finished) running.unsubscribe()
            return () => {
              cancelSub.unsubscribe()
              running?.unsubscribe()
            }
          })

        const plans: Prepared[] = []
        const run$ = concat(
          from(calls).pipe(
            concatMap((call, index) => prepare(call, index)),
            mergeMap((item): Observable<AgentEvent> => {
              if ('kind' in item && item.kind === 'plan') {
                plans.push(item)
                return EMPTY
              }
              return of(item as AgentEvent)
            }),
          ),
          defer(() => from(plans).pipe(mergeMap(execute, concurrency))),
        )

        return run$.subscribe({
          next: emit,
          error: (e: unknown) => subscriber.error(e),
          complete: () => {
            const now = options.scheduler.now()
            const results: ToolResultMessage[] = calls.map((call, i) => {
              const out = outputs[i] ?? { output: errorOutput('Tool call produced no result.'), isError: true }
              const message: ToolResultMessage = {
                role: 'toolResult',
                toolCallId: call.id,
                toolName: call.name,
                content: out.output.content,
                isError: out.isError,
                timestamp: now,
                ...(out.output.details === undefined ? {} : { details: out.output.details }),
              }
              return message
            })
            for (const message of results) {
              emit({ type: 'messageStart', message })
              emit({ type: 'messageEnd', message })
            }
            const after = nextState(withMessages(state, results), {
              toolResults: results,
              pending: appended(state.pending, steering),
              ...(stop === undefined ? {} : { stop }),
            })
            subscriber.next(after)
            subscriber.complete()
          },
        })
      })
    },
    { whenStopped: true },
  )
}
