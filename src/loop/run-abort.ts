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
 * A signal of an {@link OwnedAbort} (an Agent's run: nothing but its loop
 * gets that signal) is not listened to at all: its owner tells the
 * `RunAbort` itself, right after aborting the signal (nothing else listens,
 * so no listener is told in another order). Node's
 * `addEventListener`/`removeEventListener` pair was the largest item of an
 * Agent's run setup after a full GC (7% of the profiled span from
 * `prompt()` to the first delta, 100 runs of a 5,000-message Agent): a
 * run's abort set up and torn down after a full GC, 220 → 120-150 µs
 * (median of 300, three alternating processes).
 *
 * Internal: not exported from the package.
 */
import { Observable, type Subscriber, type Unsubscribable } from 'rxjs'

/**
 * An `AbortController` whose signal is given to one loop only, and whose
 * owner aborts it through {@link abort}: the loop's {@link RunAbort} is then
 * told directly, with no listener on the signal (see the module comment).
 */
export class OwnedAbort {
  private readonly controller = new AbortController()
  /** The `onAbort` of the RunAborts listening (at most one per subscription of the loop). */
  private listeners: readonly (() => void)[] = []
  /** Whether {@link abort} was called: read in place of the signal's `aborted` (see {@link isAborted}). */
  private wasAborted = false

  constructor() {
    owners.set(this.controller.signal, this)
  }

  get signal(): AbortSignal {
    return this.controller.signal
  }

  /** Aborts the signal, then tells the RunAborts listening (as the signal would its listeners, once). */
  abort(): void {
    if (this.wasAborted) return
    this.wasAborted = true
    this.controller.abort()
    const listeners = this.listeners
    this.listeners = []
    for (const listener of listeners) listener()
  }

  /** Whether the signal was aborted (only {@link abort} aborts it). */
  get aborted(): boolean {
    return this.wasAborted
  }

  /** @internal For RunAbort. */
  listen(listener: () => void): void {
    this.listeners = [...this.listeners, listener]
  }

  /** @internal For RunAbort. */
  unlisten(listener: () => void): void {
    this.listeners = this.listeners.filter((l) => l !== listener)
  }
}

const owners = new WeakMap<AbortSignal, OwnedAbort>()

/**
 * `signal.aborted`, read from the signal's {@link OwnedAbort} when it has one. In Node 20 every
 * AbortSignal has a hidden class of its own (an EventTarget given AbortSignal's prototype), so
 * the getter `aborted`, read a few times a turn, was optimized for the signal of one Agent run
 * and thrown away with it by the next full GC ("weak objects"), then compiled again: in 17 of
 * runs 2-19 of agent-tools 200 with a full GC before each (`--trace-deopt`).
 */
export function isAborted(signal: AbortSignal): boolean {
  const owner = owners.get(signal)
  return owner !== undefined ? owner.aborted : signal.aborted
}

/**
 * `list` without `item`, a new array. A loop rather than a `filter` arrow made per
 * subscription: that arrow held the only strong reference to its optimized code, which a full
 * GC between runs threw away (`--trace-opt`, agent-tools 200: compiled again in 5 of 8 runs).
 */
function without<T>(list: readonly T[], item: T): readonly T[] {
  const kept: T[] = []
  for (const x of list) if (x !== item) kept.push(x)
  return kept
}

/** See the module comment. */
export class RunAbort implements Unsubscribable {
  /** Emits once when the signal aborts (at once if it already has); never completes. */
  readonly aborted$: Observable<void>
  /** Copy-on-write: one that subscribes or goes during an abort changes the next abort, not this one. */
  private subscribers: readonly Subscriber<void>[] = []
  private listening = false
  private ended = false
  /** The signal's owner, which tells this RunAbort itself (see {@link OwnedAbort}). */
  private readonly owner: OwnedAbort | undefined

  constructor(private readonly signal: AbortSignal) {
    this.owner = owners.get(signal)
    this.aborted$ = new Observable<void>((subscriber) => {
      if (this.owner !== undefined ? this.owner.aborted : signal.aborted) {
        subscriber.next()
        return
      }
      this.subscribers = [...this.subscribers, subscriber]
      if (!this.listening) {
        this.listening = true
        if (this.owner !== undefined) this.owner.listen(this.onAbort)
        else signal.addEventListener('abort', this.onAbort, { once: true })
      }
      return () => {
        this.subscribers = without(this.subscribers, subscriber)
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
    // `once`: the signal (or its owner) dropped the listener itself.
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
    if (this.owner !== undefined) this.owner.unlisten(this.onAbort)
    else this.signal.removeEventListener('abort', this.onAbort)
  }
}
