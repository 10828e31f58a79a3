/**
 * `Agent`: one object that holds a conversation. It runs `agentLoop` (no
 * second loop), folds the events into immutable state, multicasts them, and
 * owns what outlives a run: the transcript, the queues, the model, the
 * checkpoints.
 */
import { asyncScheduler, BehaviorSubject, defer, from, Observable, ReplaySubject, Subject, switchMap, throwError, type SchedulerLike, type Subscription } from 'rxjs'
import { agentLoop, agentLoopContinue, type AgentLoopConfig } from '../loop/agent-loop.js'
import type { QueueMode } from '../loop/message-queue.js'
import type { ModelRoute, OverflowRecovery } from '../../operators/call-model.js'
import type { RetryOptions } from '../../operators/retry-stream.js'
import type { ConvertToLlm, TransformContext } from '../../operators/transform-context.js'
import type { ToolExecution } from '../../operators/dispatch-tools.js'
import * as t from 'io-ts'
import { Approval, type ApproveTool } from '../policy/approval.js'
import { Verdict, type Policies, type PostLoopPolicy, type PostTurnPolicy } from '../policy/policy.js'
import { defineTool } from '../tools/define-tool.js'
import { budgetPolicy, loopDetection, toolDenyList, type BudgetLimits, type DenyRule, type LoopDetectionOptions } from '../policy/builtin/index.js'
import type { TurnState } from '../turn/turn-state.js'
import { isKind } from '../types/codec-kind.js'
import { errorText } from '../types/codec.js'
import { callUser, CallbackError, failuresOf, isThenable } from '../rx/user-callback.js'
import { extractText, type ImageContent } from '../types/content.js'
import type { AgentEvent, CompactionEvent } from '../types/event.js'
import { userMessage, type AgentMessage } from '../types/message.js'
import { decodeInput, decodeMessage, decodePrompts, MessagesInput, optional, type AgentMessageInput, type PromptInput } from '../types/input.js'
import { settleTranscript, validTranscript } from '../types/settle.js'
import { deepFreeze } from '../types/deep-freeze.js'
import type { ModelSpec } from '../types/model.js'
import type { LlmRequest, StreamFn, StreamOptions } from '../types/request.js'
import type { AgentResult } from '../types/result.js'
import { AgentTools, type AgentTool } from '../types/tool.js'
import { emptyCost, emptyUsage } from '../types/usage.js'
import type { AgentOwnEvent, AgentRunEvent, EventStamp } from './agent-events.js'
import { initialAgentState, reduceAgentState, type AgentState } from './agent-state.js'
import { CHECKPOINT_FORMAT, decodeCheckpoint, type Checkpoint, type CheckpointStore } from './checkpoint.js'
import { turnMetrics, type MetricsCollector } from './metrics.js'
import { compactionEventOf, slidingWindow, slidingWindowRecovery, type SlidingWindowOptions } from '../context/sliding-window.js'

/** Which tool calls need a human's approval. */
export type ApprovalMode =
  /** Every call asks `approveTool`. */
  | 'enabled'
  /** Only calls of tools marked `needsApproval` ask (default). */
  | 'smart'
  /** Nothing asks. */
  | 'bypassed'

export type { PromptInput } from '../types/input.js'

/** How many tool calls an Agent runs at a time unless `toolExecution` says otherwise. */
export const DEFAULT_AGENT_TOOL_CONCURRENCY = 16

/** Options of one call (`prompt`, `continue`), layered over the agent's. */
export interface CallOptions {
  /** Merged over the agent's `streamOptions` for this run. */
  readonly streamOptions?: StreamOptions
}

/** What builds an Agent. Only `systemPrompt`, `model` and `streamFn` are required. */
export interface AgentOptions {
  readonly systemPrompt: string
  readonly model: ModelSpec
  readonly streamFn: StreamFn
  readonly tools?: readonly AgentTool[]
  /** A transcript to start from. */
  readonly messages?: readonly AgentMessage[]
  /**
   * What to do with a transcript (`messages`, a checkpoint's) that breaks the
   * tool-call invariants: `repair` (default) drops orphan and duplicate
   * results, moves misplaced ones after their call and answers unanswered
   * calls with an error result ("no result was recorded"); `reject` throws an
   * `InvalidTranscriptError` listing every problem. See `repairTranscript`.
   */
  readonly invalidTranscript?: 'repair' | 'reject'
  /** A stable id (default: generated, unique in the process). */
  readonly id?: string
  /** Models `cycleModel` goes through (the current one is added if missing). */
  readonly availableModels?: readonly ModelRoute[]
  /** Models that take over a turn whose call failed with a retryable error after its retries. */
  readonly fallback?: readonly ModelRoute[]
  readonly retry?: RetryOptions | false
  readonly streamOptions?: StreamOptions
  /**
   * Called before every request; its key overrides the provider's own
   * (rotation, vaults). May return a Promise; a synchronous one keeps the
   * call in virtual time.
   */
  readonly getApiKey?: (provider: string) => string | undefined | PromiseLike<string | undefined>
  readonly convertToLlm?: ConvertToLlm
  /**
   * What the model sees each turn. Default: a sliding window (`slidingWindow`:
   * 100k tokens, 50k after an overflow — or 3/4 and 1/2 of the model's
   * `contextWindow` when that is smaller —, the first 2 messages kept, a tool
   * call never separated from its results), configured by `contextWindow`;
   * each time it drops messages a `compaction` event says what. `false`:
   * the whole transcript, always.
   */
  readonly transformContext?: TransformContext | false
  /** Options of the default sliding window. */
  readonly contextWindow?: Omit<SlidingWindowOptions, 'onCompaction'>
  /**
   * Asked once per turn on a context-overflow error. Default: the sliding
   * window in overflow mode (`slidingWindowRecovery`); `false`: fail the turn.
   */
  readonly recoverOverflow?: ((state: TurnState) => OverflowRecovery | undefined) | false
  /** Default `oneAtATime`. */
  readonly steeringMode?: QueueMode
  /** Default `oneAtATime`. */
  readonly followUpMode?: QueueMode
  readonly steeringDelivery?: 'afterBatch' | 'interrupt'
  /** Default `smart`. */
  readonly approvalMode?: ApprovalMode
  /** Asked when the approval mode requires it. Without one, such calls are rejected with a reason. */
  readonly approveTool?: ApproveTool
  /** User policies, run after the built-in ones below. */
  readonly policies?: Policies
  readonly maxTurns?: number
  /** Stops before a turn that would start over budget (see `budgetPolicy`). */
  readonly budget?: BudgetLimits
  /** Tools the model may not call (see `toolDenyList`). */
  readonly denyTools?: readonly string[] | DenyRule
  /** Stops or nudges a model repeating the same call (see `loopDetection`). */
  readonly loopDetection?: LoopDetectionOptions
  /** Default: concurrent, at most {@link DEFAULT_AGENT_TOOL_CONCURRENCY} (16) calls at a time. */
  readonly toolExecution?: ToolExecution
  readonly toolTimeoutMs?: number
  /** Tool calls of one message that run at all; the others get an error result saying so. Default 128 (`Infinity`: no cap). */
  readonly maxToolCallsPerMessage?: number
  /** How deep a tool call's parsed arguments may nest; deeper ones are not run. Default 64. */
  readonly maxArgumentDepth?: number
  /** Joins the system prompt in plan mode. */
  readonly planModeAddendum?: string
  /** Told each turn's metrics; a collector that throws or rejects is reported as a `listenerError`. */
  readonly metrics?: MetricsCollector
  /** Called with every event, isolated like listeners. */
  readonly forwarders?: readonly ((event: AgentRunEvent) => void)[]
  readonly checkpointStore?: CheckpointStore
  /** Where time comes from; the TestScheduler's in tests. */
  readonly scheduler?: SchedulerLike
  /** `error` (default): a prompt while running throws. `followUp`: it is queued as a follow-up of the current run. */
  readonly whileRunning?: 'error' | 'followUp'
  /** Whether a model has a native JSON-schema output mode (default: providers `openai` and `google`). */
  readonly nativeStructuredOutput?: (model: ModelSpec) => boolean
  /** Told when a listener, forwarder or metrics collector throws or rejects (default: nothing beyond the `listenerError` event). */
  readonly onListenerError?: (error: unknown, event: AgentRunEvent) => void
}

/** A run: awaitable for its result, observable for its events (replayed from its start). */
export interface AgentRun extends PromiseLike<AgentResult> {
  readonly runId: string
  readonly events$: Observable<AgentRunEvent>
  readonly result: Promise<AgentResult>
}

/** A prompt while a run is in progress. */
export class AgentBusyError extends Error {
  override readonly name = 'AgentBusyError'
}

/** The model gave no valid structured answer within the retries. */
export class StructuredOutputError extends Error {
  override readonly name = 'StructuredOutputError'
  constructor(
    message: string,
    readonly result: AgentResult,
  ) {
    super(message)
  }
}

/** Options of {@link Agent.structured}. */
export interface StructuredOptions {
  /** Invalid answers fed back before giving up (default 3). */
  readonly maxRetries?: number
  /** The synthetic tool's name (default `respond`). */
  readonly toolName?: string
  readonly description?: string
  readonly call?: CallOptions
  /**
   * `tool`: a synthetic tool the model calls with the answer. `native`: the
   * API's own JSON-schema mode (`StreamOptions.responseFormat`). `auto`
   * (default): native where the agent's `nativeStructuredOutput` says the
   * model has it (OpenAI and Gemini by default), the tool elsewhere.
   */
  readonly mode?: 'auto' | 'tool' | 'native'
}

/** A structured run: awaitable for the decoded value, observable for its events. */
export interface StructuredRun<T> extends PromiseLike<T> {
  readonly runId: string
  readonly events$: Observable<AgentRunEvent>
  readonly value: Promise<T>
}

/** The addendum plan mode adds to the system prompt unless `planModeAddendum` replaces it. */
export const DEFAULT_PLAN_MODE_ADDENDUM =
  'You are in plan mode. Investigate with the read-only tools you have and propose a step-by-step plan; do not make changes. The tools that change things are not available until the plan is approved.'

let agentCount = 0

interface ActiveRun {
  readonly runId: string
  readonly abort: AbortController
  readonly replay: ReplaySubject<AgentRunEvent>
  readonly result: Promise<AgentResult>
  readonly resolve: (result: AgentResult) => void
  subscription?: Subscription
}

/**
 * An agent: a conversation, its model and tools, and the runs over it.
 *
 * ```ts
 * const agent = new Agent({ systemPrompt: 'Be brief.', model, streamFn, tools: [search] })
 * agent.subscribe((e) => e.type === 'messageUpdate' && e.chunk.type === 'textDelta' && process.stdout.write(e.chunk.text))
 * const result = await agent.prompt('What changed in the last release?')
 * ```
 */
export class Agent {
  readonly id: string
  private readonly options: AgentOptions
  private readonly scheduler: SchedulerLike
  private readonly state$$: BehaviorSubject<AgentState>
  private readonly events$$ = new Subject<AgentRunEvent>()
  private readonly listeners = new Set<{ readonly name: string; readonly fn: (event: AgentRunEvent) => void }>()
  private streamFn: StreamFn
  private routes: ModelRoute[]
  private active: ActiveRun | undefined
  private runCount = 0
  private turnIndex = 0
  private checkpointSeq = 0
  /** The transcript as of the last completed turn: what a checkpoint holds. */
  private boundary: readonly AgentMessage[]
  private readonly transform: TransformContext | undefined
  private readonly recover: ((state: TurnState) => OverflowRecovery | undefined) | undefined
  /** The prompts of the run in progress, until its first turn completes. */
  private runPrompts: readonly AgentMessage[] = []
  /** Queued messages taken by the run since the last completed turn. */
  private readonly drained = { steering: [] as AgentMessage[], followUp: [] as AgentMessage[] }
  private readonly steeringQueue: AgentMessage[] = []
  private readonly followUpQueue: AgentMessage[] = []

  /** Immutable snapshots, one per change; replays the current one to new subscribers. */
  readonly state$: Observable<AgentState>
  /**
   * Every event, multicast: all subscribers see the same run once. RxJS
   * isolates a subscriber that throws (the run and the others go on) and
   * reports it through `config.onUnhandledError`; `subscribe` below reports
   * it as a `listenerError` event instead.
   */
  readonly events$: Observable<AgentRunEvent>

  /** @throws InvalidInputError naming the path of a bad message, tool or system prompt (`messages[1].content`). */
  constructor(options: AgentOptions) {
    this.scheduler = options.scheduler ?? asyncScheduler
    const codec = t.type({ systemPrompt: t.string, messages: optional(MessagesInput(this.scheduler.now())), tools: optional(AgentTools) })
    // Frozen first, as every message the Agent's transcript takes in is: a frozen message is checked once, here, not again on every run.
    // Without recursion: a message may hold data of any depth (a tool's `details`).
    if (Array.isArray(options.messages)) for (const m of options.messages as readonly unknown[]) deepFreeze(m)
    options = { ...options, ...decodeInput(codec, options, 'new Agent', 'options') }
    this.options = options
    this.id = options.id ?? `agent-${++agentCount}`
    this.streamFn = options.streamFn
    this.routes = [...(options.availableModels ?? [])]
    if (!this.routes.some((r) => sameModel(r.model, options.model))) this.routes.unshift({ model: options.model, streamFn: options.streamFn })
    // After any decoding: a transcript breaking the tool-call invariants would make every request fail.
    const messages = validTranscript(options.messages ?? [], options.invalidTranscript)
    this.boundary = messages
    this.state$$ = new BehaviorSubject(
      initialAgentState({
        systemPrompt: options.systemPrompt,
        model: options.model,
        tools: options.tools ?? [],
        messages,
        availableModels: this.routes.map((r) => r.model),
      }),
    )
    this.state$ = this.state$$.asObservable()
    const window =
      options.transformContext === undefined || options.recoverOverflow === undefined
        ? slidingWindow({ ...options.contextWindow, onCompaction: (report) => this.emitOwn(compactionEventOf(report)) })
        : undefined
    // The loop tells the window the turn's model's context window, so its budgets fit small models.
    this.transform = options.transformContext === false ? undefined : (options.transformContext ?? window)
    this.recover =
      options.recoverOverflow === false
        ? undefined
        : (options.recoverOverflow ?? (window === undefined ? undefined : slidingWindowRecovery(window, options.convertToLlm)))
    this.events$ = this.events$$.asObservable()
    for (const [i, forward] of (options.forwarders ?? []).entries()) this.subscribe(forward, `forwarder ${i + 1}`)
  }

  /**
   * Restores an agent from a checkpoint: same id, transcript, model, queues and plan mode. Call `continue()` to resume a run it was in.
   *
   * @throws InvalidInputError naming the path when `checkpoint` does not decode, or `version` when its format is newer than this rxagent's.
   */
  static restore(
    saved: Checkpoint,
    options: Omit<AgentOptions, 'messages' | 'id' | 'systemPrompt' | 'model'> & { readonly id?: string; readonly systemPrompt?: string; readonly model?: ModelSpec },
  ): Agent {
    const checkpoint = decodeCheckpoint(saved, 'Agent.restore', 'checkpoint', (options.scheduler ?? asyncScheduler).now())
    const agent = new Agent({
      ...options,
      id: options.id ?? checkpoint.agentId,
      systemPrompt: options.systemPrompt ?? checkpoint.systemPrompt,
      model: options.model ?? checkpoint.model,
      messages: checkpoint.messages,
    })
    agent.steeringQueue.push(...checkpoint.steering)
    agent.followUpQueue.push(...checkpoint.followUp)
    agent.checkpointSeq = checkpoint.seq
    if (checkpoint.planMode) agent.enterPlanMode()
    return agent
  }

  /** The current snapshot. */
  get state(): AgentState {
    return this.state$$.value
  }

  get isRunning(): boolean {
    return this.active !== undefined
  }

  // --- Runs ---------------------------------------------------------------

  /**
   * Starts a run with `input` (and `images`, added to a text prompt). Throws {@link AgentBusyError} while a run is in progress, unless `whileRunning: 'followUp'`.
   *
   * @throws InvalidInputError naming the path of a bad prompt (`prompt.content`); see {@link PromptInput} for what is accepted.
   */
  prompt(input: PromptInput, images: readonly ImageContent[] = [], call: CallOptions = {}): AgentRun {
    const messages = decodePrompts(input, 'Agent.prompt', this.scheduler.now(), images)
    if (this.active !== undefined) {
      if (this.options.whileRunning === 'followUp') {
        this.followUpQueue.push(...messages)
        return this.runHandle(this.active)
      }
      throw new AgentBusyError(`agent ${this.id} is already running (${this.active.runId}): use steer() or followUp(), await waitForIdle(), or set whileRunning: 'followUp'`)
    }
    return this.start((context, config) => agentLoop(messages, context, config), call, messages)
  }

  /**
   * Continues the transcript without a new prompt: queued steering messages
   * (or, when the model had the last word, queued follow-ups) open the run;
   * otherwise the model answers the last user or tool-result message.
   */
  continue(call: CallOptions = {}): AgentRun {
    if (this.active !== undefined) throw new AgentBusyError(`agent ${this.id} is already running (${this.active.runId})`)
    const steering = this.drain(this.steeringQueue, this.options.steeringMode)
    if (steering.length > 0) return this.start((context, config) => agentLoop(steering, context, config), call, steering)
    const last = [...this.state.messages].reverse().find((m) => m.role !== 'custom')
    if (last?.role === 'assistant') {
      const followUps = this.drain(this.followUpQueue, this.options.followUpMode)
      if (followUps.length === 0) throw new Error(`agent ${this.id}: nothing to continue — the model had the last word and no steering or follow-up is queued`)
      return this.start((context, config) => agentLoop(followUps, context, config), call, followUps)
    }
    return this.start((context, config) => agentLoopContinue(context, config), call)
  }

  /** Aborts the current run gracefully (the partial answer is kept, every tool call answered); resolves when idle. */
  abort(): Promise<void> {
    this.active?.abort.abort()
    return this.waitForIdle()
  }

  /** Resolves when no run is in progress (at once if none is). */
  waitForIdle(): Promise<void> {
    const active = this.active
    if (active === undefined) return Promise.resolve()
    return active.result.then(
      () => undefined,
      () => undefined,
    )
  }

  /** Aborts any run and forgets the transcript, the queues and the last error. */
  reset(): void {
    const active = this.active
    if (active !== undefined) {
      this.active = undefined
      active.abort.abort()
      active.subscription?.unsubscribe()
      active.replay.complete()
      // Whoever awaits the run is told how it ended rather than left waiting.
      active.resolve({ messages: [], stopReason: 'aborted', usage: emptyUsage, cost: emptyCost, error: 'the agent was reset' })
    }
    this.drained.steering.length = 0
    this.drained.followUp.length = 0
    this.steeringQueue.length = 0
    this.followUpQueue.length = 0
    this.boundary = []
    this.turnIndex = 0
    this.setState(Object.freeze({ ...this.state, messages: Object.freeze([]), isRunning: false, streamMessage: undefined, pendingToolCalls: Object.freeze([]), error: undefined }))
  }

  // --- Queues -------------------------------------------------------------

  /** Queues a message that redirects the agent while it works (delivered after the current tool batch). @throws InvalidInputError for a bad message. */
  steer(message: string | AgentMessageInput): void {
    this.steeringQueue.push(decodeMessage(message, 'Agent.steer', this.scheduler.now()))
  }

  /** Queues a message that continues the run when it would otherwise end. @throws InvalidInputError for a bad message. */
  followUp(message: string | AgentMessageInput): void {
    this.followUpQueue.push(decodeMessage(message, 'Agent.followUp', this.scheduler.now()))
  }

  /** What is queued, oldest first. */
  get pendingSteering(): readonly AgentMessage[] {
    return [...this.steeringQueue]
  }

  get pendingFollowUps(): readonly AgentMessage[] {
    return [...this.followUpQueue]
  }

  clearSteering(): void {
    this.steeringQueue.length = 0
  }

  clearFollowUps(): void {
    this.followUpQueue.length = 0
  }

  /**
   * Feeds a queue from any Observable (a socket, a UI); unsubscribe to stop. A
   * message that does not decode is reported as a `listenerError` event
   * (listener `feed(steering)` or `feed(followUp)`) and the feed goes on; a
   * source that errors ends the feed with a `listenerError` event (listener
   * `steering feed` or `followUp feed`).
   */
  feed(queue: 'steering' | 'followUp', source: Observable<string | AgentMessageInput>): Subscription {
    return source.subscribe({
      next: (message) => {
        try {
          if (queue === 'steering') this.steer(message)
          else this.followUp(message)
        } catch (error) {
          this.emitOwn({ type: 'listenerError', listener: `feed(${queue})`, error: errorText(error), eventType: 'feed' })
        }
      },
      error: (error: unknown) => this.emitOwn({ type: 'listenerError', listener: `${queue} feed`, error: errorText(error), eventType: 'feed' }),
    })
  }

  // --- Model, tools, modes ------------------------------------------------

  /** Switches to `route` (or a model served by the agent's stream function) for the next run. */
  setModel(model: ModelSpec | ModelRoute): void {
    const route = 'streamFn' in model ? model : (this.routes.find((r) => sameModel(r.model, model)) ?? { model, streamFn: this.streamFn })
    const from = this.state.model
    this.streamFn = route.streamFn
    if (!this.routes.some((r) => sameModel(r.model, route.model))) this.routes.push(route)
    this.setState(Object.freeze({ ...this.state, model: route.model, availableModels: Object.freeze(this.routes.map((r) => r.model)) }))
    if (!sameModel(from, route.model)) this.emitOwn({ type: 'modelChange', from, to: route.model })
  }

  /** The next (or previous) of the available models. */
  cycleModel(direction: 1 | -1 = 1): ModelSpec {
    const i = this.routes.findIndex((r) => sameModel(r.model, this.state.model))
    const next = this.routes[(i + direction + this.routes.length) % this.routes.length]!
    this.setModel(next)
    return next.model
  }

  /** @throws InvalidInputError naming the path of a bad tool (`tools[0].execute`). */
  setTools(tools: readonly AgentTool[]): void {
    decodeInput(AgentTools, tools, 'Agent.setTools', 'tools', 'tools')
    this.setState(Object.freeze({ ...this.state, tools: Object.freeze([...tools]) }))
  }

  setSystemPrompt(systemPrompt: string): void {
    this.setState(Object.freeze({ ...this.state, systemPrompt }))
  }

  /** Plan mode: only tools that need no approval are offered, and the plan-mode addendum joins the system prompt. */
  enterPlanMode(): void {
    if (!this.state.planMode) this.setState(Object.freeze({ ...this.state, planMode: true }))
  }

  exitPlanMode(): void {
    if (this.state.planMode) this.setState(Object.freeze({ ...this.state, planMode: false }))
  }

  // --- Listeners ----------------------------------------------------------

  /** Calls `listener` with every event. A listener that throws is reported (a `listenerError` event) and never breaks the run or the others. */
  subscribe(listener: (event: AgentRunEvent) => void, name = `listener ${this.listeners.size + 1}`): Subscription {
    const entry = { name, fn: listener }
    this.listeners.add(entry)
    const subscription = this.events$$.subscribe({ next: (event) => this.deliver(entry, event) })
    subscription.add(() => this.listeners.delete(entry))
    return subscription
  }

  /** Adds a forwarder (a log, a socket): like a listener, for the agent's whole life. */
  addForwarder(forward: (event: AgentRunEvent) => void): Subscription {
    return this.subscribe(forward, `forwarder ${this.listeners.size + 1}`)
  }

  // --- Checkpoints --------------------------------------------------------

  /**
   * A checkpoint of the agent as of the last completed turn (mid-run: the
   * turn in progress is not in it and is redone on `continue()`), saved to
   * the store when one is configured.
   */
  async checkpoint(metadata?: Record<string, unknown>): Promise<Checkpoint> {
    const seq = ++this.checkpointSeq
    const checkpoint: Checkpoint = {
      version: CHECKPOINT_FORMAT,
      id: `${this.id}:${seq}`,
      agentId: this.id,
      seq,
      createdAt: this.scheduler.now(),
      systemPrompt: this.state.systemPrompt,
      model: this.state.model,
      messages: this.active === undefined ? this.state.messages : [...this.boundary, ...this.runPrompts],
      steering: [...(this.active === undefined ? [] : this.drained.steering), ...this.steeringQueue],
      followUp: [...(this.active === undefined ? [] : this.drained.followUp), ...this.followUpQueue],
      planMode: this.state.planMode,
      midRun: this.active !== undefined,
      ...(metadata === undefined ? {} : { metadata }),
    }
    await this.options.checkpointStore?.save(checkpoint)
    return checkpoint
  }

  // --- Internals ----------------------------------------------------------

  private setState(state: AgentState): void {
    if (state !== this.state$$.value) this.state$$.next(state)
  }

  private drain(queue: AgentMessage[], mode: QueueMode = 'oneAtATime'): AgentMessage[] {
    if (queue.length === 0) return []
    const taken = mode === 'all' ? queue.splice(0) : queue.splice(0, 1)
    // Delivered into a turn that is not complete yet: a checkpoint must still hold them.
    if (this.active !== undefined) (queue === this.steeringQueue ? this.drained.steering : this.drained.followUp).push(...taken)
    return taken
  }

  private markBoundary(): void {
    this.boundary = this.state.messages
    this.runPrompts = []
    this.drained.steering.length = 0
    this.drained.followUp.length = 0
  }

  private stamp(): EventStamp {
    return { agentId: this.id, runId: this.active?.runId ?? null, turnIndex: this.turnIndex }
  }

  private emitOwn(event: AgentOwnEvent | CompactionEvent): void {
    this.emit(stamped(event, this.stamp()))
  }

  private emit(event: AgentRunEvent, run: ActiveRun | undefined = this.active): void {
    run?.replay.next(event)
    this.events$$.next(event)
  }

  private deliver(entry: { readonly name: string; readonly fn: (event: AgentRunEvent) => void }, event: AgentRunEvent): void {
    this.callListener(entry.name, () => entry.fn(event), event)
  }

  /**
   * Calls a listener, forwarder or collector: a throw, or a rejection of the
   * Promise it returned (an `async` listener), is reported as a
   * `listenerError` event and to `onListenerError`, never thrown.
   */
  private callListener(name: string, call: () => unknown, event: AgentRunEvent): void {
    const returned = callUser(name, call)
    if (returned instanceof CallbackError) this.listenerFailed(name, returned.error, event)
    else if (isThenable(returned)) returned.then(undefined, (error: unknown) => this.listenerFailed(name, error, event))
  }

  private listenerFailed(name: string, error: unknown, event: AgentRunEvent): void {
    // A failing error hook (thrown or rejected) has nowhere left to report to.
    const hooked: unknown = callUser('onListenerError', () => this.options.onListenerError?.(error, event))
    if (isThenable(hooked)) hooked.then(undefined, () => undefined)
    if (event.type !== 'listenerError') {
      this.emit(stamped({ type: 'listenerError', listener: name, error: errorText(error), eventType: event.type }, this.stamp()))
    }
  }

  private streamFnOf(route: StreamFn): StreamFn {
    const resolve = this.options.getApiKey
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

  private loopConfig(call: CallOptions, abort: AbortController): AgentLoopConfig {
    const o = this.options
    const mode = o.approvalMode ?? 'smart'
    const streamOptions = o.streamOptions === undefined && call.streamOptions === undefined ? undefined : { ...o.streamOptions, ...call.streamOptions }
    const approver: ApproveTool = o.approveTool ?? ((request) => Approval.reject(`tool '${request.tool.name}' needs approval and no approver is configured`))
    return {
      model: this.state.model,
      streamFn: this.streamFnOf(this.streamFn),
      signal: abort.signal,
      scheduler: this.scheduler,
      steering: () => this.drain(this.steeringQueue, o.steeringMode),
      followUp: () => this.drain(this.followUpQueue, o.followUpMode),
      ...(o.steeringDelivery === undefined ? {} : { steeringDelivery: o.steeringDelivery }),
      ...(streamOptions === undefined ? {} : { streamOptions }),
      ...(o.retry === undefined ? {} : { retry: o.retry }),
      ...(o.fallback === undefined ? {} : { fallback: o.fallback.map((r) => ({ model: r.model, streamFn: this.streamFnOf(r.streamFn) })) }),
      ...(o.convertToLlm === undefined ? {} : { convertToLlm: o.convertToLlm }),
      ...(this.transform === undefined ? {} : { transformContext: this.transform }),
      ...(this.recover === undefined ? {} : { recoverOverflow: this.recover }),
      ...(mode === 'bypassed' ? {} : { approveTool: approver, approvalRequired: mode === 'enabled' ? () => true : (tool: AgentTool) => tool.needsApproval === true }),
      policies: this.policies(),
      ...(o.maxTurns === undefined ? {} : { maxTurns: o.maxTurns }),
      toolExecution: o.toolExecution ?? { mode: 'concurrent', limit: DEFAULT_AGENT_TOOL_CONCURRENCY },
      ...(o.maxToolCallsPerMessage === undefined ? {} : { maxToolCallsPerMessage: o.maxToolCallsPerMessage }),
      ...(o.maxArgumentDepth === undefined ? {} : { maxArgumentDepth: o.maxArgumentDepth }),
      ...(o.toolTimeoutMs === undefined ? {} : { toolTimeoutMs: o.toolTimeoutMs }),
    }
  }

  /** Built-in policies first (a budget must hold whatever a user policy does), then the user's. */
  private policies(): Policies {
    const o = this.options
    const user = o.policies ?? {}
    return {
      preTurn: [...(o.budget === undefined ? [] : [budgetPolicy(o.budget)]), ...(user.preTurn ?? [])],
      preDispatch: [...(o.denyTools === undefined ? [] : [toolDenyList(o.denyTools)]), ...(user.preDispatch ?? [])],
      postTurn: [...(o.loopDetection === undefined ? [] : [loopDetection(o.loopDetection)]), ...(user.postTurn ?? [])],
      postLoop: [...(user.postLoop ?? [])],
    }
  }

  /** The tools and system prompt a run uses (plan mode narrows them). */
  private runContext(): { systemPrompt: string; messages: readonly AgentMessage[]; tools: readonly AgentTool[] } {
    const s = this.state
    if (!s.planMode) return { systemPrompt: s.systemPrompt, messages: s.messages, tools: s.tools }
    return {
      systemPrompt: `${s.systemPrompt}\n\n${this.options.planModeAddendum ?? DEFAULT_PLAN_MODE_ADDENDUM}`,
      messages: s.messages,
      tools: s.tools.filter((t) => t.needsApproval !== true),
    }
  }

  /**
   * Asks for a typed answer: the model must call a synthetic `respond` tool
   * whose parameters are `codec`'s JSON Schema. Arguments that do not decode
   * go back to the model as the tool's error result (the decode errors, with
   * paths) and it tries again, up to `maxRetries` times (default 3); an answer
   * given as text instead gets a reminder, within the same limit. Then the
   * promise rejects with a {@link StructuredOutputError} saying what was wrong.
   */
  structured<C extends t.Mixed>(codec: C, input: PromptInput, options: StructuredOptions = {}): StructuredRun<t.TypeOf<C>> {
    if (this.active !== undefined) throw new AgentBusyError(`agent ${this.id} is already running (${this.active.runId})`)
    const maxRetries = options.maxRetries ?? 3
    const name = options.toolName ?? 'respond'
    const wrapped = !isObjectCodec(codec)
    const parameters = wrapped ? t.type({ value: codec }) : codec
    let answer: { value: unknown } | undefined
    let failures = 0
    let reminders = 0
    let lastProblem = 'the model never called the tool'
    const respond = defineTool({
      name,
      description: options.description ?? 'Gives your final answer. Call it exactly once, when you have the answer; its arguments are the answer.',
      parameters,
      execute: (args: t.TypeOf<typeof parameters>) => {
        answer = { value: wrapped ? (args as { value: unknown }).value : args }
        return 'Answer recorded.'
      },
    })
    const done: PostTurnPolicy = {
      name: 'structuredOutput',
      evaluate: (view) => {
        for (const r of view.toolResults) {
          if (r.toolName === name && r.isError) {
            failures++
            lastProblem = r.content.map((c) => (c.type === 'text' ? c.text : '')).join('')
          }
        }
        if (answer !== undefined) return Verdict.stop('structured output received')
        if (failures > maxRetries) return Verdict.stop(`no valid structured output after ${failures} invalid attempts`)
        return Verdict.continue
      },
    }
    const remind: PostLoopPolicy = {
      name: 'structuredOutput',
      evaluate: () => {
        if (answer !== undefined) return Verdict.continue
        if (reminders >= maxRetries) return Verdict.stop('the model answered without calling the respond tool')
        reminders++
        return Verdict.inject(userMessage(`Give your final answer by calling the \`${name}\` tool; its arguments must match its schema.`, this.scheduler.now()))
      },
    }
    const messages = decodePrompts(input, 'Agent.structured', this.scheduler.now())
    const native = options.mode === 'native' || (options.mode !== 'tool' && (this.options.nativeStructuredOutput ?? defaultNativeStructuredOutput)(this.state.model))
    // Native: the API constrains the answer to the schema; the last answer's text is decoded, and a
    // failure goes back as a user message with the decode errors.
    const checkAnswer: PostLoopPolicy = {
      name: 'structuredOutput',
      evaluate: (view) => {
        const raw = extractText(view.message.content).trim()
        let json: unknown
        try {
          json = JSON.parse(stripFence(raw))
        } catch (error) {
          lastProblem = `the answer is not JSON (${errorText(error)})`
        }
        if (json !== undefined) {
          const decoded = respond.decodeArguments(json)
          if (decoded._tag === 'Right') {
            answer = { value: wrapped ? (decoded.right as { value: unknown }).value : decoded.right }
            return Verdict.continue
          }
          lastProblem = `the answer does not match the schema:\n${decoded.left.map((l) => `  - ${l}`).join('\n')}`
        }
        if (failures >= maxRetries) return Verdict.stop(`no valid structured output after ${failures + 1} invalid answers`)
        failures++
        return Verdict.inject(userMessage(`Your answer was invalid: ${lastProblem}\nAnswer again with only the JSON.`, this.scheduler.now()))
      },
    }
    const run = native
      ? this.start(
          (context, config) =>
            agentLoop(messages, context, {
              ...config,
              streamOptions: { ...config.streamOptions, responseFormat: { name, schema: respond.schema } },
              policies: { ...config.policies, postLoop: [...(config.policies?.postLoop ?? []), checkAnswer] },
            }),
          options.call ?? {},
          messages,
        )
      : this.start(
          (context, config) =>
            agentLoop(
              messages,
              { ...context, systemPrompt: `${context.systemPrompt}\n\nWhen you have the answer, call the \`${name}\` tool with it.`, tools: [...context.tools, respond] },
              {
                ...config,
                policies: { ...config.policies, postTurn: [...(config.policies?.postTurn ?? []), done], postLoop: [...(config.policies?.postLoop ?? []), remind] },
              },
            ),
          options.call ?? {},
          messages,
        )
    const value = run.result.then((result) => {
      if (answer !== undefined) return answer.value as t.TypeOf<C>
      throw new StructuredOutputError(`no valid structured output (${result.error ?? result.stopReason}); last problem: ${lastProblem}`, result)
    })
    value.catch(() => undefined)
    return {
      runId: run.runId,
      events$: run.events$,
      value,
      then: (onFulfilled, onRejected) => value.then(onFulfilled, onRejected),
    }
  }

  private start(
    loop: (context: { systemPrompt: string; messages: readonly AgentMessage[]; tools: readonly AgentTool[] }, config: AgentLoopConfig) => Observable<AgentEvent>,
    call: CallOptions,
    prompts: readonly AgentMessage[] = [],
  ): AgentRun {
    const runId = `${this.id}/run-${++this.runCount}`
    const abort = new AbortController()
    const replay = new ReplaySubject<AgentRunEvent>()
    let settle!: { resolve: (r: AgentResult) => void; reject: (e: unknown) => void }
    const result = new Promise<AgentResult>((resolve, reject) => (settle = { resolve, reject }))
    // An unawaited run must not turn its failure into an unhandled rejection.
    result.catch(() => undefined)
    const active: ActiveRun = { runId, abort, replay, result, resolve: (r) => settle.resolve(r) }
    this.active = active
    this.turnIndex = 0
    this.markBoundary()
    this.runPrompts = prompts
    const metrics = this.options.metrics
    const events$ = loop(this.runContext(), this.loopConfig(call, abort)).pipe(turnMetrics(this.scheduler))
    const finish = (): void => {
      if (this.active === active) this.active = undefined
    }
    let failed = false
    /** Ends the run with `error`; the transcript is settled so that every tool call has its result. */
    const fail = (error: Error): void => {
      failed = true
      active.subscription?.unsubscribe()
      finish()
      const messages = settleTranscript(this.state.messages, `its result could not be recorded (${error.message})`)
      this.setState(Object.freeze({ ...this.state, messages: Object.freeze(messages), isRunning: false, streamMessage: undefined, pendingToolCalls: Object.freeze([]), error: error.message }))
      replay.error(error)
      settle.reject(error)
    }
    active.subscription = events$.subscribe({
      next: (event) => {
        // After reset() the run is forgotten: what its teardown still emits (say, a
        // synchronous run ending at once on the abort) must not reach the fresh state.
        if (this.active !== active) return
        if (event.type === 'turnStart') this.turnIndex = event.turnIndex
        if (event.type === 'turnMetrics') {
          if (metrics !== undefined) this.callListener('metrics collector', () => metrics.onTurn(event.metrics), stamped(event, this.stamp()))
        } else {
          let state: AgentState
          try {
            state = reduceAgentState(this.state, event)
          } catch (error) {
            // Data the state cannot hold (a tool's hostile `details`): the run ends with an error
            // naming the event, never an exception out of this subscriber.
            return fail(new Error(`the agent could not record '${event.type}' in its state: ${errorText(error)}`))
          }
          this.setState(state)
        }
        if (event.type === 'turnEnd') this.markBoundary()
        if (event.type === 'agentEnd') {
          this.markBoundary()
          finish()
          this.emit(stamped(event, { agentId: this.id, runId, turnIndex: this.turnIndex }), active)
          settle.resolve(event.result)
          return
        }
        this.emit(stamped(event, this.stamp()))
      },
      error: (error: unknown) => {
        finish()
        this.setState(Object.freeze({ ...this.state, isRunning: false, streamMessage: undefined, error: errorText(error) }))
        replay.error(error)
        settle.reject(error)
      },
      complete: () => {
        finish()
        replay.complete()
      },
    })
    if (failed) active.subscription.unsubscribe()
    return this.runHandle(active)
  }

  private runHandle(active: ActiveRun): AgentRun {
    return {
      runId: active.runId,
      events$: active.replay.asObservable(),
      result: active.result,
      // eslint-disable-next-line unicorn/no-thenable -- an AgentRun is awaitable on purpose
      then: (onFulfilled, onRejected) => active.result.then(onFulfilled, onRejected),
    }
  }
}

/** `event` with `stamp`; a lazily materialized `message` (streaming updates) stays lazy. */
function stamped(event: AgentEvent | AgentOwnEvent, stamp: EventStamp): AgentRunEvent {
  if (event.type === 'messageUpdate') {
    const { chunk, contentIndex } = event
    return {
      type: 'messageUpdate',
      chunk,
      contentIndex,
      get message() {
        return event.message
      },
      ...stamp,
    }
  }
  return { ...event, ...stamp }
}

const defaultNativeStructuredOutput = (model: ModelSpec): boolean => model.provider === 'openai' || model.provider === 'google'

/** Models sometimes wrap JSON in a Markdown fence even in JSON mode. */
function stripFence(text: string): string {
  const m = /^```(?:json)?\s*([\s\S]*?)\s*```$/.exec(text)
  return m === null ? text : m[1]!
}

/** Whether `codec` decodes objects, so its arguments can be the tool's arguments as they are. */
function isObjectCodec(codec: t.Mixed): boolean {
  if (isKind(codec, 'InterfaceType', 'PartialType', 'ExactType', 'StrictType')) return true
  if (isKind(codec, 'IntersectionType')) return (codec.types as t.Mixed[]).every(isObjectCodec)
  if (isKind(codec, 'RefinementType')) return isObjectCodec(codec.type as t.Mixed)
  return false
}

const sameModel = (a: ModelSpec, b: ModelSpec): boolean => a.provider === b.provider && a.modelId === b.modelId

