import { concatWith, defer, identity, takeUntil, tap, type MonoTypeOperatorFunction, type Observable } from 'rxjs'
import { nextState, type TurnState } from '../src/turn/turn-state.js'

/** The option every stage that waits takes: the run's abort notifier. */
export interface AbortOption {
  /**
   * Emits (once) when the run is aborted; a waiting point then stops waiting
   * (see {@link untilAborted}). A run passes its own; without one, waits are
   * cancelled only by unsubscribing.
   */
  readonly abort?: Observable<unknown>
}

/**
 * Races a waiting point (a policy, an approver, a context transform, a tool
 * batch's planning…) against the run's abort. Mirrors `source` until `abort`
 * emits; then drops `source` — an Observable is unsubscribed, a Promise's late
 * result is ignored — emits `onAbort()`'s items (the stage's "aborted" answer)
 * and completes. An abort signalled before the subscription means `source` is
 * never subscribed. Without `abort` the source is returned as it is; an abort
 * notifier that completes without emitting changes nothing.
 *
 * ```
 * source: ---a--------b|
 * abort:  -------x
 * result: ---a---(A|)        A: onAbort()
 * ```
 *
 * Used at every point where a run waits for something other than the model's
 * stream (which `accumulateMessage` ends) and running tools (which
 * `dispatchTools` cancels); use it in your own stages with `TurnStages.abort`.
 */
export function untilAborted<T>(abort: Observable<unknown> | undefined, onAbort: () => readonly T[]): MonoTypeOperatorFunction<T> {
  if (abort === undefined) return identity
  // `takeUntil` subscribes to its notifier before the source, so an abort already
  // signalled never lets the source start.
  return (source) =>
    defer(() => {
      let aborted = false
      return source.pipe(
        takeUntil(abort.pipe(tap(() => (aborted = true)))),
        concatWith(defer(() => (aborted ? onAbort() : []))),
      )
    })
}

/** `state`, stopping the run with stopReason `aborted` because the abort came while `what` was pending. */
export function abortedState(state: TurnState, what: string): TurnState {
  return nextState(state, { stop: { reason: 'aborted', message: `the run was aborted while ${what} was pending` } })
}
