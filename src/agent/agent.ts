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
import type { ModelRoute } from '../types/run-config.js'
import type { ApprovalDecision } from '../policy/approval.js'
import { errorText } from '../types/codec.js'
import type { ImageContent } from '../types/content.js'
import type { AgentMessage } from '../types/message.js'
import { decodeInput, decodeMessage, decodePrompts, type AgentMessageInput, type PromptInput } from '../types/input.js'
import { validTranscript } from '../types/settle.js'
import type { ModelSpec } from '../types/model.js'
import { AgentTools, type AgentTool } from '../types/tool.js'
import type { AgentRunEvent } from './agent-events.js'
import { AGENT_LOG_FORMAT, type AgentLogEntry } from './agent-log.js'
import { INTERRUPTED, logReplayOf } from './log-replay.js'
import { ModelRoutes } from './model-routes.js'
import { AgentBusyError, decodeAgentOptions, type AgentOptions, type AgentRun, type CallOptions, type StructuredOptions, type StructuredRun } from './agent-options.js'
import { sameModel } from './agent-reducer.js'
import type { AgentState } from './agent-state.js'
import { AgentStore } from './agent-store.js'
import { Approvals } from './approvals.js'
import { decodeCheckpoint, RunBoundary, type Checkpoint } from './checkpoint.js'
import { ListenerHub } from './listener-hub.js'
import { contextManagementOf, loopConfigOf, type ContextManagement } from './loop-config.js'
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
  private readonly models: ModelRoutes
  private checkpointSeq = 0
  private readonly context: ContextManagement

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
    options = decodeAgentOptions(options, this.scheduler.now())
    this.options = options
    this.id = options.id ?? `agent-${++agentCount}`
    this.models = new ModelRoutes(options.model, options.streamFn, options.availableModels)
    // After any decoding: a transcript breaking the tool-call invariants would make every request fail.
    const messages = validTranscript(options.messages ?? [], options.invalidTranscript)
    const tools = options.tools ?? []
    this.store = new AgentStore(
      { type: 'init', version: AGENT_LOG_FORMAT, agentId: this.id, systemPrompt: options.systemPrompt, model: options.model, availableModels: this.models.models, tools: tools.map((x) => x.name), messages },
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
    this.context = contextManagementOf(options, (event) => this.runs.emitOwn(event))
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
    const { entries, init, runs, boundary } = logReplayOf(log, options.tools ?? [], 'Agent.fromLog')
    const agent = new Agent({ ...options, id: init.agentId, systemPrompt: init.systemPrompt, model: init.model, messages: init.messages })
    agent.store.load(entries)
    agent.models.adopt(agent.state.availableModels, agent.state.model)
    agent.runs.count = runs
    if (agent.state.isRunning) agent.store.append(INTERRUPTED)
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
    const from = this.state.model
    const route = this.models.select(model)
    if (route.model !== from || !this.state.availableModels.some((m) => sameModel(m, route.model))) this.store.append({ type: 'model', model: route.model })
    if (!sameModel(from, route.model)) this.runs.emitOwn({ type: 'modelChange', from, to: route.model })
  }

  /** The next (or previous) of the available models. */
  cycleModel(direction: 1 | -1 = 1): ModelSpec {
    const next = this.models.next(this.state.model, direction)
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
    const checkpoint = this.boundary.checkpoint(this.id, ++this.checkpointSeq, this.scheduler.now(), this.runs.current !== undefined, this.state, this.log.length - 1, metadata)
    await this.options.checkpointStore?.save(checkpoint)
    return checkpoint
  }

  // --- Internals ----------------------------------------------------------

  private notRunning(): void {
    const current = this.runs.current
    if (current !== undefined) throw new AgentBusyError(`agent ${this.id} is already running (${current.runId})`)
  }

  private configOf(call: CallOptions, signal: AbortSignal): AgentLoopConfig {
    const { options, scheduler, approvals } = this
    const { transform, recover } = this.context
    const steering = () => this.runs.take('steering')
    const followUp = () => this.runs.take('followUp')
    return loopConfigOf({ options, call, model: this.state.model, streamFn: this.models.streamFn, signal, scheduler, steering, followUp, transform, recover, approvals })
  }
}
