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
 *
 * An event is stamped (`event-stamp.ts`) when someone gets it: at once when
 * this run's `events$` has a live subscriber (or the agent a listener: see
 * `ActiveRun.emit`), else when a late subscriber replays it — once, kept
 * stamped from then on. A run no one follows stamps nothing: one object
 * less per event, two per tool result (agent-tools 200: see `ActiveRun`).
 */
import { Observable, Subject } from 'rxjs'
import type { AgentEvent } from '../types/event.js'
import type { AgentOwnEvent, AgentRunEvent } from './agent-events.js'
import { stamped } from './event-stamp.js'

/** An event as kept: stamped, or not yet (then its turn index is kept beside it). */
type Kept = AgentRunEvent | AgentEvent | AgentOwnEvent
/** The turn index beside a kept event that is already stamped. */
const STAMPED = -1

const byEvents = new WeakMap<Observable<AgentRunEvent>, RunReplay>()

/** The replay behind a run's `events$`: see the module comment. */
export class RunReplay {
  /** Kept events; a dropped one leaves a hole until the next compaction. */
  private kept: (Kept | undefined)[] = []
  /** The turn index of each kept event not stamped yet; {@link STAMPED} for one that is. */
  private turns: number[] = []
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
      const event = this.stampedAt(i)
      if (event !== undefined) subscriber.next(event)
      if (subscriber.closed) return
    }
    if (this.ended === 'complete') return subscriber.complete()
    if (this.ended !== undefined) return subscriber.error(this.ended.error)
    return this.live.subscribe(subscriber)
  })

  constructor(
    private readonly agentId: string,
    private readonly runId: string,
  ) {
    byEvents.set(this.events$, this)
  }

  /** Whether the run's `events$` has a live subscriber: who emits must stamp its events (see the module comment). */
  get observed(): boolean {
    return this.live.observed
  }

  /** How many events are kept now (holes excluded). */
  get size(): number {
    return this.kept.length - this.holes
  }

  /** A stamped event: kept, and told the live subscribers. */
  next(event: AgentRunEvent, type: AgentRunEvent['type'] = event.type): void {
    if (this.ended !== undefined) return
    this.record(event, STAMPED, type)
    // No one subscribed to this run's `events$` (the common case): no `Subject.next` per delta.
    if (this.live.observed) this.live.next(event)
  }

  /** An event of turn `turnIndex` no one gets now (not {@link observed}): kept, to be stamped if someone replays it. */
  nextUnstamped(event: AgentEvent | AgentOwnEvent, turnIndex: number, type: Kept['type'] = event.type): void {
    if (this.ended !== undefined) return
    this.record(event, turnIndex, type)
  }

  /** Keeps `event`, whose `type` is `type` (read once by the run: a megamorphic lookup, see `ActiveRun.next`). */
  private record(event: Kept, turnIndex: number, type: Kept['type']): void {
    switch (type) {
      case 'messageUpdate':
        if (this.partial >= 0) this.put(this.partial, event, turnIndex)
        else this.partial = this.keep(event, turnIndex)
        break
      case 'messageEnd':
      case 'streamRetry':
      case 'modelFallback':
        this.drop(this.partial)
        this.partial = -1
        this.keep(event, turnIndex)
        break
      case 'toolExecutionUpdate': {
        const { toolCallId } = event as Extract<Kept, { type: 'toolExecutionUpdate' }>
        const at = this.toolUpdates.get(toolCallId)
        if (at === undefined) this.toolUpdates.set(toolCallId, this.keep(event, turnIndex))
        else this.put(at, event, turnIndex)
        break
      }
      case 'toolExecutionEnd': {
        const { toolCallId } = event as Extract<Kept, { type: 'toolExecutionEnd' }>
        this.drop(this.toolUpdates.get(toolCallId) ?? -1)
        this.toolUpdates.delete(toolCallId)
        this.keep(event, turnIndex)
        break
      }
      default:
        this.keep(event, turnIndex)
    }
  }

  /** The kept event at `i`, stamped (and kept stamped: every late subscriber gets the same object). */
  private stampedAt(i: number): AgentRunEvent | undefined {
    const event = this.kept[i]
    const turnIndex = this.turns[i]!
    if (event === undefined || turnIndex === STAMPED) return event as AgentRunEvent | undefined
    const stampedEvent = stamped(event as AgentEvent | AgentOwnEvent, this.agentId, this.runId, turnIndex)
    this.put(i, stampedEvent, STAMPED)
    return stampedEvent
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

  private keep(event: Kept, turnIndex: number): number {
    this.kept.push(event)
    this.turns.push(turnIndex)
    return this.kept.length - 1
  }

  private put(at: number, event: Kept, turnIndex: number): void {
    this.kept[at] = event
    this.turns[at] = turnIndex
  }

  private drop(at: number): void {
    if (at < 0) return
    this.kept[at] = undefined
    if (++this.holes > 64 && this.holes * 2 > this.kept.length) this.compact()
  }

  /** Removes the holes and moves the indices that point past them. */
  private compact(): void {
    const moved = new Map<number, number>()
    const kept: Kept[] = []
    const turns: number[] = []
    this.kept.forEach((event, i) => {
      if (event === undefined) return
      moved.set(i, kept.length)
      kept.push(event)
      turns.push(this.turns[i]!)
    })
    this.kept = kept
    this.turns = turns
    this.holes = 0
    if (this.partial >= 0) this.partial = moved.get(this.partial) ?? -1
    for (const [id, at] of this.toolUpdates) this.toolUpdates.set(id, moved.get(at) ?? -1)
  }
}

/** How many events the replay behind a run's `events$` keeps now (for tests of its memory bound); `undefined` for another Observable. */
export function retainedEventCount(events$: Observable<AgentRunEvent>): number | undefined {
  return byEvents.get(events$)?.size
}
