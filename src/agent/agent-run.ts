/**
 * The runs of an Agent: at most one at a time. A run subscribes to its loop,
 * logs what each event changes (`AgentStore.record`), stamps the event and
 * emits it to the run's replay and to the agent's listeners, and settles the
 * run's result. The queues are taken from here too: what a run drains before
 * its turn completes is remembered for checkpoints.
 */
import type { SchedulerLike, Subscription } from 'rxjs'
import type { AgentLoopConfig } from '../loop/agent-loop.js'
import { errorText } from '../types/codec.js'
import type { AgentEndEvent, AgentEvent, MessageUpdateEvent } from '../types/event.js'
import type { AgentMessage } from '../types/message.js'
import type { AgentResult } from '../types/result.js'
import { emptyCost, emptyUsage } from '../types/usage.js'
import type { AgentOwnEvent, AgentRunEvent, EventStamp, TurnMetricsEvent } from './agent-events.js'
import type { AgentRun, CallOptions } from './agent-options.js'
import type { AgentStore } from './agent-store.js'
import type { RunBoundary } from './checkpoint.js'
import type { ListenerHub } from './listener-hub.js'
import { TurnMeter, type MetricsCollector } from './metrics.js'
import { RunReplay } from './run-replay.js'
import type { RunContext, StartRun } from './structured-output.js'

interface ActiveRun {
  readonly runId: string
  readonly abort: AbortController
  readonly replay: RunReplay
  readonly result: Promise<AgentResult>
  readonly resolve: (result: AgentResult) => void
  subscription?: Subscription
  /** Set by `fail`: the run was aborted because of this, and ends with stopReason `error` saying it. */
  failure?: string
}

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
export interface RunnerHost {
  readonly id: string
  readonly scheduler: SchedulerLike
  readonly store: AgentStore
  readonly hub: ListenerHub
  readonly boundary: RunBoundary
  readonly metrics: MetricsCollector | undefined
  readonly queueMode: (queue: 'steering' | 'followUp') => 'all' | 'oneAtATime' | undefined
  /** The loop configuration of a run (`loop-config.ts`). */
  readonly configOf: (call: CallOptions, signal: AbortSignal) => AgentLoopConfig
  /** What run `runId` starts from. */
  readonly context: (runId: string) => RunContext
}

/** See the module comment. */
export class Runner {
  private active: ActiveRun | undefined
  /** How many runs this agent started (run ids count from it). */
  count = 0
  private turnIndex = 0

  constructor(private readonly host: RunnerHost) {}

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
    const abort = new AbortController()
    const replay = new RunReplay()
    let settle!: { resolve: (r: AgentResult) => void; reject: (e: unknown) => void }
    const result = new Promise<AgentResult>((resolve, reject) => (settle = { resolve, reject }))
    // An unawaited run must not turn its failure into an unhandled rejection.
    result.catch(() => undefined)
    const active: ActiveRun = { runId, abort, replay, result, resolve: (r) => settle.resolve(r) }
    this.active = active
    this.turnIndex = 0
    host.store.append(resumed === undefined ? { type: 'runStart', runId, prompts } : { type: 'runResumed', runId })
    host.boundary.mark(host.store.log.length - 1, host.store.state)
    host.boundary.prompts = prompts
    const finish = (): void => {
      if (this.active === active) this.active = undefined
    }
    let failed = false
    /** Ends the run with `error`; the transcript is settled so that every tool call has its result. */
    const fail = (error: Error): void => {
      failed = true
      active.subscription?.unsubscribe()
      finish()
      host.store.append({ type: 'runFailed', error: error.message, settleReason: `its result could not be recorded (${error.message})` })
      replay.error(error)
      settle.reject(error)
    }
    const handle = (loopEvent: AgentEvent | TurnMetricsEvent): void => {
      // After reset() the run is forgotten: what its teardown still emits (say, a
      // synchronous run ending at once on the abort) must not reach the fresh state.
      if (this.active !== active) return
      if (loopEvent.type !== 'messageUpdate') return other(loopEvent)
      try {
        host.store.record(loopEvent)
      } catch (error) {
        return fail(new Error(`the agent could not record '${loopEvent.type}' in its state: ${errorText(error)}`))
      }
      // The stamp's fields passed as they are: no stamp object per delta.
      this.emit(stamped(loopEvent, host.id, this.active?.runId ?? null, this.turnIndex))
    }
    /**
     * Every event but a delta, out of `handle`: in a run of one long answer these come once
     * (or never) between the deltas, their type feedback was gone after a full GC between runs,
     * and, inlined in `handle`, they threw its optimized code away at the answer's end
     * (with the same split in `AgentStore.record` and `TurnMeter.see`: agent-text 10k CPU
     * 111 -> 99 ms, agent-long 5k 90 -> 73 ms, medians of 7 and 5 A/B rounds of bench/worker.mjs).
     */
    const other = (loopEvent: Exclude<AgentEvent, MessageUpdateEvent> | TurnMetricsEvent): void => {
      if (loopEvent.type === 'agentEnd') return end(loopEvent)
      const event = loopEvent
      if (event.type === 'turnStart') this.turnIndex = event.turnIndex
      if (event.type === 'turnMetrics') {
        const metrics = host.metrics
        if (metrics !== undefined) host.hub.call('metrics collector', () => metrics.onTurn(event.metrics), this.stampedNow(event))
      } else if (resumed === undefined || event.type !== 'agentStart') {
        try {
          host.store.record(event)
        } catch (error) {
          // Data the state cannot hold (a tool's hostile `details`): the run ends with an error
          // naming the event, never an exception out of this subscriber.
          return fail(new Error(`the agent could not record '${event.type}' in its state: ${errorText(error)}`))
        }
      }
      if (event.type === 'turnEnd') host.boundary.mark(host.store.log.length - 1, host.store.state)
      this.emit(stamped(event, host.id, this.active?.runId ?? null, this.turnIndex))
      if (event.type === 'turnEnd') handle(meter.turnEnded(event))
    }
    /**
     * The run's `agentEnd`, out of `handle`: code met once per run, inlined in the per-event path,
     * found its type feedback gone after a full GC between runs and threw `handle`'s optimized code
     * away at every run's end (`--trace-deopt`), so that each run ran it unoptimized for a while.
     */
    const end = (loopEvent: AgentEndEvent): void => {
      const event = active.failure !== undefined ? failedEnd(loopEvent.result, active.failure) : loopEvent
      try {
        host.store.record(event)
      } catch (error) {
        return fail(new Error(`the agent could not record '${event.type}' in its state: ${errorText(error)}`))
      }
      host.boundary.mark(host.store.log.length - 1, host.store.state)
      finish()
      this.emit(stamped(event, host.id, runId, this.turnIndex), active)
      settle.resolve(event.result)
    }
    // `turnMetrics` done here rather than piped: one Observable layer less for every event of the run (with the
    // `observed` guards of the replay and the hub and `end` below: agent-text 10k CPU 95 -> 84 ms, agent-tools 200
    // 222 -> 188 ms, medians of 7 and 5 A/B rounds of bench/worker.mjs; most of it is `end`).
    const meter = new TurnMeter(host.scheduler)
    active.subscription = loop(host.context(runId), host.configOf(call, abort.signal)).subscribe({
      next: (loopEvent) => {
        meter.see(loopEvent)
        // A `turnEnd` is followed by its `turnMetrics` (in `other`).
        handle(loopEvent)
      },
      error: (error: unknown) => {
        finish()
        host.store.append({ type: 'runFailed', error: errorText(error) })
        replay.error(error)
        settle.reject(error)
      },
      complete: () => {
        finish()
        replay.complete()
      },
    })
    if (failed) active.subscription.unsubscribe()
    return handleOf(active)
  }

  private stampedNow(event: AgentEvent | AgentOwnEvent): AgentRunEvent {
    return stamped(event, this.host.id, this.active?.runId ?? null, this.turnIndex)
  }

  private emit(event: AgentRunEvent, run: ActiveRun | undefined = this.active): void {
    run?.replay.next(event)
    this.host.hub.emit(event)
  }
}

/** A run that `fail` aborted ends with stopReason `error`, saying why. */
function failedEnd(result: AgentResult, error: string): AgentEndEvent {
  return { type: 'agentEnd', result: { ...result, stopReason: 'error', error } }
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

/** `event` with `stamp`; a lazily materialized `message` (streaming updates) stays lazy. */
function stamped(event: AgentEvent | AgentOwnEvent, agentId: string, runId: string | null, turnIndex: number): AgentRunEvent {
  if (event.type === 'messageUpdate') return new StampedMessageUpdate(event, agentId, runId, turnIndex)
  // `Object.assign` rather than a spread: a spread over the many shapes of events (its inline cache
  // cleared by a full GC between runs) took ~1.5 µs an event, a quarter of the time in `Object.assign`
  // (profile of agent-tools 200: 99 samples on the line -> 27; CPU 249 -> 211 ms, medians of 5 noisy A/B rounds).
  return Object.assign({}, event, { agentId, runId, turnIndex })
}

/**
 * A stamped `messageUpdate` whose `message` is the loop event's, materialized
 * on first read — like the loop's own `MessageUpdate`: a class, so stamping
 * the event of every delta is a few field stores (an object literal with a
 * getter is built on a slow path, and made each delta cost twice the loop's).
 */
class StampedMessageUpdate {
  readonly type = 'messageUpdate' as const
  readonly chunk: MessageUpdateEvent['chunk']
  readonly contentIndex: number
  readonly agentId: string
  readonly runId: string | null
  readonly turnIndex: number
  readonly #source: MessageUpdateEvent

  constructor(source: MessageUpdateEvent, agentId: string, runId: string | null, turnIndex: number) {
    this.#source = source
    this.chunk = source.chunk
    this.contentIndex = source.contentIndex
    this.agentId = agentId
    this.runId = runId
    this.turnIndex = turnIndex
  }

  /** The frozen message after this chunk. */
  get message(): MessageUpdateEvent['message'] {
    return this.#source.message
  }

  /** Serializes like a plain event, snapshot included. */
  toJSON(): MessageUpdateEvent & EventStamp {
    return { type: this.type, message: this.message, chunk: this.chunk, contentIndex: this.contentIndex, agentId: this.agentId, runId: this.runId, turnIndex: this.turnIndex }
  }
}
