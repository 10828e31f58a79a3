/**
 * The Agent's listeners and forwarders: every event to each of them, each
 * isolated — a listener that throws or rejects is reported (a
 * `listenerError` event and `onListenerError`) and never breaks the run or
 * the others.
 */
import { Subject, type Observable, type Subscription } from 'rxjs'
import { errorText } from '../types/codec.js'
import { callUser, CallbackError, isThenable } from '../rx/user-callback.js'
import type { AgentRunEvent, ListenerErrorEvent } from './agent-events.js'

interface Listener {
  readonly name: string
  readonly fn: (event: AgentRunEvent) => void
}

/** See the module comment. */
export class ListenerHub {
  private readonly events$$ = new Subject<AgentRunEvent>()
  private readonly listeners = new Set<Listener>()
  /** Every event, multicast. */
  readonly events$: Observable<AgentRunEvent> = this.events$$.asObservable()

  constructor(
    /** Emits a `listenerError` event (the agent stamps it). */
    private readonly report: (event: ListenerErrorEvent) => void,
    private readonly onListenerError: ((error: unknown, event: AgentRunEvent) => void) | undefined,
  ) {}

  /** Whether anyone listens: who emits need not stamp an event for no one (see `ActiveRun.emit`). */
  get observed(): boolean {
    return this.events$$.observed
  }

  /** Tells every listener. */
  emit(event: AgentRunEvent): void {
    // No listener, no `Subject.next` (an RxJS `next` allocates a closure): a delta costs a test here.
    if (this.events$$.observed) this.events$$.next(event)
  }

  /** Adds a listener; its default name counts the listeners so far. */
  subscribe(listener: (event: AgentRunEvent) => void, name = `listener ${this.listeners.size + 1}`): Subscription {
    const entry: Listener = { name, fn: listener }
    this.listeners.add(entry)
    const subscription = this.events$$.subscribe({ next: (event) => this.call(entry.name, () => entry.fn(event), event) })
    subscription.add(() => this.listeners.delete(entry))
    return subscription
  }

  /** The name the next forwarder gets. */
  nextForwarderName(): string {
    return `forwarder ${this.listeners.size + 1}`
  }

  /**
   * Calls a listener, forwarder or collector: a throw, or a rejection of the
   * Promise it returned (an `async` listener), is reported as a
   * `listenerError` event and to `onListenerError`, never thrown.
   */
  call(name: string, call: () => unknown, event: AgentRunEvent): void {
    const returned = callUser(name, call)
    if (returned instanceof CallbackError) this.failed(name, returned.error, event)
    else if (isThenable(returned)) returned.then(undefined, (error: unknown) => this.failed(name, error, event))
  }

  private failed(name: string, error: unknown, event: AgentRunEvent): void {
    // A failing error hook (thrown or rejected) has nowhere left to report to.
    const hooked: unknown = callUser('onListenerError', () => this.onListenerError?.(error, event))
    if (isThenable(hooked)) hooked.then(undefined, () => undefined)
    if (event.type !== 'listenerError') this.report({ type: 'listenerError', listener: name, error: errorText(error), eventType: event.type })
  }
}
