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
import { Observable, Subject } from 'rxjs'
import { linked } from '../rx/linked-observer.js'
import { droppedState, endOfTurnViolation, secondState, TurnProtocolError, withLedger, type TurnLedger } from '../turn/turn-protocol.js'
import { isTurnState, type TurnItem, type TurnOperator, type TurnState } from '../turn/turn-state.js'

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
    // A Subject, so that a pipeline may subscribe to the states more than once (a partition).
    const states = new Subject<TurnItem>()
    let queued: TurnState | undefined = first
    // The turn whose state is in the pipeline, if any.
    let inFlight: number | undefined
    let feeding = false

    /** After the work a state set off has returned: a state neither out nor held by a stage was dropped. */
    const checkHeld = (): void => {
      if (checked && inFlight !== undefined && ledger.held <= 0 && !subscriber.closed) subscriber.error(droppedState(inFlight, ledger))
    }
    const ledger: TurnLedger = {
      held: 0,
      lastStage: undefined,
      settle: () => {
        // While feeding, the feed loop checks once `states.next` returns.
        if (!feeding) checkHeld()
      },
    }

    const feedQueued = (): void => {
      if (feeding) return
      feeding = true
      while (queued !== undefined && !subscriber.closed) {
        const state: TurnState = queued
        queued = undefined
        inFlight = state.turnIndex
        ledger.held = 0
        ledger.lastStage = undefined
        states.next(state)
        checkHeld()
      }
      feeding = false
    }

    // `states` never completes: the run ends when a turn's state says so.
    withLedger(ledger, () =>
      turn(states.asObservable()).subscribe(
        linked<TurnItem>(subscriber, {
          next: (item) => {
            if (!isTurnState(item)) {
              subscriber.next(item)
              return
            }
            if (inFlight !== item.turnIndex) {
              subscriber.error(secondState(item.turnIndex, inFlight, ledger))
              return
            }
            inFlight = undefined
            const violation = checked ? endOfTurnViolation(item, ledger) : undefined
            if (violation !== undefined) {
              subscriber.error(violation)
              return
            }
            const following = after(item)
            if ('end' in following) {
              subscriber.next(following.end)
              subscriber.complete()
              return
            }
            queued = following.next
            // Inside `states.next` (a turn that ended synchronously) the loop above feeds it.
            feedQueued()
          },
          complete: () => {
            if (!subscriber.closed) subscriber.error(new TurnProtocolError('the turn pipeline completed before the run ended (a custom operator completed it)'))
          },
        }),
      ),
    )
    feedQueued()
  })
}
