/**
 * A run's abort as its stages see it: one Observable over the run's
 * `AbortSignal` that every stage waiting on it subscribes to.
 *
 * Each subscription used to add a listener of its own to the signal and
 * remove it when done — two `addEventListener`/`removeEventListener` pairs
 * per tool turn (the model's stream and the tool batch), and Node's
 * `EventTarget` is slow at both (its internals are also thrown away by
 * every full GC): 95 ms of 4,000 Agent tool turns in a profile of
 * agent-tools 200, where they were 10% of what the Agent cost over
 * `agentLoop` without a signal. Here the signal gets one listener, added at
 * the first subscription, that tells every subscriber; it is removed when
 * the run ends (`unsubscribe`, added to the run's subscriber), or, if
 * something still listens then, when the last subscriber goes.
 *
 * Internal: not exported from the package.
 */
import { Observable, type Subscriber, type Unsubscribable } from 'rxjs'

/** See the module comment. */
export class RunAbort implements Unsubscribable {
  /** Emits once when the signal aborts (at once if it already has); never completes. */
  readonly aborted$: Observable<void>
  /** Copy-on-write: one that subscribes or goes during an abort changes the next abort, not this one. */
  private subscribers: readonly Subscriber<void>[] = []
  private listening = false
  private ended = false

  constructor(private readonly signal: AbortSignal) {
    this.aborted$ = new Observable<void>((subscriber) => {
      if (signal.aborted) {
        subscriber.next()
        return
      }
      this.subscribers = [...this.subscribers, subscriber]
      if (!this.listening) {
        this.listening = true
        signal.addEventListener('abort', this.onAbort, { once: true })
      }
      return () => {
        this.subscribers = this.subscribers.filter((s) => s !== subscriber)
        if (this.ended && this.subscribers.length === 0) this.stopListening()
      }
    })
  }

  /** The run ended: the signal's listener goes (now, or with the last subscriber). */
  unsubscribe(): void {
    this.ended = true
    if (this.subscribers.length === 0) this.stopListening()
  }

  private readonly onAbort = (): void => {
    // `once`: the signal dropped the listener itself.
    this.listening = false
    const subscribers = this.subscribers
    for (let i = 0; i < subscribers.length; i++) {
      const subscriber = subscribers[i]!
      if (!subscriber.closed) subscriber.next()
    }
  }

  private stopListening(): void {
    if (!this.listening) return
    this.listening = false
    this.signal.removeEventListener('abort', this.onAbort)
  }
}
