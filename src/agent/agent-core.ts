/**
 * What every Agent is made of: its log and the fold of it (the store), its
 * runs, its listeners, its approvals, its models and its context management,
 * wired together; the state, the log and the events it exposes; listeners
 * and checkpoints. `Agent` (agent.ts) adds the commands.
 */
import { asyncScheduler, type Observable, type SchedulerLike, type Subscription } from 'rxjs'
import type { AgentLoopConfig } from '../loop/agent-loop.js'
import { validTranscript } from '../types/settle.js'
import type { AgentRunEvent } from './agent-events.js'
import { AGENT_LOG_FORMAT, type AgentLogEntry } from './agent-log.js'
import { AgentBusyError, decodeAgentOptions, type AgentOptions, type CallOptions } from './agent-options.js'
import type { AgentState } from './agent-state.js'
import { agentLoopResume } from '../loop/agent-loop-resume.js'
import type { ApprovalDecision } from '../policy/approval.js'
import { decodeInput } from '../types/input.js'
import { ApprovalDecisionCodec } from './agent-log.js'
import type { AgentSession } from './agent-session.js'
import { SUSPENDED_ABORTED, type LogReplay } from './log-replay.js'
import type { SessionParts } from './session-open.js'
import { AgentStore } from './agent-store.js'
import { Runner } from './agent-run.js'
import { Approvals, normalized } from './approvals.js'
import { RunBoundary, type Checkpoint } from './checkpoint.js'
import { ListenerHub } from './listener-hub.js'
import { contextManagementOf, loopConfigOf, type ContextManagement } from './loop-config.js'
import { ModelRoutes } from './model-routes.js'
import { runContextOf } from './plan-mode.js'
import type { RunContext } from './structured-output.js'
import { isSubAgentFollower, withSubAgentParent, type SubAgentFollower } from './sub-agent.js'

let agentCount = 0
const noop = (): void => undefined

/** See the module comment; an `Agent` is what apps hold. */
export abstract class AgentCore {
  readonly id: string
  protected readonly options: AgentOptions
  protected readonly scheduler: SchedulerLike
  protected readonly store: AgentStore
  protected readonly hub: ListenerHub
  protected readonly approvals: Approvals
  protected readonly boundary = new RunBoundary()
  protected readonly runs: Runner
  protected readonly models: ModelRoutes
  protected checkpointSeq = 0
  /** The durable session, for an agent made by `Agent.open`. */
  protected sessionOf: AgentSession | undefined
  protected readonly context: ContextManagement
  /** The forwarders that follow sub-agents (`SubAgentFollower`): the sub-agent tools of a run are told them. */
  private readonly followers = new Set<SubAgentFollower>()

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
    // The decoded transcript is frozen (see `decodeAgentOptions`): the array checked here is the one the state keeps.
    const messages = validTranscript(options.messages ?? [], options.invalidTranscript)
    const tools = options.tools ?? []
    this.store = new AgentStore(
      { type: 'init', version: AGENT_LOG_FORMAT, agentId: this.id, systemPrompt: options.systemPrompt, model: options.model, availableModels: this.models.models, tools: tools.map((x) => x.name), messages },
      tools,
      this.scheduler,
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
      context: (runId) => this.runContext(runId),
    })
    this.events$ = this.hub.events$
    this.approvals = new Approvals(
      (command) => this.store.append(command),
      () => this.sessionOf?.durable$,
    )
    this.context = contextManagementOf(options, (event) => this.runs.emitOwn(event))
    // A restored history is estimated here, once, as it is checked here: the first run then estimates only its own messages.
    try {
      this.context.window?.compact(this.state.messages)
    } catch {
      // A throwing `contextWindow.estimate` is the user's: the first run meets it again and reports it as that run's error.
    }
    for (const [i, forward] of (options.forwarders ?? []).entries()) this.forwardTo(forward, `forwarder ${i + 1}`)
  }

  /** The current snapshot. */
  get state(): AgentState {
    return this.store.state
  }

  /** The log, oldest first: `init`, then every change; an entry's `seq` is its position. `Agent.fromLog(agent.log, options)` rebuilds this agent. */
  get log(): readonly AgentLogEntry[] {
    return this.store.log
  }

  /**
   * The durable session this agent's log is committed to (`Agent.open`);
   * `undefined` for an agent made with `new Agent`, `restore` or `fromLog`.
   */
  get session(): AgentSession | undefined {
    return this.sessionOf
  }

  get isRunning(): boolean {
    return this.runs.current !== undefined
  }

  // --- Listeners ----------------------------------------------------------

  /** Calls `listener` with every event. A listener that throws is reported (a `listenerError` event) and never breaks the run or the others. */
  subscribe(listener: (event: AgentRunEvent) => void, name?: string): Subscription {
    return this.hub.subscribe(listener, name)
  }

  /** Adds a forwarder (a log, a socket): like a listener, for the agent's whole life. */
  addForwarder(forward: (event: AgentRunEvent) => void): Subscription {
    return this.forwardTo(forward, this.hub.nextForwarderName())
  }

  /** Subscribes a forwarder; one that follows sub-agents is told the sub-agent runs of this agent's runs while it is subscribed. */
  private forwardTo(forward: (event: AgentRunEvent) => void, name: string): Subscription {
    const subscription = this.hub.subscribe(forward, name)
    if (isSubAgentFollower(forward)) {
      this.followers.add(forward)
      subscription.add(() => this.followers.delete(forward))
    }
    return subscription
  }

  /** What run `runId` starts from; its sub-agent tools are told their parent run when a forwarder follows sub-agents. */
  private runContext(runId: string): RunContext {
    const context = runContextOf(this.state, this.options.planModeAddendum)
    if (this.followers.size === 0) return context
    return { ...context, tools: withSubAgentParent(context.tools, { agentId: this.id, runId, followers: this.followers }) }
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

  /** @throws SessionClosedError when the agent's session was closed or can no longer be written. */
  protected writable(): void {
    this.sessionOf?.assertWritable()
  }

  /** Takes the state a decoded log folds to (its last run, if unfinished, left as it is). */
  protected load(replay: LogReplay): void {
    this.store.load(replay.entries)
    this.models.adopt(this.state.availableModels, this.state.model)
    this.runs.count = replay.runs
  }

  /** What `Agent.open` needs of this agent (see `session-open.ts`). */
  protected sessionParts(replay: LogReplay | undefined): SessionParts<this> {
    return {
      agent: this,
      store: this.store,
      runs: this.runs,
      scheduler: this.scheduler,
      settled: () => this.boundary.mark(replay?.boundary ?? 0, this.state),
      attach: (session) => (this.sessionOf = session),
      abort: () => {
        this.runs.current?.abort()
        return this.runs.current?.result.then(noop, noop) ?? Promise.resolve()
      },
    }
  }

  /**
   * A decision for a call of a suspended run (see `notSuspended`): logged;
   * once no call waits any more, the run goes on (`runResumed`, same run id,
   * `agentLoopResume`), its gate answering the logged decisions. `false`
   * when no such call waits.
   */
  protected resumeSuspended(toolCallId: string, decision: ApprovalDecision): boolean {
    if (this.runs.current !== undefined || !this.state.pendingApprovals.some((p) => p.toolCallId === toolCallId)) return false
    const decided = normalized(decodeInput(ApprovalDecisionCodec, decision, 'Agent.resolveApproval', 'decision'))
    this.store.append({ type: 'approvalDecided', toolCallId, decision: decided, by: 'resolveApproval' })
    if (this.state.pendingApprovals.length > 0) return true
    // Every decision logged since the suspended run started or last resumed (some maybe by a process that stopped since), for its gate.
    const log = this.store.log
    // The turn it was suspended in: the resumed turn keeps its number, so that `maxTurns` counts the run's turns across the suspension.
    let turnIndex: number | undefined
    let i = log.length - 1
    for (; i >= 0 && log[i]!.type !== 'runStart' && log[i]!.type !== 'runResumed'; i--) {
      const entry = log[i]!
      if (entry.type === 'approvalDecided') this.approvals.predecide(entry.toolCallId, entry.decision, entry.seq)
      else if (entry.type === 'turnStart') turnIndex ??= entry.turnIndex
    }
    const suspended = log[i]
    const loop = (context: RunContext, config: AgentLoopConfig) => agentLoopResume(context, config, { turnIndex: turnIndex ?? 0 })
    // The same run goes on (`runResumed`): the log keeps one start and one end per run.
    if (suspended?.type === 'runStart' || suspended?.type === 'runResumed') this.runs.resume(loop, suspended.runId)
    else this.runs.start(loop, {}, [])
    return true
  }

  /** Gives a suspended run up: its unanswered calls get error results (logged, unless the session can no longer be written: then it stays in the log for the next opener). */
  protected abortSuspended(): void {
    if (this.runs.current !== undefined || this.state.pendingApprovals.length === 0) return
    try {
      this.writable()
    } catch {
      return
    }
    this.store.append(SUSPENDED_ABORTED)
  }

  /** @throws Error when a run is suspended: it waits for approvals and no process runs it (a reopened session). */
  protected notSuspended(): void {
    const pending = this.state.pendingApprovals
    if (pending.length > 0 && this.runs.current === undefined) {
      throw new Error(`agent ${this.id}: a run waits for approval of ${pending.map((p) => `'${p.toolCallId}' (${p.toolName})`).join(', ')}: decide with resolveApproval(), or abort() to give the run up`)
    }
  }

  protected notRunning(): void {
    const current = this.runs.current
    if (current !== undefined) throw new AgentBusyError(`agent ${this.id} is already running (${current.runId})`)
  }

  private configOf(call: CallOptions, signal: AbortSignal): AgentLoopConfig {
    const { options, scheduler, approvals } = this
    const { transform, recover } = this.context
    // Bound methods, not arrows made per run: an arrow made per run held the only strong reference
    // to its optimized code, which a full GC between runs threw away (see `resident`).
    const steering = this.runs.take.bind(this.runs, 'steering')
    const followUp = this.runs.take.bind(this.runs, 'followUp')
    return loopConfigOf({ options, call, model: this.state.model, streamFn: this.models.streamFn, signal, scheduler, steering, followUp, transform, recover, approvals })
  }
}
