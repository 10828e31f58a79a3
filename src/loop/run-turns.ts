/**
 * Runs turn after turn. A turn that completes synchronously (a scripted
 * model, cached answers) is looped over, not recursed into, so ten thousand
 * turns use constant stack and no scheduling; an asynchronous turn resumes the
 * loop from its completion.
 */
import { Observable, type Subscription } from 'rxjs'
import { linked } from '../rx/linked-observer.js'
import { isTurnState, type TurnItem, type TurnState } from '../turn/turn-state.js'

/** What follows a turn: another one from `state`, or the end, with `state` as the run's last. */
export type AfterTurn = { readonly next: TurnState } | { readonly end: TurnState }

/**
 * Emits every turn's events, then the run's last state. `turn(state)` runs
 * one turn; `after(final)` says what follows it.
 */
export function runTurns(
  first: TurnState,
  turn: (state: TurnState) => Observable<TurnItem>,
  after: (final: TurnState) => AfterTurn,
): Observable<TurnItem> {
  return new Observable<TurnItem>((subscriber) => {
    let queued: TurnState | undefined = first
    let looping = false
    let current: Subscription | undefined

    const loop = (): void => {
      if (looping) return
      looping = true
      while (queued !== undefined && !subscriber.closed) {
        const state: TurnState = queued
        queued = undefined
        let final: TurnState | undefined
        // The finished turn's subscription has already torn itself down; drop the reference.
        if (current !== undefined) subscriber.remove(current)
        const observer = linked<TurnItem>(subscriber, {
          next: (item) => {
            if (isTurnState(item)) final = item
            else subscriber.next(item)
          },
          complete: () => {
            if (final === undefined) {
              subscriber.error(new Error('a turn completed without emitting its state (a custom operator dropped it)'))
              return
            }
            const following = after(final)
            if ('end' in following) {
              subscriber.next(following.end)
              subscriber.complete()
              return
            }
            queued = following.next
            // Completed asynchronously: nobody is looping, so resume here.
            if (!looping) loop()
          },
        })
        current = observer
        turn(state).subscribe(observer)
      }
      looping = false
    }
    loop()
  })
}
