import { isObservable, Observable } from 'rxjs'
import { linked } from '../src/rx/linked-observer.js'
import { isTurnState, type TurnItem, type TurnOperator, type TurnState } from '../src/turn/turn-state.js'

/** Options for {@link onTurnState}. */
export interface OnTurnStateOptions {
  /** Also run for a state whose loop is already stopping. Default false: such a state passes through untouched. */
  readonly whenStopped?: boolean
}

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
 * Written by hand rather than with `concatMap` because every streamed token
 * passes through every stage: here that costs one function call, not an inner
 * subscription.
 */
export function onTurnState(
  project: (state: TurnState) => Observable<TurnItem> | TurnItem | readonly TurnItem[],
  options: OnTurnStateOptions = {},
): TurnOperator {
  return (source) =>
    new Observable<TurnItem>((subscriber) => {
      // Inners still running. More than one only for a moment: a turn's last state can start
      // the next turn before the inner that emitted it has completed.
      let active = 0
      let sourceDone = false
      source.subscribe(
        linked<TurnItem>(subscriber, {
          next: (item) => {
            if (!isTurnState(item) || (item.stop !== undefined && options.whenStopped !== true)) {
              subscriber.next(item)
              return
            }
            let out: Observable<TurnItem> | TurnItem | readonly TurnItem[]
            try {
              out = project(item)
            } catch (error) {
              subscriber.error(error)
              return
            }
            if (Array.isArray(out)) {
              for (const v of out as readonly TurnItem[]) subscriber.next(v)
              return
            }
            if (!isObservable(out)) {
              subscriber.next(out as TurnItem)
              return
            }
            active++
            out.subscribe(
              linked<TurnItem>(subscriber, {
                next: (v) => subscriber.next(v),
                complete: () => {
                  active--
                  if (sourceDone && active === 0) subscriber.complete()
                },
              }),
            )
          },
          complete: () => {
            sourceDone = true
            if (active === 0) subscriber.complete()
          },
        }),
      )
    })
}
