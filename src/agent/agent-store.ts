/**
 * An agent's log and its fold: `append` gives a command its position, folds
 * it into the state (`reduceAgentLog`) and publishes both. The state and
 * the log never disagree: an entry the reducer refuses is not appended.
 */
import { asyncScheduler, Observable, Subject, type Subscriber } from 'rxjs'
import type { ProviderChunk } from '../types/chunk.js'
import type { AgentEndEvent, AgentEvent, MessageUpdateEvent, PolicyDecisionEvent } from '../types/event.js'
import type { AssistantMessage } from '../types/message.js'
import type { AgentTool } from '../types/tool.js'
import type { AgentLogCommand, AgentLogEntry, InitEntry } from './agent-log.js'
import { foldAgentLog, reduceAgentLog, stateOfInit, withStreamMessage, type ToolResolver } from './agent-reducer.js'
import type { AgentState } from './agent-state.js'
import { StreamMarker, type Clock } from './stream-marks.js'
import { resident } from '../rx/resident.js'
// The states a run builds, kept for the process (see the module).
import { residentInit } from './resident-states.js'

/**
 * Up to this many content blocks, `streamMessage` follows every chunk. A
 * snapshot copies the message's block list, so past it (a message of
 * thousands of tool calls: hostile output) a snapshot per chunk made
 * streaming quadratic — 8,000 calls took 3.9 s in the Agent against 0.17 s
 * in `agentLoop`. Past it, `streamMessage` is refreshed once every
 * `blocks / REFRESHES_PER_SIZE` chunks: at most {@link REFRESHES_PER_SIZE}
 * block copies per chunk on average, linear in the stream. The message's
 * `messageEnd` is always exact.
 */
export const LARGE_MESSAGE_BLOCKS = 256
/** See {@link LARGE_MESSAGE_BLOCKS}. */
const REFRESHES_PER_SIZE = 64

/**
 * What a `BehaviorSubject` did for the store's snapshots — the current one to
 * a new subscriber, then every one after to every subscriber, in the order
 * they subscribed — without RxJS's allocations per emission: `Subject.next`
 * wraps its loop in a closure (`errorContext`) and walks its observers with a
 * downleveled `for…of` (an iterator and its result objects), about 200 bytes
 * for every delta of a streamed answer. The observers are a copy-on-write
 * array: one that subscribes or unsubscribes during an emission changes the
 * next emissions, not this one (as with a Subject; one unsubscribed is not
 * called, its subscriber being closed). A subscriber's throw is its own, as
 * with any RxJS subscriber (reported, never thrown into the store).
 */
class Snapshots {
  private observers: readonly Subscriber<AgentState>[] = []
  readonly state$: Observable<AgentState>

  constructor(public value: AgentState) {
    this.state$ = new Observable<AgentState>((subscriber) => {
      this.observers = [...this.observers, subscriber]
      subscriber.next(this.value)
      return () => {
        this.observers = this.observers.filter((o) => o !== subscriber)
      }
    })
  }

  next(value: AgentState): void {
    this.value = value
    const observers = this.observers
    for (let i = 0; i < observers.length; i++) observers[i]!.next(value)
  }
}

/** The event of type `K`. */
type Of<K extends AgentEvent['type']> = Extract<AgentEvent, { type: K }>

/** See the module comment. */
export class AgentStore {
  private entries: AgentLogEntry[]
  private readonly state$$: Snapshots
  private readonly log$$ = new Subject<AgentLogEntry>()
  /** The tools a `tools` entry can name: every tool the agent was given. */
  private readonly toolbox = new Map<string, AgentTool>()
  private readonly resolve: ToolResolver = (names) =>
    names.map((name) => {
      const tool = this.toolbox.get(name)
      if (tool === undefined) throw new Error(`the log names a tool '${name}' this agent was not given`)
      return tool
    })

  /**
   * Where the chunks of a streamed assistant message go as they arrive (a
   * durable session's writer), or nowhere: its `messageStart` (as a chunk),
   * each content chunk, and a `retry` chunk when an attempt is discarded.
   */
  chunks: ((chunk: ProviderChunk) => void) | undefined = undefined

  /** Immutable snapshots, one per change; replays the current one to new subscribers. */
  readonly state$: Observable<AgentState>
  /** Every entry appended from now on. */
  readonly log$: Observable<AgentLogEntry> = this.log$$.asObservable()
  /** The marks of the message streaming now, for its `messageEnd` (`stream-marks.ts`). */
  private readonly marker: StreamMarker
  /** Chunks of the message streaming now not yet in `streamMessage` (see {@link LARGE_MESSAGE_BLOCKS}). */
  private unshown = 0

  /** @param clock the agent's clock (its scheduler): the times of a streamed message's marks. */
  constructor(init: Omit<InitEntry, 'seq'>, tools: readonly AgentTool[], clock: Clock) {
    this.marker = new StreamMarker(clock)
    this.know(tools)
    const entry: AgentLogEntry = { ...init, seq: 0 }
    this.entries = [entry]
    this.state$$ = new Snapshots(stateOfInit(entry, this.resolve))
    this.state$ = this.state$$.state$
  }

  get state(): AgentState {
    return this.state$$.value
  }

  /** The log, oldest first; an entry's `seq` is its index. */
  get log(): readonly AgentLogEntry[] {
    return this.entries
  }

  /** Makes `tools` nameable by the entries to come. */
  know(tools: readonly AgentTool[]): void {
    for (const tool of tools) this.toolbox.set(tool.name, tool)
  }

  /** Appends `command` at the next position. @throws what the reducer throws (the entry is then not appended). */
  append(command: AgentLogCommand): AgentLogEntry {
    return this.commit({ ...command, seq: this.entries.length } as AgentLogEntry)
  }

  /** The position the next entry takes. */
  private get next(): number {
    return this.entries.length
  }

  /**
   * Appends `entry`, built at {@link next} (a run's events build theirs with their `seq`
   * rather than as a command copied by {@link append}: one object per entry, not two).
   */
  private commit(entry: AgentLogEntry): AgentLogEntry {
    const state = reduceAgentLog(this.state$$.value, entry, this.resolve)
    this.entries.push(entry)
    if (state !== this.state$$.value) this.state$$.next(state)
    // No one follows the log (an agent without a durable session): no `Subject.next`, which allocates.
    if (this.log$$.observed) this.log$$.next(entry)
    return entry
  }

  /**
   * Logs what a run's `messageUpdate` changes: the streamed message, transiently. Every other event
   * goes to {@link recordEntry}: the run's handler reads each event's `type` once and calls the one
   * that applies (see `ActiveRun.next`). @throws what the reducer throws.
   */
  recordUpdate(event: MessageUpdateEvent): void {
    const chunks = this.chunks
    if (chunks !== undefined) chunks(event.chunk)
    if (this.marker.awaitingChunk) this.marker.chunk(event.chunk)
    // A snapshot copies the message's block list: past LARGE_MESSAGE_BLOCKS blocks, one every blocks / REFRESHES_PER_SIZE chunks keeps the stream linear.
    const blocks = event.contentIndex + 1
    if (blocks > LARGE_MESSAGE_BLOCKS && ++this.unshown * REFRESHES_PER_SIZE < blocks) return
    this.unshown = 0
    return this.stream(event.message)
  }

  /**
   * Every event but a delta, apart from {@link recordUpdate} (see `recordEnd`): in a run of one
   * long answer they come once between the deltas, and inlined in the delta path they deoptimized
   * it at the answer's end. A run's handler of those events calls it directly (`ActiveRun.other`).
   */
  recordEntry(event: Exclude<AgentEvent, MessageUpdateEvent>, type: Exclude<AgentEvent, MessageUpdateEvent>['type'] = event.type): void {
    // Switched on `type`, read once by the caller (a megamorphic lookup: see `ActiveRun.next`).
    switch (type) {
      case 'messageStart': {
        const { message } = event as Of<'messageStart'>
        if (message.role === 'assistant') {
          this.chunks?.({ type: 'messageStart', id: message.responseId ?? '', model: message.model })
          this.stream(message)
        }
        return
      }
      case 'streamRetry': {
        const retry = event as Of<'streamRetry'>
        this.marker.retry(retry)
        this.chunks?.({ type: 'retry', attempt: retry.attempt, delayMs: retry.delayMs, error: retry.error })
        return this.stream(undefined)
      }
      case 'modelFallback': {
        const fallback = event as Of<'modelFallback'>
        this.marker.fallback(fallback)
        this.chunks?.({ type: 'retry', attempt: 0, delayMs: 0, error: fallback.error, model: fallback.to })
        return this.stream(undefined)
      }
      // Each entry built as it is logged, `seq` last (as `append` puts it).
      case 'agentStart':
        this.commit({ type: 'agentStart', seq: this.next })
        return
      case 'turnStart':
        this.marker.turnStart()
        this.commit({ type: 'turnStart', turnIndex: (event as Of<'turnStart'>).turnIndex, seq: this.next })
        return
      case 'turnEnd':
        this.commit({ type: 'turnEnd', turnIndex: (event as Of<'turnEnd'>).turnIndex, seq: this.next })
        return
      case 'messageEnd': {
        const { message } = event as Of<'messageEnd'>
        const stream = message.role === 'assistant' ? this.marker.end() : undefined
        this.commit(stream === undefined ? { type: 'messageEnd', message, seq: this.next } : { type: 'messageEnd', message, stream, seq: this.next })
        return
      }
      case 'toolExecutionStart':
      case 'toolExecutionEnd':
        this.commit({ type, toolCallId: (event as Of<'toolExecutionStart' | 'toolExecutionEnd'>).toolCallId, seq: this.next })
        return
      case 'policyDecision':
        return this.recordDecision(event as Of<'policyDecision'>)
      case 'agentEnd':
        return this.recordEnd(event as Of<'agentEnd'>)
      default:
        return
    }
  }

  // The events met once in a run, out of `record`: inlined there, their type feedback was gone
  // after a full GC between runs and threw `record`'s optimized code away at every run's end.

  private recordDecision(event: PolicyDecisionEvent): void {
    const { slot, policy, action, reason, toolCallId } = event
    this.append({ type: 'policyDecision', slot, policy, action, ...(reason === undefined ? {} : { reason }), ...(toolCallId === undefined ? {} : { toolCallId }) })
  }

  private recordEnd(event: AgentEndEvent): void {
    const { stopReason, error } = event.result
    this.commit(error === undefined ? { type: 'agentEnd', stopReason, seq: this.next } : { type: 'agentEnd', stopReason, error, seq: this.next })
  }

  /** The transient update of the message streaming now (not logged: see `agent-reducer.ts`). */
  stream(message: AssistantMessage | undefined): void {
    this.unshown = 0
    const state = withStreamMessage(this.state$$.value, message)
    if (state !== this.state$$.value) this.state$$.next(state)
  }

  /** Replaces the log with `entries` (decoded, from `init`) and the state with their fold. */
  load(entries: readonly AgentLogEntry[]): void {
    const state = foldAgentLog(entries, this.resolve)
    this.entries = [...entries]
    this.state$$.next(state)
  }
}

// A store's hidden classes (its own, its snapshots') outlive an Agent (see `resident`): each Agent
// builds a store of its own, so none was alive between two Agents, and the first full GC after a
// process's warm-up runs threw away the code of the store's per-event path with their maps
// (`commit`, `record`, `recordEntry`, `stream`, `next`, … "weak objects", agent-tools after 30
// warm-up runs, 3 processes of 3, `--trace-deopt`; the maps compared with `--print-opt-code`).
resident(new AgentStore(residentInit(), [], asyncScheduler))
