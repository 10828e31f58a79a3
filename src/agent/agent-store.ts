/**
 * An agent's log and its fold: `append` gives a command its position, folds
 * it into the state (`reduceAgentLog`) and publishes both. The state and
 * the log never disagree: an entry the reducer refuses is not appended.
 */
import { BehaviorSubject, Subject, type Observable } from 'rxjs'
import type { ProviderChunk } from '../types/chunk.js'
import type { AgentEndEvent, AgentEvent, MessageUpdateEvent, PolicyDecisionEvent } from '../types/event.js'
import type { AssistantMessage } from '../types/message.js'
import type { AgentTool } from '../types/tool.js'
import type { AgentLogCommand, AgentLogEntry, InitEntry } from './agent-log.js'
import { foldAgentLog, reduceAgentLog, stateOfInit, withStreamMessage, type ToolResolver } from './agent-reducer.js'
import type { AgentState } from './agent-state.js'
import { StreamMarker } from './stream-marks.js'

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

/** See the module comment. */
export class AgentStore {
  private entries: AgentLogEntry[]
  private readonly state$$: BehaviorSubject<AgentState>
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

  /** @param now the agent's clock (its scheduler's `now`): the times of a streamed message's marks. */
  constructor(init: Omit<InitEntry, 'seq'>, tools: readonly AgentTool[], now: () => number) {
    this.marker = new StreamMarker(now)
    this.know(tools)
    const entry: AgentLogEntry = { ...init, seq: 0 }
    this.entries = [entry]
    this.state$$ = new BehaviorSubject(stateOfInit(entry, this.resolve))
    this.state$ = this.state$$.asObservable()
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
    const entry = { ...command, seq: this.entries.length } as AgentLogEntry
    const state = reduceAgentLog(this.state$$.value, entry, this.resolve)
    this.entries.push(entry)
    if (state !== this.state$$.value) this.state$$.next(state)
    this.log$$.next(entry)
    return entry
  }

  /** Logs what a run's `event` changes (the streamed message only transiently). @throws what the reducer throws. */
  record(event: AgentEvent): void {
    if (event.type !== 'messageUpdate') return this.recordLogged(event)
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
   * Every event but a delta, out of `record` (see `recordEnd`): in a run of one long answer
   * they come once between the deltas, and inlined in `record` deoptimized it at the answer's end.
   */
  private recordLogged(event: Exclude<AgentEvent, MessageUpdateEvent>): void {
    switch (event.type) {
      case 'messageStart':
        if (event.message.role === 'assistant') {
          this.chunks?.({ type: 'messageStart', id: event.message.responseId ?? '', model: event.message.model })
          this.stream(event.message)
        }
        return
      case 'streamRetry':
        this.marker.retry(event)
        this.chunks?.({ type: 'retry', attempt: event.attempt, delayMs: event.delayMs, error: event.error })
        return this.stream(undefined)
      case 'modelFallback':
        this.marker.fallback(event)
        this.chunks?.({ type: 'retry', attempt: 0, delayMs: 0, error: event.error, model: event.to })
        return this.stream(undefined)
      case 'agentStart':
        this.append({ type: 'agentStart' })
        return
      case 'turnStart':
        this.marker.turnStart()
        this.append({ type: 'turnStart', turnIndex: event.turnIndex })
        return
      case 'turnEnd':
        this.append({ type: 'turnEnd', turnIndex: event.turnIndex })
        return
      case 'messageEnd': {
        const stream = event.message.role === 'assistant' ? this.marker.end() : undefined
        this.append(stream === undefined ? { type: 'messageEnd', message: event.message } : { type: 'messageEnd', message: event.message, stream })
        return
      }
      case 'toolExecutionStart':
      case 'toolExecutionEnd':
        this.append({ type: event.type, toolCallId: event.toolCallId })
        return
      case 'policyDecision':
        return this.recordDecision(event)
      case 'agentEnd':
        return this.recordEnd(event)
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
    this.append(error === undefined ? { type: 'agentEnd', stopReason } : { type: 'agentEnd', stopReason, error })
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
