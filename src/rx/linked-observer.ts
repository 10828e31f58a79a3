/**
 * An observer that is part of its destination's subscription from the start.
 *
 * `source.subscribe({ next, … })` returns its Subscription only after a
 * synchronous source has finished emitting, so an operator written that way
 * cannot stop a synchronous source when its own subscriber is unsubscribed
 * mid-emission (a `take(2)` downstream of a scripted model would still run the
 * whole agent). RxJS treats any object that is both an Observer and a
 * Subscription as a Subscriber and hands it to the source as is; adding it to
 * the destination before subscribing closes it — and so stops the source's
 * emission loop — the moment the destination is unsubscribed. It is also one
 * call per value, with no SafeSubscriber wrapping, on the hottest path.
 */
import { Subscription, type Observer, type Subscriber } from 'rxjs'

export interface LinkedHandlers<T> {
  readonly next: (value: T) => void
  readonly error?: (error: unknown) => void
  readonly complete?: () => void
}

/** An Observer that is also a Subscription: RxJS hands it to the source as the subscriber itself. */
export class LinkedObserver<T> extends Subscription implements Observer<T> {
  private stopped = false
  constructor(private readonly handlers: LinkedHandlers<T>) {
    super()
  }
  next(value: T): void {
    if (!this.stopped && !this.closed) this.handlers.next(value)
  }
  error(error: unknown): void {
    if (this.stopped || this.closed) return
    this.stopped = true
    this.handlers.error?.(error)
    this.unsubscribe()
  }
  complete(): void {
    if (this.stopped || this.closed) return
    this.stopped = true
    this.handlers.complete?.()
    this.unsubscribe()
  }
}

/**
 * An observer for `source.subscribe(…)` that is already torn down with
 * `destination`. Errors and completions default to the destination's.
 *
 * @example
 * source.subscribe(linked(subscriber, { next: (v) => subscriber.next(f(v)) }))
 */
export function linked<T>(destination: Subscriber<unknown> | Subscription, handlers: LinkedHandlers<T>): LinkedObserver<T> {
  const observer = new LinkedObserver<T>({
    next: handlers.next,
    error: handlers.error ?? ('error' in destination ? (e: unknown) => destination.error(e) : undefined),
    complete: handlers.complete ?? ('complete' in destination ? () => destination.complete() : undefined),
  })
  destination.add(observer)
  return observer
}
