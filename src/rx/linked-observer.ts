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
 *
 * Errors are routed the way RxJS's own `OperatorSubscriber` routes them: a
 * handler that throws never throws into the source (where a synchronous
 * source's `subscribe` would swallow it and a timer would crash the process);
 * the error goes to the destination's `error` instead.
 *
 * Internal: not exported from the package.
 */
import { config, Subscription, UnsubscriptionError, type Observer, type Subscriber, type TeardownLogic } from 'rxjs'
import { resident } from './resident.js'

/**
 * What a linked observer does with each notification. The handlers are called
 * as methods of this object, so a class instance works: on a per-value path
 * prefer one (see {@link LinkedObserver}).
 */
export interface LinkedHandlers<T> {
  next(value: T): void
  error?(error: unknown): void
  /** Default: complete the destination. */
  complete?(): void
}

/** Where a completion goes by default. */
interface CompleteSink {
  complete(): void
}

/** Where a handler's throw goes. */
interface ErrorSink {
  error(error: unknown): void
}

/**
 * An Observer that is also a Subscription: RxJS hands it to the source as the subscriber itself.
 *
 * A throw in `next` or `complete` goes to the sink's `error` (the observer stops: the
 * sink's error tears it down); a throw in `error` too. Without a sink (the destination is
 * a plain Subscription) the throw is reported like RxJS's `reportUnhandledError`, as a last
 * resort: `config.onUnhandledError`, else thrown on a later task.
 *
 * ```
 * source:  --a--b--|
 * next:    b => throw e
 * sink:    -----#          #: e
 * ```
 */
export class LinkedObserver<T> extends Subscription implements Observer<T> {
  /** Set by `error`, `complete` or a handler's throw: nothing more is handled. */
  protected stopped = false
  /**
   * The one linked observer or function added to this one, while it is the
   * only thing ever added (see {@link LinkedObserver.add}); `up` is a linked
   * observer's side of the link.
   */
  private down: LinkedObserver<unknown> | (() => void) | undefined = undefined
  private up: LinkedObserver<unknown> | undefined = undefined
  /** Something went to RxJS's own finalizer list: every later addition goes there too, in order. */
  private listed = false
  constructor(
    /** What it calls, as methods of this object. */
    readonly handlers: LinkedHandlers<T>,
    private readonly sink: ErrorSink | undefined,
    private readonly completeTo: CompleteSink | undefined,
  ) {
    super()
  }
  next(value: T): void {
    if (this.stopped || this.closed) return
    // A try/catch around a call costs nothing in V8 until something throws: this stays one call per value.
    try {
      this.handlers.next(value)
    } catch (thrown) {
      this.route(thrown)
    }
  }
  error(error: unknown): void {
    if (this.stopped || this.closed) return
    this.stopped = true
    try {
      if (this.handlers.error === undefined) this.route(error)
      else this.handlers.error(error)
    } catch (thrown) {
      this.route(thrown)
    } finally {
      this.unsubscribe()
    }
  }
  complete(): void {
    if (this.stopped || this.closed) return
    this.stopped = true
    try {
      if (this.handlers.complete === undefined) this.completeTo?.complete()
      else this.handlers.complete()
    } catch (thrown) {
      this.route(thrown)
    } finally {
      this.unsubscribe()
    }
  }
  /**
   * As `Subscription.add`, except for the commonest cases on a run's path:
   * the first and only thing added is another linked observer (the
   * upstream's, in a chain of stages) or a teardown function (a source's).
   * It is kept in a field instead of RxJS's finalizer list, which costs an
   * array of 17 slots (152 bytes) per subscription; a second addition moves
   * it to the list first, so teardown order is RxJS's.
   *
   * Measured (1,000 FANOUT runs of `agentLoop` alive at once, heap after a
   * full GC while all wait for their first chunk): 14.1 → 12.7 KB per run
   * for linked observers; a function too, 9.0 → 8.9 KB.
   */
  override add(teardown: TeardownLogic): void {
    if (!this.listed && !this.closed && teardown !== undefined && teardown !== null && teardown !== this) {
      const held = this.down
      if (teardown instanceof LinkedObserver) {
        if (teardown.closed || teardown.up === this) return
        if (held === undefined && teardown.up === undefined) {
          this.down = teardown
          teardown.up = this
          return
        }
      } else if (held === undefined && typeof teardown === 'function') {
        this.down = teardown
        return
      }
      if (held !== undefined) {
        // A second addition: the one held joins RxJS's list first, in the order it came.
        this.down = undefined
        if (held instanceof LinkedObserver) held.up = undefined
        super.add(held)
      }
      this.listed = true
    }
    super.add(teardown)
  }

  override remove(teardown: Exclude<TeardownLogic, void>): void {
    if (teardown !== undefined && teardown === this.down) {
      this.down = undefined
      if (teardown instanceof LinkedObserver) teardown.up = undefined
      return
    }
    super.remove(teardown)
  }

  override unsubscribe(): void {
    if (this.closed) return
    const { up, down } = this
    if (up !== undefined) {
      this.up = undefined
      if (up.down === this) up.down = undefined
    }
    // Closes this one and runs RxJS's list (empty while something is held). With nothing for RxJS to
    // do (no parent of its own, no list, no initial teardown: most links of a run, held by `down`),
    // what its `unsubscribe` does is set `closed`: done here, without its loads of fields that every
    // Subscription class shares (megamorphic). TOOLS 200 turns, callgrind (40 warm-up runs, then 4
    // after two full GCs each, node --single-threaded): 51.19 -> 50.69 M instructions a run.
    const own = this as unknown as SubscriptionFields
    if (own._parentage === null && own._finalizers === null && own.initialTeardown === undefined) this.closed = true
    else super.unsubscribe()
    if (down === undefined) return
    this.down = undefined
    try {
      if (down instanceof LinkedObserver) {
        down.up = undefined
        down.unsubscribe()
      } else down()
    } catch (error) {
      throw new UnsubscriptionError(error instanceof UnsubscriptionError ? error.errors : [error])
    }
  }

  /** The sink's error (a sink that has already ended ignores it, as a stopped RxJS subscriber does); the source is dropped. */
  protected route(error: unknown): void {
    this.stopped = true
    if (this.sink !== undefined) this.sink.error(error)
    else reportUnhandled(error)
    this.unsubscribe()
  }
}

/**
 * The fields RxJS 7's `Subscription` keeps (internal to it, the same in its CommonJS and ES builds):
 * what its `unsubscribe` reads before doing anything but closing.
 */
interface SubscriptionFields {
  readonly _parentage: unknown
  readonly _finalizers: unknown
  readonly initialTeardown: unknown
}

/** RxJS's last resort (its `reportUnhandledError` is internal): the configured hook, else a throw on a later task. */
function reportUnhandled(error: unknown): void {
  setTimeout(() => {
    const report = config.onUnhandledError
    if (report === null) throw error
    report(error)
  })
}

/**
 * A subclass of {@link LinkedObserver} for one handler class on a per-token
 * path, given to {@link linked}. Its `next` is its own copy of the base's:
 * the base's call of `handlers.next` is shared by every linked observer of
 * the runtime, so V8 sees a dozen handler classes there and makes each call
 * through a megamorphic lookup, never inlining it; a subclass's own `next`
 * sees one handler class, which is inlined into it. Measured with the
 * handlers of a retry attempt and of the message fold so linked (TEXT 10k,
 * async source, steady state, valgrind, node --single-threaded): 76.5 → 31.6
 * million instructions per run (with the fold's `lastChanged`); the bare
 * `for await` floor: 23.0. The answer's events are linked so too (see
 * `AnswerLink` in stream-llm.ts).
 *
 * @example
 * class AttemptLink extends LinkedObserver<ProviderChunk> {
 *   override next(chunk: ProviderChunk): void {
 *     if (this.stopped || this.closed) return
 *     try {
 *       this.handlers.next(chunk)
 *     } catch (thrown) {
 *       this.route(thrown)
 *     }
 *   }
 * }
 */
export type LinkClass<T> = new (handlers: LinkedHandlers<T>, sink: ErrorSink | undefined, completeTo: CompleteSink | undefined) => LinkedObserver<T>

/**
 * An observer for `source.subscribe(…)` that is already torn down with
 * `destination`. Errors and completions default to the destination's, and a
 * handler that throws errors the destination (when it is a Subscriber) or
 * `errorTo` (when the destination is a plain Subscription).
 *
 * The handlers object is kept as it is and its handlers are called as its
 * methods. On a path every value takes, make it an instance of a class
 * declared at module level rather than a literal of closures: a closure made
 * per subscription holds the only strong reference to its optimized code, so
 * a full GC between runs throws that code away and every run pays to
 * optimize it again, while a prototype method keeps it for the process.
 * (Measured with an async-generator source and a full GC before each run,
 * together with the resident hidden classes of `resident.ts`: TEXT 10k
 * went from 2.6–3.0 to 1.5–1.75 µs of CPU per delta, TOOLS from 355 to
 * 240–250 µs per turn.)
 *
 * @example
 * source.subscribe(linked(subscriber, { next: (v) => subscriber.next(f(v)) }))
 */
export function linked<T>(destination: Subscriber<unknown> | Subscription, handlers: LinkedHandlers<T>, errorTo?: ErrorSink, Link: LinkClass<T> = LinkedObserver): LinkedObserver<T> {
  const sink: ErrorSink | undefined = errorTo ?? ('error' in destination ? destination : undefined)
  const observer = new Link(handlers, sink, 'complete' in destination ? destination : undefined)
  destination.add(observer)
  return observer
}

// Its hidden class outlives a run (see `resident`).
resident(new LinkedObserver<unknown>({ next: () => undefined }, undefined, undefined))
