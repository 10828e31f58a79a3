/**
 * The runs of an Agent: at most one at a time, each an `ActiveRun` (which
 * logs what each event of its loop changes, emits it to the run's replay and
 * to the agent's listeners, and settles the run's result). The agent's own
 * events are emitted from here, and the queues are taken from here too:
 * what a run drains before its turn completes is remembered for checkpoints.
 */
import type { SchedulerLike } from 'rxjs'
import type { AgentLoopConfig } from '../loop/agent-loop.js'
import type { AgentEvent } from '../types/event.js'
import type { AgentMessage } from '../types/message.js'
import type { AgentResult } from '../types/result.js'
import { emptyCost, emptyUsage } from '../types/usage.js'
import { ActiveRun, type RunHost, type RunOwner } from './active-run.js'
import type { AgentOwnEvent, AgentRunEvent } from './agent-events.js'
import type { AgentRun, CallOptions } from './agent-options.js'
import { stamped } from './event-stamp.js'
import { TurnMeter } from './metrics.js'
import { RunReplay } from './run-replay.js'
import type { RunContext, StartRun } from './structured-output.js'

/** The run in progress, as the Agent sees it. */
export interface RunInProgress {
  readonly runId: string
  readonly handle: AgentRun
  /** Aborts it gracefully (stopReason `aborted`). */
  readonly abort: () => void
  /** Aborts it gracefully because of `error` (a durable session that cannot write): it ends with stopReason `error` and `error`. */
  readonly fail: (error: string) => void
  readonly result: Promise<AgentResult>
}

/** What the runs need of their Agent. */
export interface RunnerHost extends RunHost {
  readonly scheduler: SchedulerLike
  readonly queueMode: (queue: 'steering' | 'followUp') => 'all' | 'oneAtATime' | undefined
  /** The loop configuration of a run (`loop-config.ts`). */
  readonly configOf: (call: CallOptions, signal: AbortSignal) => AgentLoopConfig
  /** What run `runId` starts from. */
  readonly context: (runId: string) => RunContext
}

/** See the module comment. */
export class Runner implements RunOwner {
  /** The run in progress, if any (see {@link current}). */
  active: ActiveRun | undefined = undefined
  /** How many runs this agent started (run ids count from it). */
  count = 0
  turnIndex = 0

  constructor(readonly host: RunnerHost) {}

  /** The run in progress, if any. */
  get current(): RunInProgress | undefined {
    const active = this.active
    return active === undefined
      ? undefined
      : {
          runId: active.runId,
          handle: handleOf(active),
          abort: () => active.abort.abort(),
          fail: (error: string) => {
            active.failure ??= error
            active.abort.abort()
          },
          result: active.result,
        }
  }

  /** Emits an event of the agent's own (a compaction, a model change, a listener error). */
  emitOwn(event: AgentOwnEvent | AgentEvent): void {
    this.emit(this.stampedNow(event))
  }

  /** Takes the oldest queued message (or all, by the queue's mode) for a run. */
  take(queue: 'steering' | 'followUp'): readonly AgentMessage[] {
    const state = this.host.store.state
    const all = queue === 'steering' ? state.steeringQueue : state.followUpQueue
    if (all.length === 0) return []
    const taken = this.host.queueMode(queue) === 'all' ? all : all.slice(0, 1)
    this.host.store.append({ type: 'dequeue', queue, count: taken.length })
    // Delivered into a turn that is not complete yet: a checkpoint must still hold them.
    if (this.active !== undefined) this.host.boundary.drained[queue].push(...taken)
    return taken
  }

  /** Forgets the run in progress: its awaiters are told it ended with `error` (it was reset), its late events are dropped. */
  reset(error = 'the agent was reset'): void {
    const active = this.active
    this.turnIndex = 0
    if (active === undefined) return
    this.active = undefined
    active.abort.abort()
    active.subscription?.unsubscribe()
    active.replay.complete()
    active.resolve({ messages: [], stopReason: 'aborted', usage: emptyUsage, cost: emptyCost, error })
  }

  /** Starts a new run of `loop` with `prompts` (logged as `runStart`). */
  readonly start: StartRun = (loop, call, prompts) => this.begin(loop, call, prompts, undefined)

  /**
   * Goes on with the suspended run `runId` (it waited for approvals and no
   * process ran it): the same run, logged as `runResumed`, not a new one —
   * its loop's `agentStart` is not logged again (see `RunResumedEntry`).
   */
  resume(loop: Parameters<StartRun>[0], runId: string): AgentRun {
    return this.begin(loop, {}, [], runId)
  }

  private begin(loop: Parameters<StartRun>[0], call: CallOptions, prompts: readonly AgentMessage[], resumed: string | undefined): AgentRun {
    const { host } = this
    const runId = resumed ?? `${host.id}/run-${++this.count}`
    const run = new ActiveRun(this, runId, resumed !== undefined, new RunReplay(host.id, runId), new TurnMeter(host.scheduler))
    this.active = run
    this.turnIndex = 0
    host.store.append(resumed === undefined ? { type: 'runStart', runId, prompts } : { type: 'runResumed', runId })
    host.boundary.mark(host.store.log.length - 1, host.store.state)
    host.boundary.prompts = prompts
    // `turnMetrics` done by the run rather than piped: one Observable layer less for every event of the run (with the
    // `observed` guards of the replay and the hub and `end`: agent-text 10k CPU 95 -> 84 ms, agent-tools 200
    // 222 -> 188 ms, medians of 7 and 5 A/B rounds of bench/worker.mjs; most of it is `end`).
    run.subscription = loop(host.context(runId), host.configOf(call, run.abort.signal)).subscribe(run)
    if (run.failed) run.subscription.unsubscribe()
    return handleOf(run)
  }

  /** See `RunOwner.finish`. */
  finish(run: ActiveRun): void {
    if (this.active === run) this.active = undefined
  }

  private stampedNow(event: AgentEvent | AgentOwnEvent): AgentRunEvent {
    return stamped(event, this.host.id, this.active?.runId ?? null, this.turnIndex)
  }

  private emit(event: AgentRunEvent): void {
    this.active?.replay.next(event)
    this.host.hub.emit(event)
  }
}

function handleOf(active: ActiveRun): AgentRun {
  return {
    runId: active.runId,
    events$: active.replay.events$,
    result: active.result,
    // eslint-disable-next-line unicorn/no-thenable -- an AgentRun is awaitable on purpose
    then: (onFulfilled, onRejected) => active.result.then(onFulfilled, onRejected),
  }
}
