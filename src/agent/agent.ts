/**
 * `Agent`: one object that holds a conversation — an append-only log of
 * what happened to it (`agent-log.ts`), whose fold is its state
 * (`agent-reducer.ts`). It runs `agentLoop` (no second loop), logs what its
 * events change, multicasts them, and logs every command (prompt, steer,
 * model change, plan mode, approvals, reset). This file coordinates; the
 * parts live beside it: the store of the log and its fold, the run replay,
 * the listener hub, the loop configuration, approvals, structured output,
 * plan mode, checkpoints.
 */
import { asyncScheduler, type Observable, type SchedulerLike, type Subscription } from 'rxjs'
import * as t from 'io-ts'
import { agentLoop, agentLoopContinue, type AgentLoopConfig } from '../loop/agent-loop.js'
import type { ModelRoute, OverflowRecovery } from '../../operators/call-model.js'
import type { TransformContext } from '../../operators/transform-context.js'
import type { ApprovalDecision } from '../policy/approval.js'
import type { TurnState } from '../turn/turn-state.js'
import { errorText } from '../types/codec.js'
import type { ImageContent } from '../types/content.js'
import type { AgentMessage } from '../types/message.js'
import { decodeInput, decodeMessage, decodePrompts, invalidInput, MessagesInput, optional, type AgentMessageInput, type PromptInput } from '../types/input.js'
import { validTranscript } from '../types/settle.js'
import { deepFreeze } from '../types/deep-freeze.js'
import type { ModelSpec } from '../types/model.js'
import type { StreamFn } from '../types/request.js'
import { AgentTools, type AgentTool } from '../types/tool.js'
import { compactionEventOf, slidingWindow, slidingWindowRecovery } from '../context/sliding-window.js'
import type { AgentRunEvent } from './agent-events.js'
import { AGENT_LOG_FORMAT, decodeAgentLog, type AgentLogEntry } from './agent-log.js'
import { AgentBusyError, type AgentOptions, type AgentRun, type CallOptions, type StructuredOptions, type StructuredRun } from './agent-options.js'
import { sameModel } from './agent-reducer.js'
import type { AgentState } from './agent-state.js'
import { AgentStore } from './agent-store.js'
import { Approvals } from './approvals.js'
import { CHECKPOINT_FORMAT, decodeCheckpoint, RunBoundary, type Checkpoint } from './checkpoint.js'
import { ListenerHub } from './listener-hub.js'
import { loopConfigOf } from './loop-config.js'
import { runContextOf } from './plan-mode.js'
import { Runner } from './agent-run.js'
import { structuredRun } from './structured-output.js'

export { AgentBusyError, DEFAULT_AGENT_TOOL_CONCURRENCY, StructuredOutputError } from './agent-options.js'
export type { AgentOptions, AgentRun, ApprovalMode, CallOptions, StructuredOptions, StructuredRun } from './agent-options.js'
export { DEFAULT_PLAN_MODE_ADDENDUM } from './plan-mode.js'
export type { PromptInput } from '../types/input.js'

let agentCount = 0

/** What `Agent.restore` and `Agent.fromLog` take: the options, less what the saved agent says. */
export type RestoreOptions = Omit<AgentOptions, 'messages' | 'id' | 'systemPrompt' | 'model'> & { readonly id?: string; readonly systemPrompt?: string; readonly model?: ModelSpec }

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
  private readonly store: AgentStore
  private readonly hub: ListenerHub
  private readonly approvals: Approvals
  private readonly boundary = new RunBoundary()
  private readonly runs: Runner
  private streamFn: StreamFn
  private routes: ModelRoute[]
  private checkpointSeq = 0
  private readonly transform: TransformContext | undefined
  private readonly recover: ((state: TurnState) => OverflowRecovery | undefined) | undefined

  /** Immutable snapshots, one per change; replays the current one to new subscribers. */
  readonly state$: Observable<AgentState>
  /**
   * Every event, multicast: all subscribers see the same run once. RxJS
   * isolates a subscriber that throws (the run and the others go on) and
   * reports it through `config.onUnhandledError`; `subscribe` below reports
   * it as a `listenerError` event instead.
   */
  readonly events$: Observable<AgentRunEvent>
  /** Every log entry appended from now on (`log` has those before). */
  readonly log$: Observable<AgentLogEntry>

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
    const tools = options.tools ?? []
    this.store = new AgentStore(
      { type: 'init', version: AGENT_LOG_FORMAT, agentId: this.id, systemPrompt: options.systemPrompt, model: options.model, availableModels: this.routes.map((r) => r.model), tools: tools.map((x) => x.name), messages },
      tools,
    )
    this.state$ = this.store.state$
    this.log$ = this.store.log$
    this.hub = new ListenerHub((event) => this.runs.emitOwn(event), options.onListenerError)
    this.runs = new Runner({
      id: this.id,
      scheduler: this.scheduler,
      store: this.store,
      hub: this.hub,
      boundary: this.boundary,
      metrics: options.metrics,
      queueMode: (queue) => (queue === 'steering' ? options.steeringMode : options.followUpMode),
      configOf: (call, signal) => this.configOf(call, signal),
      context: () => runContextOf(this.state, options.planModeAddendum),
    })
    this.events$ = this.hub.events$
    this.approvals = new Approvals((command) => this.store.append(command))
    const window =
      options.transformContext === undefined || options.recoverOverflow === undefined
        ? slidingWindow({ ...options.contextWindow, onCompaction: (report) => this.runs.emitOwn(compactionEventOf(report)) })
        : undefined
    // The loop tells the window the turn's model's context window, so its budgets fit small models.
    this.transform = options.transformContext === false ? undefined : (options.transformContext ?? window)
    this.recover =
      options.recoverOverflow === false
        ? undefined
        : (options.recoverOverflow ?? (window === undefined ? undefined : slidingWindowRecovery(window, options.convertToLlm)))
    for (const [i, forward] of (options.forwarders ?? []).entries()) this.subscribe(forward, `forwarder ${i + 1}`)
  }

  /**
   * Restores an agent from a checkpoint (format 1 or 2): same id, transcript, model, queues and plan mode. Call `continue()` to resume a run it was in.
   *
   * @throws InvalidInputError naming the path when `checkpoint` does not decode, or `version` when its format is newer than this rxagent's.
   */
  static restore(saved: Checkpoint, options: RestoreOptions): Agent {
    const checkpoint = decodeCheckpoint(saved, 'Agent.restore', 'checkpoint', (options.scheduler ?? asyncScheduler).now())
    const agent = new Agent({
      ...options,
      id: options.id ?? checkpoint.agentId,
      systemPrompt: options.systemPrompt ?? checkpoint.systemPrompt,
      model: options.model ?? checkpoint.model,
      messages: checkpoint.messages,
    })
    for (const message of checkpoint.steering) agent.store.append({ type: 'enqueue', queue: 'steering', message })
    for (const message of checkpoint.followUp) agent.store.append({ type: 'enqueue', queue: 'followUp', message })
    agent.checkpointSeq = checkpoint.seq
    if (checkpoint.planMode) agent.enterPlanMode()
    return agent
  }

  /**
   * Rebuilds an agent from its log (`agent.log`, as kept anywhere): the same
   * id and the state the log folds to. `options.tools` must hold every tool
   * the log names; models are served by the routes of `availableModels`, or
   * else by `streamFn`. A log that ends in the middle of a run gets one more
   * entry, `runFailed` (the run was interrupted; unanswered tool calls get an
   * error result): call `continue()` to redo its turn.
   *
   * @throws InvalidInputError naming the path of what does not decode (`log[3].message.content`), or a tool the log names that `options.tools` lacks.
   */
  static fromLog(log: readonly unknown[], options: Omit<RestoreOptions, 'id' | 'systemPrompt' | 'model'>): Agent {
    const entries = decodeAgentLog(log, 'Agent.fromLog', 'log')
    const init = entries[0] as Extract<AgentLogEntry, { type: 'init' }>
    const given = new Set((options.tools ?? []).map((x) => x.name))
    entries.forEach((e, i) => {
      const named = e.type === 'init' || e.type === 'tools' ? e.tools : []
      const missing = named.findIndex((name) => !given.has(name))
      if (missing >= 0) throw invalidInput('Agent.fromLog', 'log', `[${i}].tools[${missing}]`, `the log names a tool '${named[missing]!}' that options.tools lacks`, named[missing])
    })
    const agent = new Agent({ ...options, id: init.agentId, systemPrompt: init.systemPrompt, model: init.model, messages: init.messages })
    agent.store.load(entries)
    const state = agent.store.state
    for (const model of state.availableModels) if (!agent.routes.some((r) => sameModel(r.model, model))) agent.routes.push({ model, streamFn: agent.options.streamFn })
    agent.streamFn = agent.routes.find((r) => sameModel(r.model, state.model))?.streamFn ?? agent.options.streamFn
    agent.runs.count = entries.filter((e) => e.type === 'runStart').length
    let boundary = 0
    entries.forEach((e, i) => {
      if (e.type === 'turnEnd' || e.type === 'runStart' || e.type === 'agentEnd' || e.type === 'reset') boundary = i
    })
    if (state.isRunning) {
      agent.store.append({ type: 'runFailed', error: 'interrupted: the log ends in the middle of a run', settleReason: 'the run was interrupted before its result was recorded' })
    }
    agent.boundary.mark(boundary, agent.state.messages)
    return agent
  }

  /** The current snapshot. */
  get state(): AgentState {
    return this.store.state
  }

  /** The log, oldest first: `init`, then every change; an entry's `seq` is its position. `Agent.fromLog(agent.log, options)` rebuilds this agent. */
  get log(): readonly AgentLogEntry[] {
    return this.store.log
  }

  get isRunning(): boolean {
    return this.runs.current !== undefined
  }

  // --- Runs ---------------------------------------------------------------

  /**
   * Starts a run with `input` (and `images`, added to a text prompt). Throws {@link AgentBusyError} while a run is in progress, unless `whileRunning: 'followUp'`.
   *
   * @throws InvalidInputError naming the path of a bad prompt (`prompt.content`); see {@link PromptInput} for what is accepted.
   */
  prompt(input: PromptInput, images: readonly ImageContent[] = [], call: CallOptions = {}): AgentRun {
    const messages = decodePrompts(input, 'Agent.prompt', this.scheduler.now(), images)
    const current = this.runs.current
    if (current !== undefined) {
      if (this.options.whileRunning === 'followUp') {
        for (const message of messages) this.store.append({ type: 'enqueue', queue: 'followUp', message })
        return current.handle
      }
      throw new AgentBusyError(`agent ${this.id} is already running (${current.runId}): use steer() or followUp(), await waitForIdle(), or set whileRunning: 'followUp'`)
    }
    return this.runs.start((context, config) => agentLoop(messages, context, config), call, messages)
  }

  /**
   * Continues the transcript without a new prompt: queued steering messages
   * (or, when the model had the last word, queued follow-ups) open the run;
   * otherwise the model answers the last user or tool-result message.
   */
  continue(call: CallOptions = {}): AgentRun {
    this.notRunning()
    const steering = this.runs.take('steering')
    if (steering.length > 0) return this.runs.start((context, config) => agentLoop(steering, context, config), call, steering)
    const messages = this.state.messages
    let last = messages.length - 1
    while (last >= 0 && messages[last]!.role === 'custom') last--
    if (messages[last]?.role === 'assistant') {
      const followUps = this.runs.take('followUp')
      if (followUps.length === 0) throw new Error(`agent ${this.id}: nothing to continue — the model had the last word and no steering or follow-up is queued`)
      return this.runs.start((context, config) => agentLoop(followUps, context, config), call, followUps)
    }
    return this.runs.start((context, config) => agentLoopContinue(context, config), call, [])
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
    this.notRunning()
    const host = { now: () => this.scheduler.now(), model: this.state.model, nativeStructuredOutput: this.options.nativeStructuredOutput, start: this.runs.start }
    return structuredRun(host, codec, input, options)
  }

  /** Aborts the current run gracefully (the partial answer is kept, every tool call answered); resolves when idle. */
  abort(): Promise<void> {
    this.runs.current?.abort()
    return this.waitForIdle()
  }

  /** Resolves when no run is in progress (at once if none is). */
  waitForIdle(): Promise<void> {
    const active = this.runs.current
    if (active === undefined) return Promise.resolve()
    return active.result.then(
      () => undefined,
      () => undefined,
    )
  }

  /** Aborts any run and forgets the transcript, the queues, the pending approvals and the last error. */
  reset(): void {
    // Whoever awaits the run is told how it ended rather than left waiting.
    this.runs.reset()
    this.store.append({ type: 'reset' })
    this.boundary.mark(this.log.length - 1, [])
  }

  /**
   * Decides a tool call waiting for approval (one of `state.pendingApprovals`);
   * the run goes on with the decision. `false` when no call with this id
   * waits: unknown, or decided already (by `approveTool`, which answered first).
   */
  resolveApproval(toolCallId: string, decision: ApprovalDecision): boolean {
    return this.approvals.resolve(toolCallId, decision)
  }

  // --- Queues -------------------------------------------------------------

  /** Queues a message that redirects the agent while it works (delivered after the current tool batch). @throws InvalidInputError for a bad message. */
  steer(message: string | AgentMessageInput): void {
    this.store.append({ type: 'enqueue', queue: 'steering', message: decodeMessage(message, 'Agent.steer', this.scheduler.now()) })
  }

  /** Queues a message that continues the run when it would otherwise end. @throws InvalidInputError for a bad message. */
  followUp(message: string | AgentMessageInput): void {
    this.store.append({ type: 'enqueue', queue: 'followUp', message: decodeMessage(message, 'Agent.followUp', this.scheduler.now()) })
  }

  /** What is queued, oldest first. */
  get pendingSteering(): readonly AgentMessage[] {
    return this.state.steeringQueue
  }

  get pendingFollowUps(): readonly AgentMessage[] {
    return this.state.followUpQueue
  }

  clearSteering(): void {
    if (this.state.steeringQueue.length > 0) this.store.append({ type: 'clearQueue', queue: 'steering' })
  }

  clearFollowUps(): void {
    if (this.state.followUpQueue.length > 0) this.store.append({ type: 'clearQueue', queue: 'followUp' })
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
          this.runs.emitOwn({ type: 'listenerError', listener: `feed(${queue})`, error: errorText(error), eventType: 'feed' })
        }
      },
      error: (error: unknown) => this.runs.emitOwn({ type: 'listenerError', listener: `${queue} feed`, error: errorText(error), eventType: 'feed' }),
    })
  }

  // --- Model, tools, modes ------------------------------------------------

  /** Switches to `route` (or a model served by the agent's stream function) for the next run. */
  setModel(model: ModelSpec | ModelRoute): void {
    const route = 'streamFn' in model ? model : (this.routes.find((r) => sameModel(r.model, model)) ?? { model, streamFn: this.streamFn })
    const from = this.state.model
    this.streamFn = route.streamFn
    if (!this.routes.some((r) => sameModel(r.model, route.model))) this.routes.push(route)
    if (route.model !== from || !this.state.availableModels.some((m) => sameModel(m, route.model))) this.store.append({ type: 'model', model: route.model })
    if (!sameModel(from, route.model)) this.runs.emitOwn({ type: 'modelChange', from, to: route.model })
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
    this.store.know(tools)
    this.store.append({ type: 'tools', tools: tools.map((x) => x.name) })
  }

  setSystemPrompt(systemPrompt: string): void {
    this.store.append({ type: 'systemPrompt', systemPrompt })
  }

  /** Plan mode: only tools that need no approval are offered, and the plan-mode addendum joins the system prompt. */
  enterPlanMode(): void {
    if (!this.state.planMode) this.store.append({ type: 'planMode', on: true })
  }

  exitPlanMode(): void {
    if (this.state.planMode) this.store.append({ type: 'planMode', on: false })
  }

  // --- Listeners ----------------------------------------------------------

  /** Calls `listener` with every event. A listener that throws is reported (a `listenerError` event) and never breaks the run or the others. */
  subscribe(listener: (event: AgentRunEvent) => void, name?: string): Subscription {
    return this.hub.subscribe(listener, name)
  }

  /** Adds a forwarder (a log, a socket): like a listener, for the agent's whole life. */
  addForwarder(forward: (event: AgentRunEvent) => void): Subscription {
    return this.hub.subscribe(forward, this.hub.nextForwarderName())
  }

  // --- Checkpoints --------------------------------------------------------

  /**
   * A checkpoint of the agent as of the last completed turn (mid-run: the
   * turn in progress is not in it and is redone on `continue()`), saved to
   * the store when one is configured. Its `position` is that turn's place in
   * the log (`agent.log`).
   */
  async checkpoint(metadata?: Record<string, unknown>): Promise<Checkpoint> {
    const seq = ++this.checkpointSeq
    const running = this.runs.current !== undefined
    const state = this.state
    const checkpoint: Checkpoint = {
      version: CHECKPOINT_FORMAT,
      id: `${this.id}:${seq}`,
      agentId: this.id,
      seq,
      createdAt: this.scheduler.now(),
      systemPrompt: state.systemPrompt,
      model: state.model,
      ...this.boundary.contents(running, state),
      planMode: state.planMode,
      position: running ? this.boundary.position : this.log.length - 1,
      ...(metadata === undefined ? {} : { metadata }),
    }
    await this.options.checkpointStore?.save(checkpoint)
    return checkpoint
  }

  // --- Internals ----------------------------------------------------------

  private notRunning(): void {
    const current = this.runs.current
    if (current !== undefined) throw new AgentBusyError(`agent ${this.id} is already running (${current.runId})`)
  }

  private configOf(call: CallOptions, signal: AbortSignal): AgentLoopConfig {
    const { options, scheduler, transform, recover, approvals } = this
    const steering = () => this.runs.take('steering')
    const followUp = () => this.runs.take('followUp')
    return loopConfigOf({ options, call, model: this.state.model, streamFn: this.streamFn, signal, scheduler, steering, followUp, transform, recover, approvals })
  }
}
