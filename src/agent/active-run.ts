/**
 * A run of an Agent in progress: its result, abort, replay and metering, and
 * the observer of its loop's events — it logs what each event changes
 * (`AgentStore.record`), emits it to the run's replay and the agent's
 * listeners (stamped when someone gets it: `run-replay.ts`), and settles the
 * run's result.
 *
 * The loop's events are handled by methods of this one object per run,
 * rather than by closures made at each run: after a full GC between runs,
 * V8 threw away the optimized code of the closures at every run's start
 * (`--trace-deopt`: "code dependencies", then "weak objects" on the GC), and
 * each run handled its first events unoptimized again. One instance of this
 * class (and of its meter and replay) is kept for the process (`resident`).
 *
 * Internal: not exported from the package.
 */
import { asyncScheduler, type Observer, type Subscription } from 'rxjs'
import { OwnedAbort } from '../loop/run-abort.js'
import { resident, unused } from '../rx/resident.js'
import { errorText } from '../types/codec.js'
import { assistantMessage } from '../types/message.js'
import type { AgentEndEvent, AgentEvent, MessageUpdateEvent, TurnEndEvent, TurnStartEvent } from '../types/event.js'
import type { AgentResult } from '../types/result.js'
import type { AgentOwnEvent, TurnMetricsEvent } from './agent-events.js'
import type { AgentStore } from './agent-store.js'
import type { RunBoundary } from './checkpoint.js'
import { stamped } from './event-stamp.js'
import type { ListenerHub } from './listener-hub.js'
import { TurnMeter, type MetricsCollector } from './metrics.js'
import { RunReplay } from './run-replay.js'

type LoopEvent = AgentEvent | TurnMetricsEvent

/** What a run needs of its agent. */
export interface RunHost {
  readonly id: string
  readonly store: AgentStore
  readonly hub: ListenerHub
  readonly boundary: RunBoundary
  readonly metrics: MetricsCollector | undefined
}

/** What a run needs of its agent's runner (`agent-run.ts`). */
export interface RunOwner {
  readonly host: RunHost
  /** The run in progress: a run that is no longer it (reset) drops what its loop still emits. */
  readonly active: ActiveRun | undefined
  /** The turn the agent's events belong to now. */
  turnIndex: number
  /** The run ended: no run is in progress any more (if this one still was). */
  finish(run: ActiveRun): void
}

const noop = (): void => undefined

/** See the module comment. */
export class ActiveRun implements Observer<AgentEvent> {
  /** Its abort: the loop's `RunAbort` is told by it, not by a listener on the signal. */
  readonly abort = new OwnedAbort()
  readonly result: Promise<AgentResult>
  subscription: Subscription | undefined = undefined
  /** Set by `fail` (agent-run.ts): the run was aborted because of this, and ends with stopReason `error` saying it. */
  failure: string | undefined = undefined
  /** Its result could not be recorded: it ended with an error. */
  failed = false
  private settleResult: (result: AgentResult) => void = noop
  private rejectResult: (error: unknown) => void = noop

  /** @param resumed a resumed run (`runResumed`): its loop's `agentStart` is not logged again. */
  constructor(
    private readonly owner: RunOwner,
    readonly runId: string,
    private readonly resumed: boolean,
    readonly replay: RunReplay,
    private readonly meter: TurnMeter,
  ) {
    this.result = new Promise<AgentResult>((resolve, reject) => {
      this.settleResult = resolve
      this.rejectResult = reject
    })
    // An unawaited run must not turn its failure into an unhandled rejection.
    this.result.catch(noop)
  }

  /** Settles the result with `result` (its end, or an aborted one when the run is forgotten). */
  resolve(result: AgentResult): void {
    this.settleResult(result)
  }

  /**
   * The loop's events come in a dozen layouts, so each read of `type` is a megamorphic lookup:
   * it is read here once and handed down (meter, store, replay), where a delta read it four
   * times and any other event about ten. With the same in `callModel`'s `Attempt.next`:
   * agent-tools 200 under callgrind (40 warm-up runs, two full GCs before each of 4 runs,
   * --single-threaded), 159.1 -> 155.7 M instructions a run (megamorphic loads 7.8 -> 5.3 M).
   */
  next(loopEvent: AgentEvent): void {
    const type = loopEvent.type
    this.meter.see(loopEvent, type)
    // A `turnEnd` is followed by its `turnMetrics` (in `other`).
    this.handle(loopEvent, type)
  }

  error(error: unknown): void {
    this.owner.finish(this)
    this.owner.host.store.append({ type: 'runFailed', error: errorText(error) })
    this.replay.error(error)
    this.rejectResult(error)
  }

  complete(): void {
    this.owner.finish(this)
    this.replay.complete()
  }

  /**
   * Emits `event` of the current turn to the run's replay and the agent's
   * listeners: stamped if any of them gets it now, else kept unstamped by the
   * replay, for a late subscriber (see `run-replay.ts`).
   */
  emit(event: AgentEvent | AgentOwnEvent, type: (AgentEvent | AgentOwnEvent)['type'] = event.type): void {
    const { owner } = this
    const hub = owner.host.hub
    if (!hub.observed && !this.replay.observed) return this.replay.nextUnstamped(event, owner.turnIndex, type)
    const stampedEvent = stamped(event, owner.host.id, this.runId, owner.turnIndex)
    this.replay.next(stampedEvent, type)
    hub.emit(stampedEvent)
  }

  /** `loopEvent`, whose `type` is `type` (see `next`). */
  private handle(loopEvent: AgentEvent, type: AgentEvent['type']): void {
    // After reset() the run is forgotten: what its teardown still emits (say, a
    // synchronous run ending at once on the abort) must not reach the fresh state.
    if (this.owner.active !== this) return
    if (type !== 'messageUpdate') return this.other(loopEvent as Exclude<LoopEvent, MessageUpdateEvent>, type)
    const event = loopEvent as MessageUpdateEvent
    try {
      this.owner.host.store.recordUpdate(event)
    } catch (error) {
      return this.fail(new Error(`the agent could not record '${type}' in its state: ${errorText(error)}`))
    }
    this.emit(event, type)
  }

  /**
   * Every event but a delta, out of `handle`: in a run of one long answer these come once
   * (or never) between the deltas, their type feedback was gone after a full GC between runs,
   * and, inlined in `handle`, they threw its optimized code away at the answer's end
   * (with the same split in `AgentStore.record` and `TurnMeter.see`: agent-text 10k CPU
   * 111 -> 99 ms, agent-long 5k 90 -> 73 ms, medians of 7 and 5 A/B rounds of bench/worker.mjs).
   * It logs through `AgentStore.recordEntry` and hands a turn's `turnMetrics` to itself, not
   * to `handle` and `record`: through them V8 inlined the whole delta path into it — down to
   * the app's `state$` subscriber, a closure of the run's, whose death at a full GC threw the
   * code away ("weak objects") — and compiled all of it again in every run, the costliest
   * compile of an Agent's run (agent-tools 200, 8 runs after a full GC, --single-threaded
   * --trace-opt: 277 of 804 ms of compiling). It was still compiled again each run, smaller:
   * agent-tools 200 under callgrind, full GC before each of 6 runs, 2,976M -> 2,939M
   * instructions (TurboFan 1,412M -> 1,377M) as measured alone; with `callModel`'s classes
   * and the stream marks' clock, 3,031-3,047M -> 2,795M. What it and `next` still lost at
   * each full GC was the run's `TurnMeter` class (see `residentMeter`).
   */
  private other(event: Exclude<LoopEvent, MessageUpdateEvent>, type: Exclude<LoopEvent, MessageUpdateEvent>['type']): void {
    if (type === 'agentEnd') return this.end(event as AgentEndEvent)
    const { owner } = this
    const { store, hub, boundary } = owner.host
    if (type === 'turnStart') owner.turnIndex = (event as TurnStartEvent).turnIndex
    if (type === 'turnMetrics') {
      const metrics = owner.host.metrics
      const metered = event as TurnMetricsEvent
      if (metrics !== undefined) hub.call('metrics collector', () => metrics.onTurn(metered.metrics), stamped(metered, owner.host.id, this.runId, owner.turnIndex))
    } else if (!this.resumed || type !== 'agentStart') {
      try {
        store.recordEntry(event as Exclude<AgentEvent, MessageUpdateEvent>, type)
      } catch (error) {
        // Data the state cannot hold (a tool's hostile `details`): the run ends with an error
        // naming the event, never an exception out of this subscriber.
        return this.fail(new Error(`the agent could not record '${type}' in its state: ${errorText(error)}`))
      }
    }
    if (type === 'turnEnd') boundary.mark(store.log.length - 1, store.state)
    this.emit(event, type)
    // Straight to `other`, not through `handle`: see the comment above.
    if (type === 'turnEnd' && owner.active === this) this.other(this.meter.turnEnded(event as TurnEndEvent), 'turnMetrics')
  }

  /**
   * The run's `agentEnd`, out of `handle`: code met once per run, inlined in the per-event path,
   * found its type feedback gone after a full GC between runs and threw `handle`'s optimized code
   * away at every run's end (`--trace-deopt`), so that each run ran it unoptimized for a while.
   */
  private end(loopEvent: AgentEndEvent): void {
    const event: AgentEndEvent = this.failure !== undefined ? { type: 'agentEnd', result: { ...loopEvent.result, stopReason: 'error', error: this.failure } } : loopEvent
    const { owner } = this
    const { store, boundary } = owner.host
    try {
      store.recordEntry(event, 'agentEnd')
    } catch (error) {
      return this.fail(new Error(`the agent could not record 'agentEnd' in its state: ${errorText(error)}`))
    }
    boundary.mark(store.log.length - 1, store.state)
    owner.finish(this)
    this.emit(event, 'agentEnd')
    this.settleResult(event.result)
  }

  /** Ends the run with `error`; the transcript is settled so that every tool call has its result. */
  private fail(error: Error): void {
    this.failed = true
    this.subscription?.unsubscribe()
    this.owner.finish(this)
    this.owner.host.store.append({ type: 'runFailed', error: error.message, settleReason: `its result could not be recorded (${error.message})` })
    this.replay.error(error)
    this.rejectResult(error)
  }
}

/**
 * A meter that has timed a turn as a run's does. Its clock fields then hold the clock's
 * numbers (not small integers), which a fresh meter's first `turnStart` stores: a meter that
 * never saw one keeps a hidden class of its own, and every run's meter built another, which
 * died with the run; `ActiveRun.next`, which embeds it, was compiled again after each full GC.
 */
function residentMeter(): TurnMeter {
  const meter = new TurnMeter(asyncScheduler)
  const answer = assistantMessage('a')
  meter.see({ type: 'turnStart', turnIndex: 0 })
  meter.see({ type: 'messageUpdate', message: answer, chunk: { type: 'textDelta', text: 'a' }, contentIndex: 0 })
  meter.see({ type: 'messageEnd', message: answer })
  meter.see({ type: 'toolExecutionStart', toolCallId: 'c', toolName: 't', args: {} })
  meter.see({ type: 'toolExecutionEnd', toolCallId: 'c', toolName: 't', result: { content: [] }, isError: false })
  return meter
}

// Hidden classes that outlive a run (see `resident`): the run, its meter and its replay.
resident(new ActiveRun(unused, '', false, resident(new RunReplay('', '')), resident(residentMeter())))
// A meter as the constructor leaves it, too (every run's meter has it until its first `turnStart`).
resident(new TurnMeter(unused))
