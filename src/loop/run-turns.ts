/**
 * Runs turn after turn through one subscription of the turn pipeline: each
 * turn's first state is fed into the pipeline, and the state that comes out
 * of it decides what follows. Subscribing the stages once per run rather than
 * once per turn keeps a turn's fixed cost to the work its stages do.
 *
 * A turn that completes synchronously (a scripted model, cached answers) is
 * looped over, not recursed into, so ten thousand turns use constant stack
 * and no scheduling; a turn that ends asynchronously feeds the next one from
 * where it ended.
 */
import { Observable, Subject, type Subscriber } from 'rxjs'
import { linked } from '../rx/linked-observer.js'
import { droppedState, endOfTurnViolation, secondState, TurnProtocolError, withLedger, type TurnLedger } from '../turn/turn-protocol.js'
import { isTurnState, type TurnItem, type TurnOperator, type TurnState } from '../turn/turn-state.js'
import { eventsTo, type EventRelay, type EventSink } from '../turn/event-relay.js'
import { resident, unused } from '../rx/resident.js'

/** What follows a turn: another one from `state`, or the end, with `state` as the run's last. */
export type AfterTurn = { readonly next: TurnState } | { readonly end: TurnState }

/**
 * Emits every turn's events, then the run's last state. `turn` is applied
 * once, to the stream of each turn's first state; it must answer each with
 * that turn's events and then exactly one state, its last. `after(final)`
 * says what follows a turn.
 *
 * ```
 * states: S0--------S1------           (fed by the loop)
 * turn:   -a-T0------b-T1              (T: a turn's last state)
 * result: -a---------b--(T1|)          after(T0) = next S1, after(T1) = end
 * ```
 */
/** Options for {@link runTurns}. */
export interface RunTurnsOptions {
  /**
   * Check the agent loop's stage protocol: each turn's last state (see
   * `endOfTurnViolation`), and a state dropped by the pipeline (see above).
   * Default false: any pipeline that answers each state with one state.
   */
  readonly checkProtocol?: boolean
}

export function runTurns(
  first: TurnState,
  turn: TurnOperator,
  after: (final: TurnState) => AfterTurn,
  options: RunTurnsOptions = {},
): Observable<TurnItem> {
  const checked = options.checkProtocol === true
  return new Observable<TurnItem>((subscriber) => {
    const runner = new TurnRunner(subscriber, first, after, checked)
    // `states` never completes: the run ends when a turn's state says so.
    withLedger(runner, () => turn(runner.states.asObservable()).subscribe(linked<TurnItem>(subscriber, runner)))
    runner.feedQueued()
  })
}

/**
 * One run of {@link runTurns}: feeds the states and handles what the pipeline
 * emits. A class rather than closures: every streamed token passes through
 * `next`, and a prototype method keeps its optimized code from run to run
 * (see `linked`). A relay of events (see `event-relay.ts`), and the run's
 * ledger (see `turn-protocol.ts`).
 */
class TurnRunner implements EventRelay, TurnLedger {
  /** A Subject, so that a pipeline may subscribe to the states more than once (a partition). */
  readonly states = new Subject<TurnItem>()
  held = 0
  lastStage: string | undefined = undefined
  readonly eventsTo: EventSink
  /** The turn whose state is in the pipeline, if any. */
  private inFlight: number | undefined
  private feeding = false

  constructor(
    private readonly subscriber: Subscriber<TurnItem>,
    private queued: TurnState | undefined,
    private readonly after: (final: TurnState) => AfterTurn,
    private readonly checked: boolean,
  ) {
    this.eventsTo = eventsTo(subscriber)
  }

  /** The ledger's: an asynchronous inner passed the state on. While feeding, the feed loop checks once `states.next` returns. */
  settle(): void {
    if (!this.feeding) this.checkHeld()
  }

  /** After the work a state set off has returned: a state neither out nor held by a stage was dropped. */
  private checkHeld(): void {
    const { inFlight, subscriber } = this
    if (this.checked && inFlight !== undefined && this.held <= 0 && !subscriber.closed) subscriber.error(droppedState(inFlight, this))
  }

  feedQueued(): void {
    if (this.feeding) return
    this.feeding = true
    while (this.queued !== undefined && !this.subscriber.closed) {
      const state: TurnState = this.queued
      this.queued = undefined
      this.inFlight = state.turnIndex
      this.held = 0
      this.lastStage = undefined
      this.states.next(state)
      this.checkHeld()
    }
    this.feeding = false
  }

  /** Every streamed token passes here: one check, then a plain forward. */
  next(item: TurnItem): void {
    if (isTurnState(item)) this.onState(item)
    else this.eventsTo.next(item)
  }

  complete(): void {
    if (!this.subscriber.closed) this.subscriber.error(new TurnProtocolError('the turn pipeline completed before the run ended (a custom operator completed it)'))
  }

  private onState(item: TurnState): void {
    const subscriber = this.subscriber
    if (this.inFlight !== item.turnIndex) {
      subscriber.error(secondState(item.turnIndex, this.inFlight, this))
      return
    }
    this.inFlight = undefined
    const violation = this.checked ? endOfTurnViolation(item, this) : undefined
    if (violation !== undefined) {
      subscriber.error(violation)
      return
    }
    const following = this.after(item)
    if ('end' in following) {
      subscriber.next(following.end)
      subscriber.complete()
      return
    }
    this.queued = following.next
    // Inside `states.next` (a turn that ended synchronously) the loop above feeds it.
    this.feedQueued()
  }
}

// Its hidden class outlives a run (see `resident`).
resident(new TurnRunner(unused, undefined, unused, false))
// And so does that of `states.asObservable()`: RxJS builds it as `new Observable()` and then
// sets `source`, and a full GC between runs found no Observable with a `source` alive (every
// pipeline of the run had died), so the map died and `Observable.subscribe`'s optimized code,
// which checks for it, went with it ("reason: weak objects"), to be compiled again in the
// next run. Measured (TOOLS 200, a full GC before each of 12 runs, --trace-deopt, 4 processes
// each): that code thrown away before 6–8 of runs 2–11, now 1–2; its TurboFan compile time
// over those runs 411–556 ms, now 55–264 ms.
resident(new Subject<never>().asObservable())
