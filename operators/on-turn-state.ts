import { isObservable, Observable, type Subscriber } from 'rxjs'
import { linked } from '../src/rx/linked-observer.js'
import { currentLedger, TurnProtocolError, type TurnLedger } from '../src/turn/turn-protocol.js'
import { eventsTo, type EventRelay, type EventSink } from '../src/turn/event-relay.js'
import { isTurnState, type TurnItem, type TurnOperator, type TurnState } from '../src/turn/turn-state.js'
import { resident, unused } from '../src/rx/resident.js'

/** Options for {@link onTurnState}. */
export interface OnTurnStateOptions {
  /** Also run for a state whose loop is already stopping. Default false: such a state passes through untouched. */
  readonly whenStopped?: boolean
  /** Names the stage in protocol errors (a state dropped or doubled). Default: `onTurnState`. */
  readonly stage?: string
}

const noState = (stage: string, how: string): TurnProtocolError =>
  new TurnProtocolError(`\`${stage}\` answered a turn's state with no state (${how}): each stage must answer every state with exactly one state, last`, stage)

const twoStates = (stage: string): TurnProtocolError =>
  new TurnProtocolError(`\`${stage}\` answered a turn's state with two states: each stage must answer every state with exactly one state, last`, stage)

/**
 * The building block of every stage: events pass through untouched and
 * synchronously; the turn's state is handed to `project`, whose items (events
 * first, the new state last: one state, an array, or an Observable) replace it.
 *
 * ```
 * source:  --e--e--S|          S: the turn state
 * project: S => -f-T|
 * result:  --e--e---f-T|
 * ```
 *
 * `project` must answer with exactly one state, last: an answer without one,
 * or with two, fails the run with a `TurnProtocolError` naming `stage`. An
 * Observable answer may take its time: the run knows the stage holds the
 * state (a state held asynchronously by anything else counts as dropped).
 *
 * Written by hand rather than with `concatMap` because every streamed token
 * passes through every stage: here that costs one function call, not an inner
 * subscription. The per-token handlers are methods of module-level classes,
 * not closures made per subscription, so their optimized code outlives a run
 * (see `linked`).
 */
export function onTurnState(
  project: (state: TurnState) => Observable<TurnItem> | TurnItem | readonly TurnItem[],
  options: OnTurnStateOptions = {},
): TurnOperator {
  const stage = options.stage ?? 'onTurnState'
  const whenStopped = options.whenStopped === true
  return (source) =>
    new Observable<TurnItem>((subscriber) => {
      // The run this stage belongs to, if it is subscribed as part of one.
      source.subscribe(linked<TurnItem>(subscriber, new StageRun(subscriber, project, stage, whenStopped, currentLedger())))
    })
}

/** One subscription of a stage: the handler of its source, and what its answers share. A relay of events (see `event-relay.ts`). */
class StageRun implements EventRelay {
  /**
   * Inners still running. More than one only for a moment: a turn's last state can start
   * the next turn before the inner that emitted it has completed.
   */
  active = 0
  private sourceDone = false
  readonly eventsTo: EventSink

  constructor(
    readonly subscriber: Subscriber<TurnItem>,
    private readonly project: (state: TurnState) => Observable<TurnItem> | TurnItem | readonly TurnItem[],
    readonly stage: string,
    private readonly whenStopped: boolean,
    readonly ledger: TurnLedger | undefined,
  ) {
    this.eventsTo = eventsTo(subscriber)
  }

  /** Every streamed token passes here: one check, then a plain forward, past the relays downstream. */
  next(item: TurnItem): void {
    if (!isTurnState(item)) this.eventsTo.next(item)
    else if (this.whenStopped || item.stop === undefined) this.onState(item)
    else this.subscriber.next(item)
  }

  complete(): void {
    this.sourceDone = true
    if (this.active === 0) this.subscriber.complete()
  }

  /** An inner answer completed. */
  innerDone(): void {
    this.active--
    if (this.sourceDone && this.active === 0) this.subscriber.complete()
  }

  private onState(item: TurnState): void {
    let out: Observable<TurnItem> | TurnItem | readonly TurnItem[]
    try {
      out = this.project(item)
    } catch (error) {
      this.subscriber.error(error)
      return
    }
    if (isObservable(out)) this.follow(out)
    else this.answerWith(out)
  }

  /** The one state of an answer given as a value or an array: checked, then passed on with its events. */
  private answerWith(out: TurnItem | readonly TurnItem[]): void {
    const { subscriber, stage, ledger } = this
    if (Array.isArray(out)) {
      const items = out as readonly TurnItem[]
      const states = items.reduce((n, v) => (isTurnState(v) ? n + 1 : n), 0)
      const last = items[items.length - 1]
      if (states !== 1 || last === undefined || !isTurnState(last)) {
        subscriber.error(states > 1 ? twoStates(stage) : noState(stage, states === 0 ? 'an array without one' : 'not last'))
        return
      }
      if (ledger !== undefined) ledger.lastStage = stage
      for (const v of items) subscriber.next(v)
      return
    }
    if (!isTurnState(out as TurnItem)) {
      subscriber.error(noState(stage, 'an event instead'))
      return
    }
    if (ledger !== undefined) ledger.lastStage = stage
    subscriber.next(out as TurnItem)
  }

  /** An Observable answer: its events pass through; its one state is checked and reported to the ledger. */
  private follow(out: Observable<TurnItem>): void {
    this.active++
    if (this.ledger !== undefined) this.ledger.held++
    out.subscribe(linked<TurnItem>(this.subscriber, new Answer(this)))
  }
}

/** The handler of one Observable answer. A relay of events (see `event-relay.ts`). */
class Answer implements EventRelay {
  private answered = false
  readonly eventsTo: EventSink

  constructor(private readonly run: StageRun) {
    this.eventsTo = run.eventsTo
  }

  /**
   * Every streamed token passes here: kept as small as a plain forward (V8 inlines it,
   * and the event objects of a turn's stream then cost no allocation in this stage).
   */
  next(v: TurnItem): void {
    if (isTurnState(v)) this.onState(v)
    else this.eventsTo.next(v)
  }

  complete(): void {
    if (!this.answered) {
      this.run.subscriber.error(noState(this.run.stage, 'its Observable completed without one'))
      return
    }
    this.run.innerDone()
  }

  private onState(v: TurnState): void {
    const { subscriber, stage, ledger } = this.run
    if (this.answered) {
      subscriber.error(twoStates(stage))
      return
    }
    this.answered = true
    if (ledger === undefined) {
      subscriber.next(v)
      return
    }
    ledger.held--
    ledger.lastStage = stage
    subscriber.next(v)
    // What the state set off synchronously has returned: the run may check where it is.
    ledger.settle()
  }
}

// Their hidden classes outlive a run (see `resident`).
resident(new Answer(resident(new StageRun(unused, unused, 'resident', false, undefined))))
