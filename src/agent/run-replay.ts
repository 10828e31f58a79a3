/**
 * A run's events for whoever subscribes late, in bounded memory.
 *
 * A `ReplaySubject` would keep every event of the run, a streamed answer's
 * every delta included: memory growing with the number of deltas. This keeps
 * what a late subscriber needs to catch up — every event except deltas, and
 * of the deltas only the latest `messageUpdate` of the message still streaming
 * (its `message` is the answer so far) and the latest `toolExecutionUpdate`
 * of each call still running — so its size is bounded by the transcript.
 *
 * ```
 * run:        S-u-u-u-E-t-T-u-u-
 * late sub:                  ^ gets S-E-t-T-u (u = the latest update), then what follows live
 * ```
 */
import { Observable, Subject } from 'rxjs'
import type { AgentRunEvent } from './agent-events.js'

const byEvents = new WeakMap<Observable<AgentRunEvent>, RunReplay>()

/** The replay behind a run's `events$`: see the module comment. */
export class RunReplay {
  /** Kept events; a dropped one leaves a hole until the next compaction. */
  private kept: (AgentRunEvent | undefined)[] = []
  private holes = 0
  /** Where the latest `messageUpdate` of the message streaming now is kept. */
  private partial = -1
  /** Where the latest `toolExecutionUpdate` of each running call is kept. */
  private readonly toolUpdates = new Map<string, number>()
  private readonly live = new Subject<AgentRunEvent>()
  private ended: { readonly error: unknown } | 'complete' | undefined

  /** What late subscribers get: the kept events, then the live ones. */
  readonly events$: Observable<AgentRunEvent> = new Observable<AgentRunEvent>((subscriber) => {
    // By index: an event emitted while replaying (a subscriber that steers) is kept and replayed too.
    for (let i = 0; i < this.kept.length; i++) {
      const event = this.kept[i]
      if (event !== undefined) subscriber.next(event)
      if (subscriber.closed) return
    }
    if (this.ended === 'complete') return subscriber.complete()
    if (this.ended !== undefined) return subscriber.error(this.ended.error)
    return this.live.subscribe(subscriber)
  })

  constructor() {
    byEvents.set(this.events$, this)
  }

  /** How many events are kept now (holes excluded). */
  get size(): number {
    return this.kept.length - this.holes
  }

  next(event: AgentRunEvent): void {
    if (this.ended !== undefined) return
    switch (event.type) {
      case 'messageUpdate':
        if (this.partial >= 0) this.kept[this.partial] = event
        else this.partial = this.keep(event)
        break
      case 'messageEnd':
      case 'streamRetry':
      case 'modelFallback':
        this.drop(this.partial)
        this.partial = -1
        this.keep(event)
        break
      case 'toolExecutionUpdate': {
        const at = this.toolUpdates.get(event.toolCallId)
        if (at === undefined) this.toolUpdates.set(event.toolCallId, this.keep(event))
        else this.kept[at] = event
        break
      }
      case 'toolExecutionEnd':
        this.drop(this.toolUpdates.get(event.toolCallId) ?? -1)
        this.toolUpdates.delete(event.toolCallId)
        this.keep(event)
        break
      default:
        this.keep(event)
    }
    // No one subscribed to this run's `events$` (the common case): no `Subject.next` per delta.
    if (this.live.observed) this.live.next(event)
  }

  complete(): void {
    if (this.ended !== undefined) return
    this.ended = 'complete'
    this.live.complete()
  }

  error(error: unknown): void {
    if (this.ended !== undefined) return
    this.ended = { error }
    this.live.error(error)
  }

  private keep(event: AgentRunEvent): number {
    this.kept.push(event)
    return this.kept.length - 1
  }

  private drop(at: number): void {
    if (at < 0) return
    this.kept[at] = undefined
    if (++this.holes > 64 && this.holes * 2 > this.kept.length) this.compact()
  }

  /** Removes the holes and moves the indices that point past them. */
  private compact(): void {
    const moved = new Map<number, number>()
    const kept: AgentRunEvent[] = []
    this.kept.forEach((event, i) => {
      if (event === undefined) return
      moved.set(i, kept.length)
      kept.push(event)
    })
    this.kept = kept
    this.holes = 0
    if (this.partial >= 0) this.partial = moved.get(this.partial) ?? -1
    for (const [id, at] of this.toolUpdates) this.toolUpdates.set(id, moved.get(at) ?? -1)
  }
}

/** How many events the replay behind a run's `events$` keeps now (for tests of its memory bound); `undefined` for another Observable. */
export function retainedEventCount(events$: Observable<AgentRunEvent>): number | undefined {
  return byEvents.get(events$)?.size
}
