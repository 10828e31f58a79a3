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
export function runTurns(first: TurnState, turn: TurnOperator, after: (final: TurnState) => AfterTurn): Observable<TurnItem> {
  return new Observable<TurnItem>((subscriber) => {
    // A Subject, so that a pipeline may subscribe to the states more than once (a partition).
    const states = new Subject<TurnItem>()
    let queued: TurnState | undefined = first
    let inFlight = false
    let feeding = false

    const feedQueued = (): void => {
      if (feeding) return
      feeding = true
      while (queued !== undefined && !subscriber.closed) {
        const state: TurnState = queued
        queued = undefined
        inFlight = true
        states.next(state)
      }
      feeding = false
    }

    // `states` never completes: the run ends when a turn's state says so.
    turn(states.asObservable()).subscribe(
      linked<TurnItem>(subscriber, {
        next: (item) => {
          if (!isTurnState(item)) {
            subscriber.next(item)
            return
          }
          if (!inFlight) {
            subscriber.error(new Error('a turn emitted a second state (each turn must end with exactly one)'))
            return
          }
          inFlight = false
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
          if (!subscriber.closed) subscriber.error(new Error('the turn pipeline completed before the run ended (a custom operator completed it)'))
        },
      }),
    )
    feedQueued()
  })
}
