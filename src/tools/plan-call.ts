/**
 * The first phase of dispatching one tool call: everything that decides
 * whether and how it runs — argument completeness, the tool's existence,
 * pre-dispatch policies, the approver, argument decoding. The outcome is a
 * plan: run the tool with decoded arguments, or answer at once with an error
 * text the model will read.
 */
import { concat, concatMap, defer, from, Observable, of } from 'rxjs'
import { isLeft } from 'fp-ts/lib/Either.js'
import { approvalOf, type ApproveTool } from '../policy/approval.js'
import { verdictOf, type PreDispatchPolicy, type RunView } from '../policy/policy.js'
import type { ToolCallContent } from '../types/content.js'
import type { AgentEvent, ToolExecutionStartEvent } from '../types/event.js'
import type { AgentTool, ToolDecodeResult } from '../types/tool.js'
import type { LoopStop } from '../turn/turn-state.js'
import { callUser, CallbackError, isThenable } from '../rx/user-callback.js'
import { sameJson } from './same-json.js'

/** What becomes of one call: run it, or answer it at once with an error. */
export type Plan =
  | { readonly kind: 'run'; readonly call: ToolCallContent; readonly tool: AgentTool; readonly args: unknown }
  | { readonly kind: 'answer'; readonly call: ToolCallContent; readonly message: string }

/** A plan, tagged so it can travel in one stream with the events that led to it. */
export interface Planned {
  readonly kind: 'planned'
  readonly index: number
  readonly plan: Plan
}

export interface PlanContext {
  readonly tools: readonly AgentTool[]
  /** The response stopped at the output limit (explains cut-off arguments). */
  readonly cutByLength: boolean
  readonly preDispatch: readonly PreDispatchPolicy[]
  readonly approveTool?: ApproveTool
  /** Which tools the approver is asked about (default: all). Others run without approval events. */
  readonly approvalRequired?: (tool: AgentTool) => boolean
  readonly view: RunView
  /** Set when the run is stopping: later calls are answered without running. */
  readonly stop: () => LoopStop | undefined
  readonly stopWith: (stop: LoopStop) => void
}

export const answer = (call: ToolCallContent, message: string): Plan => ({ kind: 'answer', call, message })

export function stoppedText(stop: LoopStop): string {
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
  // A loop, not `find` with an arrow: once per call.
  for (let i = 0; i < tools.length; i++) if (tools[i]!.name === call.name) return tools[i]!
  const names = tools.map((t) => t.name)
  return answer(call, `Tool '${call.name}' not found. ${names.length === 0 ? 'No tools are available.' : `Available tools: ${names.join(', ')}.`}`)
}

/**
 * Whether the approver is asked about `tool`. A throwing `approvalRequired`
 * cannot say, and a gate must not fail open: the call is not run.
 */
function asksApprover(ctx: PlanContext, call: ToolCallContent, tool: AgentTool): boolean | Plan {
  if (ctx.approveTool === undefined) return false
  if (ctx.approvalRequired === undefined) return true
  const required = callUser('approvalRequired', ctx.approvalRequired, tool)
  // Only an explicit `false` skips the approver.
  return required instanceof CallbackError ? answer(call, `Tool call not executed: ${required.message}`) : required !== false
}

/** The plan for decoded arguments: run with them, or answer with what is wrong. */
function planOf(call: ToolCallContent, tool: AgentTool, result: ToolDecodeResult<unknown>): Plan {
  if (isLeft(result)) return answer(call, `Invalid arguments for tool '${tool.name}':\n${result.left.map((l) => `  - ${l}`).join('\n')}`)
  return { kind: 'run', call, tool, args: result.right }
}

/**
 * Decodes the arguments into a plan: run with them, or answer with what is
 * wrong. Synchronous when the tool decodes synchronously (io-ts tools always
 * do); a Promise, which never rejects, when its decoding is asynchronous.
 */
function decoded(call: ToolCallContent, tool: AgentTool, args: Record<string, unknown>): Plan | Promise<Plan> {
  const result = callUser('decodeArguments', () => tool.decodeArguments(args))
  if (result instanceof CallbackError) return answer(call, `Invalid arguments for tool '${tool.name}': ${result.message}`)
  if (!isThenable(result)) return planOf(call, tool, result)
  return Promise.resolve(result).then(
    (settled) => planOf(call, tool, settled),
    (error: unknown) => answer(call, `Invalid arguments for tool '${tool.name}': ${CallbackError.of('decodeArguments', 'failed', error).message}`),
  )
}

/** A plan, or the Promise of one, as a {@link Planned}. */
function plannedOf(plan: Plan | Promise<Plan>, index: number): Planned | Promise<Planned> {
  return plan instanceof Promise ? plan.then((settled) => ({ kind: 'planned', index, plan: settled })) : { kind: 'planned', index, plan }
}

/** The decoded plan as an Observable, waiting for an asynchronous decode. */
function decoded$(call: ToolCallContent, tool: AgentTool, args: Record<string, unknown>, index: number): Observable<Planned> {
  return defer(() => {
    const planned = plannedOf(decoded(call, tool, args), index)
    return planned instanceof Promise ? from(planned) : of(planned)
  })
}

/**
 * The plan, when nobody needs to be asked (no pre-dispatch policy, no
 * approver, or the call cannot run anyway): the common case, decided
 * synchronously without any Observable — or a Promise of it, never rejected,
 * when the tool's arguments decode asynchronously. When policies or the
 * approver must be consulted, what was checked so far ({@link Unplanned}):
 * `planCall` takes it, and `approvalRequired` is not called again.
 */
export function planWithoutAsking(call: ToolCallContent, index: number, ctx: PlanContext): Planned | Promise<Planned> | Unplanned {
  const first = firstChecks(call, ctx)
  if ('plan' in first) return { kind: 'planned', index, plan: first.plan }
  if (ctx.preDispatch.length > 0 || first.asks) return first
  return plannedOf(decoded(call, first.tool, call.arguments), index)
}

/** A call whose plan needs a policy or the approver: its tool, and whether the approver is asked about it. */
export interface Unplanned {
  readonly tool: AgentTool
  readonly asks: boolean
}

/**
 * What is decided before anyone is asked, once per call: an answer at once
 * (the run is stopping, the arguments are incomplete, the tool is unknown,
 * `approvalRequired` failed), or the tool and whether the approver is to be
 * asked about it (`approvalRequired` is called here, and only here).
 */
function firstChecks(call: ToolCallContent, ctx: PlanContext): { readonly plan: Plan } | Unplanned {
  const stopping = ctx.stop()
  if (stopping !== undefined) return { plan: answer(call, stoppedText(stopping)) }
  const checked = precheck(call, ctx.tools, ctx.cutByLength)
  if (!('execute' in checked)) return { plan: checked }
  const asks = asksApprover(ctx, call, checked)
  return typeof asks === 'object' ? { plan: asks } : { tool: checked, asks }
}

/**
 * How many times the arguments of one call may be rewritten (by pre-dispatch
 * policies and the approver together) before the call is answered with an
 * error instead: rewrites that do not settle are a loop.
 */
const maxRewrites = 8

/**
 * A call's `toolExecutionStart`, reporting the arguments the tool runs with
 * (rewritten, decoded), and the model's own as `modelArgs` when they differ.
 * A call answered without running reports the model's. Built as one literal
 * of each layout, not spread from an arguments object: a spread into a
 * literal is a `CopyDataProperties` call per tool call. With the batch's
 * final state written without a spread, no `sameJson` walk of identical arguments and a
 * string result's content frozen where it is made (`normalize`): TOOLS 200
 * turns, callgrind (40 warm-up runs, then 4 after two full GCs each, node
 * --single-threaded): 53.41 -> 53.11 M instructions a run.
 */
export function executionStart(plan: Plan): ToolExecutionStartEvent {
  const { call } = plan
  const model = call.arguments
  // `Object.is` first: arguments that decoded to themselves (the commonest case) need no walk.
  if (plan.kind !== 'run' || Object.is(plan.args, model) || sameJson(plan.args, model)) return { type: 'toolExecutionStart', toolCallId: call.id, toolName: call.name, args: model }
  return { type: 'toolExecutionStart', toolCallId: call.id, toolName: call.name, args: plan.args, modelArgs: model }
}

/**
 * Plans call number `index`: emits `policyDecision` and approval events as
 * they happen, then exactly one {@link Planned}.
 *
 * Guards are final: the call runs only with arguments that every pre-dispatch
 * policy has passed unchanged and, when the approver is asked, that it
 * approved or produced. A rewrite to other arguments (by a policy or the
 * approver) starts a new pass over the policies from the first one; the
 * approver is asked again if the policies then change what it approved. A
 * rewrite to identical arguments counts as `continue`. After
 * {@link maxRewrites} rewrites the call is answered with an error.
 * `checked`: what {@link planWithoutAsking} already found for this call.
 */
export function planCall(call: ToolCallContent, index: number, ctx: PlanContext, checked?: Unplanned): Observable<Planned | AgentEvent> {
  const done = (plan: Plan): Observable<Planned> => of({ kind: 'planned', index, plan })
  const first = checked ?? firstChecks(call, ctx)
  if ('plan' in first) return done(first.plan)
  const { tool, asks } = first
  if (ctx.preDispatch.length === 0 && !asks) return decoded$(call, tool, call.arguments, index)
  let rewrites = 0
  // What the approver approved or produced: it is not asked again about the same arguments.
  let approved: Record<string, unknown> | undefined

  const decodeArgs = (args: Record<string, unknown>): Observable<Planned> => decoded$(call, tool, args, index)

  /** `by` rewrote the arguments to `args`: a new pass over the policies, unless the rewrites do not settle. */
  const rewritten = (args: Record<string, unknown>, by: string): Observable<Planned | AgentEvent> => {
    rewrites++
    if (rewrites > maxRewrites) {
      return done(
        answer(
          call,
          `Tool call not executed: its arguments were rewritten ${maxRewrites} times without settling (the last rewrite by ${by}); ` +
            'the pre-dispatch policies and the approver keep changing them.',
        ),
      )
    }
    return runPolicy(0, args)
  }

  const approve = (args: Record<string, unknown>): Observable<Planned | AgentEvent> => {
    const approver = ctx.approveTool
    if (approver === undefined || !asks) return decodeArgs(args)
    if (approved !== undefined && sameJson(approved, args)) return decodeArgs(args)
    const request: AgentEvent = { type: 'toolApprovalRequest', toolCallId: call.id, toolName: call.name, args }
    return concat(
      of(request),
      approvalOf(approver, { toolCall: call, tool, args }).pipe(
        concatMap((decision): Observable<Planned | AgentEvent> => {
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
          approved = decision.args ?? args
          if (decision.args === undefined || sameJson(decision.args, args)) return concat(of(end), decodeArgs(args))
          return concat(of(end), rewritten(decision.args, 'the approver'))
        }),
      ),
    )
  }

  /** Pre-dispatch policies from number `i` on, over `args`. */
  const runPolicy = (i: number, args: Record<string, unknown>): Observable<Planned | AgentEvent> => {
    const policy = ctx.preDispatch[i]
    if (policy === undefined) return approve(args)
    return verdictOf(policy, { ...ctx.view, toolCall: call, tool, args }).pipe(
      concatMap((verdict): Observable<Planned | AgentEvent> => {
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
            return runPolicy(i + 1, args)
          case 'rewrite':
            if (sameJson(verdict.args, args)) return runPolicy(i + 1, args)
            return concat(of(decision('rewrite')), rewritten(verdict.args, `policy '${policy.name}'`))
          case 'skip':
            return concat(of(decision('skip', verdict.reason)), done(answer(call, `Tool call skipped by policy '${policy.name}': ${verdict.reason}`)))
          case 'stop':
            ctx.stopWith({ reason: 'policyStop', message: verdict.reason, by: policy.name })
            return concat(
              of(decision('stop', verdict.reason)),
              done(answer(call, `Tool call not executed: policy '${policy.name}' stopped the run: ${verdict.reason}`)),
            )
        }
      }),
    )
  }

  return runPolicy(0, call.arguments)
}
