/**
 * `Agent`: one object that holds a conversation — an append-only log of
 * what happened to it (`agent-log.ts`), whose fold is its state
 * (`agent-reducer.ts`). It runs `agentLoop` (no second loop), logs what its
 * events change, multicasts them, and logs every command (prompt, steer,
 * model change, plan mode, approvals, reset). This file holds the commands
 * (those of the queues: `agent-queues.ts`); `agent-core.ts` wires the parts that live beside it: the store of the log
 * and its fold, the runs and their replay, the listener hub, the loop
 * configuration, approvals, structured output, plan mode, checkpoints.
 */
import { asyncScheduler } from 'rxjs'
import * as t from 'io-ts'
import { agentLoop, agentLoopContinue, isCutOff } from '../loop/agent-loop.js'
import type { ApprovalDecision } from '../policy/approval.js'
import type { ImageContent } from '../types/content.js'
import { decodeInput, decodePrompts, type PromptInput } from '../types/input.js'
import type { ModelSpec } from '../types/model.js'
import type { ModelRoute } from '../types/run-config.js'
import { AgentTools, type AgentTool } from '../types/tool.js'
import { AgentQueues } from './agent-queues.js'
import { AgentBusyError, type AgentOptions, type AgentRun, type CallOptions, type StructuredOptions, type StructuredRun } from './agent-options.js'
import { sameModel } from './agent-reducer.js'
import { decodeCheckpoint, type Checkpoint } from './checkpoint.js'
import { INTERRUPTED, logReplayOf, type LogReplay } from './log-replay.js'
import { openSession, type AgentOpenOptions, type SessionParts } from './session-open.js'
import type { ReplayGate } from './session-replay.js'
import { structuredRun } from './structured-output.js'

export { AgentBusyError, DEFAULT_AGENT_TOOL_CONCURRENCY, StructuredOutputError } from './agent-options.js'
export type { AgentOptions, AgentRun, ApprovalMode, CallOptions, StructuredOptions, StructuredRun } from './agent-options.js'
export { DEFAULT_PLAN_MODE_ADDENDUM } from './plan-mode.js'
export type { PromptInput } from '../types/input.js'

/** What `Agent.restore` and `Agent.fromLog` take: the options, less what the saved agent says. */
export type RestoreOptions = Omit<AgentOptions, 'messages' | 'id' | 'systemPrompt' | 'model'> & { readonly id?: string; readonly systemPrompt?: string; readonly model?: ModelSpec }

/**
 * An agent: a conversation, its model and tools, and the runs over it
 * (what it is made of, its state, log, events, listeners and checkpoints
 * come from {@link AgentCore}; the commands are here).
 *
 * ```ts
 * const agent = new Agent({ systemPrompt: 'Be brief.', model, streamFn, tools: [search] })
 * agent.subscribe((e) => e.type === 'messageUpdate' && e.chunk.type === 'textDelta' && process.stdout.write(e.chunk.text))
 * const result = await agent.prompt('What changed in the last release?')
 * ```
 */
export class Agent extends AgentQueues {
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
    const replay = logReplayOf(log, options.tools ?? [], 'Agent.fromLog')
    const agent = Agent.replayed(replay, options)
    if (agent.state.isRunning) agent.store.append(INTERRUPTED)
    agent.boundary.mark(replay.boundary, agent.state)
    return agent
  }

  /**
   * Opens a durable session: restores the agent from the session's log in
   * `options.store` (or starts a new session, whose `init` entry is committed
   * before this resolves), and commits every entry from then on
   * (`agent.session`: how far the log is durable, `flush`, `close`). A run
   * the previous process left in its middle is settled (the partial answer
   * kept as `aborted`, every tool call answered: `continue()` goes on), or,
   * when it was waiting for approvals, kept suspended: `state.pendingApprovals`
   * lists them and `resolveApproval` resumes the run (`waitForIdle()` awaits
   * it, `events$` streams it). One process writes a session at a time: see
   * `lease` in {@link AgentOpenOptions}. Call `agent.session.close()` when done:
   * the lease is renewed on the scheduler until then.
   *
   * @throws InvalidInputError for bad options, or a record that does not decode (naming the session and its position); SessionLeaseError when another holder has the lease; the store's error when it cannot be read or written.
   */
  static open(options: AgentOpenOptions): Promise<Agent> {
    return openSession(options, Agent.sessionBuilder)
  }

  /**
   * @internal For durable-execution engines (`rxagent/dbos`): opens a session
   * to execute a run again from its start (`gate.startSeq`), checking what it
   * logs against what the log already holds (see `session-replay.ts`).
   */
  static openReplaying(options: AgentOpenOptions, gate: ReplayGate): Promise<Agent> {
    return openSession(options, Agent.sessionBuilder, gate)
  }

  private static sessionBuilder(this: void, agentOptions: AgentOptions, replay: LogReplay | undefined): SessionParts<Agent> {
    return (replay === undefined ? new Agent(agentOptions) : Agent.replayed(replay, agentOptions)).sessionParts(replay)
  }

  /** The agent a decoded log folds to (its last run, if unfinished, left as it is). */
  private static replayed(replay: LogReplay, options: Omit<RestoreOptions, 'id' | 'systemPrompt' | 'model'>): Agent {
    const { init } = replay
    const agent = new Agent({ ...options, id: init.agentId, systemPrompt: init.systemPrompt, model: init.model, messages: init.messages })
    agent.load(replay)
    return agent
  }

  // --- Runs ---------------------------------------------------------------

  /**
   * Starts a run with `input` (and `images`, added to a text prompt). Throws {@link AgentBusyError} while a run is in progress, unless `whileRunning: 'followUp'`.
   *
   * @throws InvalidInputError naming the path of a bad prompt (`prompt.content`); see {@link PromptInput} for what is accepted.
   */
  prompt(input: PromptInput, images: readonly ImageContent[] = [], call: CallOptions = {}): AgentRun {
    const messages = decodePrompts(input, 'Agent.prompt', this.scheduler.now(), images)
    this.writable()
    const current = this.runs.current
    if (current !== undefined) {
      if (this.options.whileRunning === 'followUp') {
        for (const message of messages) this.store.append({ type: 'enqueue', queue: 'followUp', message })
        return current.handle
      }
      throw new AgentBusyError(`agent ${this.id} is already running (${current.runId}): use steer() or followUp(), await waitForIdle(), or set whileRunning: 'followUp'`)
    }
    this.notSuspended()
    return this.runs.start((context, config) => agentLoop(messages, context, config), call, messages)
  }

  /**
   * Continues the transcript without a new prompt: queued steering messages
   * (or, when the model had the last word, queued follow-ups) open the run;
   * otherwise the model answers the last user or tool-result message, or
   * answers again after an answer cut off (`aborted`, `error`: an abort, a
   * session reopened after a crash).
   */
  continue(call: CallOptions = {}): AgentRun {
    this.writable()
    this.notRunning()
    this.notSuspended()
    const steering = this.runs.take('steering')
    if (steering.length > 0) return this.runs.start((context, config) => agentLoop(steering, context, config), call, steering)
    const messages = this.state.messages
    let last = messages.length - 1
    while (last >= 0 && messages[last]!.role === 'custom') last--
    const lastMessage = messages[last]
    if (lastMessage?.role === 'assistant' && !(isCutOff(lastMessage) && this.state.followUpQueue.length === 0)) {
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
    this.writable()
    this.notRunning()
    this.notSuspended()
    const host = { now: () => this.scheduler.now(), model: this.state.model, nativeStructuredOutput: this.options.nativeStructuredOutput, start: this.runs.start }
    return structuredRun(host, codec, input, options)
  }

  /**
   * Aborts the current run gracefully (the partial answer is kept, every tool
   * call answered); resolves when idle. A suspended run (waiting for
   * approvals in a reopened session) is given up: its calls get error results.
   */
  abort(): Promise<void> {
    this.abortSuspended()
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
    this.writable()
    // Whoever awaits the run is told how it ended rather than left waiting.
    this.runs.reset()
    this.store.append({ type: 'reset' })
    this.boundary.mark(this.log.length - 1, { messages: [] })
  }

  /**
   * Decides a tool call waiting for approval (one of `state.pendingApprovals`);
   * the run goes on with the decision. `false` when no call with this id
   * waits: unknown, or decided already (by `approveTool`, which answered first).
   *
   * A suspended run (a reopened session whose run waited for approvals) is
   * resumed once its last pending call is decided: the same run goes on
   * (logged as `runResumed` with its run id; `waitForIdle()` awaits it,
   * `events$` streams it) and dispatches the decided call and the
   * other unanswered calls of that answer (asking again where needed), then
   * goes on to the model. Decide it with the approval mode it was asked with.
   *
   * @throws InvalidInputError for a decision that does not decode (resuming); SessionClosedError when the session was closed.
   */
  resolveApproval(toolCallId: string, decision: ApprovalDecision): boolean {
    this.writable()
    return this.approvals.resolve(toolCallId, decision) || this.resumeSuspended(toolCallId, decision)
  }

  // --- Model, tools, modes ------------------------------------------------

  /** Switches to `route` (or a model served by the agent's stream function) for the next run. */
  setModel(model: ModelSpec | ModelRoute): void {
    this.writable()
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
    this.writable()
    this.store.know(tools)
    this.store.append({ type: 'tools', tools: tools.map((x) => x.name) })
  }

  setSystemPrompt(systemPrompt: string): void {
    this.writable()
    this.store.append({ type: 'systemPrompt', systemPrompt })
  }

  /** Plan mode: only tools that need no approval are offered, and the plan-mode addendum joins the system prompt. */
  enterPlanMode(): void {
    this.writable()
    if (!this.state.planMode) this.store.append({ type: 'planMode', on: true })
  }

  exitPlanMode(): void {
    this.writable()
    if (this.state.planMode) this.store.append({ type: 'planMode', on: false })
  }
}
