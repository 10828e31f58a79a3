/**
 * The `AgentLoopConfig` an Agent's run uses: its options and the call's,
 * the API-key wrapping of every route's stream function, the built-in
 * policies before the user's, the approval gate, the queues.
 */
import { asyncScheduler, defer, from, switchMap, throwError, type Observable, type SchedulerLike } from 'rxjs'
import type { AgentLoopConfig } from '../loop/agent-loop.js'
import type { MessageSource } from '../loop/message-queue.js'
import type { OverflowRecovery, TransformContext } from '../types/run-config.js'
import { Approval, type ApproveTool } from '../policy/approval.js'
import type { Policies } from '../policy/policy.js'
import { budgetPolicy, loopDetection, toolDenyList } from '../policy/builtin/index.js'
import { resident, unused } from '../rx/resident.js'
import { callUser, CallbackError, failuresOf, isThenable } from '../rx/user-callback.js'
import type { TurnState } from '../turn/turn-state.js'
import type { ModelSpec } from '../types/model.js'
import type { LlmRequest, StreamFn } from '../types/request.js'
import type { AgentTool } from '../types/tool.js'
import type { CompactionEvent } from '../types/event.js'
import { compactionEventOf, slidingWindow, slidingWindowRecovery, type SlidingWindow } from '../context/sliding-window.js'
import { DEFAULT_AGENT_TOOL_CONCURRENCY, type AgentOptions, type CallOptions } from './agent-options.js'
import type { Approvals } from './approvals.js'

/** What a run's configuration is built from besides the agent's options. */
export interface LoopConfigInput {
  readonly options: AgentOptions
  readonly call: CallOptions
  readonly model: ModelSpec
  readonly streamFn: StreamFn
  readonly signal: AbortSignal
  readonly scheduler: SchedulerLike
  readonly steering: MessageSource
  readonly followUp: MessageSource
  readonly transform: TransformContext | undefined
  readonly recover: ((state: TurnState) => OverflowRecovery | undefined) | undefined
  readonly approvals: Approvals
}

/**
 * Which tools the approver is asked about: module functions, not arrows made
 * per run. An arrow made per run took its optimized code with it when it died,
 * so that after a full GC between runs each run compiled it again (agent-tools
 * 200, `--trace-opt` over runs 2-9, each after a full GC: optimized in every one).
 */
const everyTool = (): boolean => true
const toolsThatAsk = (tool: AgentTool): boolean => tool.needsApproval === true

/** The loop configuration of one run. */
export function loopConfigOf(input: LoopConfigInput): AgentLoopConfig {
  const o = input.options
  const mode = o.approvalMode ?? 'smart'
  const streamOptions = o.streamOptions === undefined && input.call.streamOptions === undefined ? undefined : { ...o.streamOptions, ...input.call.streamOptions }
  const approver: ApproveTool | undefined =
    o.approveTool === 'resolveApproval'
      ? undefined
      : (o.approveTool ?? ((request) => Approval.reject(`tool '${request.tool.name}' needs approval and no approver is configured`)))
  return {
    model: input.model,
    streamFn: withApiKey(input.streamFn, o.getApiKey),
    signal: input.signal,
    scheduler: input.scheduler,
    // The Agent's queues take one message or all per poll themselves (their contents are state).
    steering: input.steering,
    followUp: input.followUp,
    ...(o.steeringDelivery === undefined ? {} : { steeringDelivery: o.steeringDelivery }),
    ...(streamOptions === undefined ? {} : { streamOptions }),
    ...(o.retry === undefined ? {} : { retry: o.retry }),
    ...(o.fallback === undefined ? {} : { fallback: o.fallback.map((r) => ({ model: r.model, streamFn: withApiKey(r.streamFn, o.getApiKey) })) }),
    ...(o.convertToLlm === undefined ? {} : { convertToLlm: o.convertToLlm }),
    ...(input.transform === undefined ? {} : { transformContext: input.transform }),
    ...(input.recover === undefined ? {} : { recoverOverflow: input.recover }),
    ...(mode === 'bypassed'
      ? {}
      : { approveTool: input.approvals.gate(approver), approvalRequired: mode === 'enabled' ? everyTool : toolsThatAsk }),
    policies: policiesOf(o),
    ...(o.maxTurns === undefined ? {} : { maxTurns: o.maxTurns }),
    toolExecution: o.toolExecution ?? { mode: 'concurrent', limit: DEFAULT_AGENT_TOOL_CONCURRENCY },
    ...(o.maxToolCallsPerMessage === undefined ? {} : { maxToolCallsPerMessage: o.maxToolCallsPerMessage }),
    ...(o.maxArgumentDepth === undefined ? {} : { maxArgumentDepth: o.maxArgumentDepth }),
    ...(o.toolTimeoutMs === undefined ? {} : { toolTimeoutMs: o.toolTimeoutMs }),
  }
}

/** What the model sees each turn, and what is done on a context overflow. */
export interface ContextManagement {
  readonly transform: TransformContext | undefined
  readonly recover: ((state: TurnState) => OverflowRecovery | undefined) | undefined
  /** The default sliding window, when the options use it. */
  readonly window: SlidingWindow | undefined
}

/**
 * The default sliding window (reporting its compactions to `report`) where
 * the options leave the context transform or the overflow recovery to it.
 */
export function contextManagementOf(o: AgentOptions, report: (event: CompactionEvent) => void): ContextManagement {
  const window =
    o.transformContext === undefined || o.recoverOverflow === undefined
      ? slidingWindow({ ...o.contextWindow, onCompaction: (compaction) => report(compactionEventOf(compaction)) })
      : undefined
  // The loop tells the window the turn's model's context window, so its budgets fit small models.
  return {
    transform: o.transformContext === false ? undefined : (o.transformContext ?? window),
    recover: o.recoverOverflow === false ? undefined : (o.recoverOverflow ?? (window === undefined ? undefined : slidingWindowRecovery(window, o.convertToLlm))),
    window,
  }
}

/** Built-in policies first (a budget must hold whatever a user policy does), then the user's. */
function policiesOf(o: AgentOptions): Policies {
  const user = o.policies ?? {}
  return {
    preTurn: [...(o.budget === undefined ? [] : [budgetPolicy(o.budget)]), ...(user.preTurn ?? [])],
    preDispatch: [...(o.denyTools === undefined ? [] : [toolDenyList(o.denyTools)]), ...(user.preDispatch ?? [])],
    postTurn: [...(o.loopDetection === undefined ? [] : [loopDetection(o.loopDetection)]), ...(user.postTurn ?? [])],
    postLoop: [...(user.postLoop ?? [])],
  }
}

/** `route`, asking `resolve` for the API key before every request; its key overrides the provider's own. */
function withApiKey(route: StreamFn, resolve: AgentOptions['getApiKey']): StreamFn {
  if (resolve === undefined) return route
  return (request: LlmRequest) =>
    defer(() => {
      const key = callUser('getApiKey', resolve, request.model.provider)
      const send = (apiKey: string | undefined): Observable<never> | ReturnType<StreamFn> =>
        route(apiKey === undefined ? request : { ...request, options: { ...request.options, apiKey } })
      // A failing resolver fails the call with an error that names it (not retried: it is no provider error).
      if (key instanceof CallbackError) return throwError(() => key)
      return isThenable(key) ? from(Promise.resolve(key)).pipe(failuresOf('getApiKey'), switchMap(send)) : send(key)
    })
}

/**
 * A run's configuration as an Agent with the default options builds it (the sliding window's
 * transform and recovery, the approval gate), kept for the process (see `resident`). Its hidden
 * class is reached by the transitions of the spreads above, which V8 holds weakly: with every
 * run's configuration dead, the full GC before a timed run collected it, and the optimized code
 * of the loop's per-turn `TurnRunner.next` (which reads the configuration in `afterTurn`) was
 * thrown away ("weak objects", `--trace-deopt`), and it and what it had inlined were compiled
 * again over the next runs. agent-tools 200 under callgrind (40 warm-up runs, two full GCs
 * before each of 4 runs, --single-threaded): 154.4 -> 144.0 M instructions a run, TurboFan's
 * share 9.9 -> 1.6 M. An Agent whose options add fields (`maxTurns`, `retry`, ...) builds
 * another class, not kept.
 */
resident(
  loopConfigOf({
    options: {} as AgentOptions,
    call: {},
    model: { provider: '', modelId: '' } as ModelSpec,
    streamFn: () => unused,
    signal: new AbortController().signal,
    scheduler: asyncScheduler,
    steering: () => [],
    followUp: () => [],
    transform: (messages) => messages,
    recover: () => undefined,
    approvals: { gate: () => everyTool } as unknown as Approvals,
  }),
)
