/**
 * One turn's batch of tool calls as `dispatchTools` runs it: the calls'
 * outcomes, the run's stop and cancellation, the calls run under the
 * execution policy, and the results that conclude the batch.
 *
 * A class rather than closures made per turn: a closure made per turn holds
 * the only strong reference to its optimized code, so a full GC between two
 * runs threw that code away and every run paid to optimize it again (with a
 * full GC before each run, as the bench does, `--trace-opt` showed the
 * closures that ran the calls compiled again in every run). Prototype
 * methods keep their code for the process. Measured: TOOLS 200 turns, two
 * full GCs before each run (outside the count), callgrind, node
 * --single-threaded: 334 → 316–318 million instructions per run.
 *
 * Internal: not exported from the package.
 */
import { Observable, Subject, Subscription, type SchedulerLike, type Subscriber } from 'rxjs'
import { linked } from '../src/rx/linked-observer.js'
import { resident, unused } from '../src/rx/resident.js'
import { eventsTo, type EventSink } from '../src/turn/event-relay.js'
import { callUser, CallbackError } from '../src/rx/user-callback.js'
import { executionStart, type Planned } from '../src/tools/plan-call.js'
import { errorOutput, startTool, type ToolRunEvent } from '../src/tools/run-tool.js'
import type { ToolCallContent } from '../src/types/content.js'
import type { AgentEvent } from '../src/types/event.js'
import type { AgentMessage, ToolResultMessage } from '../src/types/message.js'
import type { ToolOutput } from '../src/types/tool.js'
import { appended, draftWithMessages, type LoopStop, type TurnItem, type TurnState } from '../src/turn/turn-state.js'
import { cancelledText, frozenResult, type Outcome } from './dispatch-results.js'

/** What of `DispatchToolsOptions` running the calls needs. */
export interface BatchOptions {
  readonly scheduler: SchedulerLike
  readonly toolTimeoutMs?: number
  readonly interruptOnSteering?: () => readonly AgentMessage[]
}

/**
 * The calls of one answer, from their plans to the results that join the
 * transcript. Also the handler of the batch's events (`next`, `complete`):
 * they go to the turn's subscriber, and the completion concludes the batch.
 */
export class CallBatch {
  readonly outcomes: (Outcome | undefined)[]
  /** Steering messages that interrupted the batch: they join the next turn. */
  readonly steering: AgentMessage[] = []
  /** The plans, in the order they were made. */
  readonly planned: Planned[] = []
  stop: LoopStop | undefined
  cancelled: 'abort' | 'steering' | undefined = undefined
  readonly cancel$ = new Subject<void>()
  /** The observer of the calls' events while they run (see {@link CallBatch.run}), and the policy's counters. */
  private o: Subscriber<AgentEvent> | undefined = undefined
  private nextCall = 0
  private active = 0
  private starting = false
  /** Where the batch's events go (see `next`). */
  private readonly events: EventSink

  constructor(
    private readonly options: BatchOptions,
    private readonly concurrency: number,
    private readonly state: TurnState,
    readonly calls: readonly ToolCallContent[],
    private readonly subscriber: Subscriber<TurnItem>,
  ) {
    this.outcomes = new Array(calls.length)
    this.stop = state.stop
    this.events = eventsTo(subscriber)
  }

  /** How the run stops, if it is stopping (planning reads it through a bound method: see `dispatchBatch`). */
  currentStop(): LoopStop | undefined {
    return this.stop
  }

  /** The run stops (a pre-dispatch policy said so). */
  stopWith(stop: LoopStop): void {
    this.stop = stop
  }

  /** Cancels what is running and what waits: by an abort (the run stops) or steering. */
  cancelAll(why: 'abort' | 'steering'): void {
    if (this.cancelled !== undefined) return
    this.cancelled = why
    if (why === 'abort') this.stop = { reason: 'aborted', message: 'the run was aborted during tool execution' }
    this.cancel$.next()
  }

  /** Every planned call under the execution policy (at most `concurrency` at a time); completes when all have outcomes. Subscribed once. */
  run(): Observable<AgentEvent> {
    return new Observable<AgentEvent>(this.begin.bind(this))
  }

  /** The subscription of {@link CallBatch.run}: a bound method, not a closure made per turn (see `pullFrom` in from-async-iterable.ts). */
  private begin(o: Subscriber<AgentEvent>): void {
    this.o = o
    this.startMore()
  }

  /** A loop rather than recursion: calls that finish at once free their slot inside it. */
  private startMore(): void {
    if (this.starting) return
    const o = this.o!
    this.starting = true
    while (this.active < this.concurrency && this.nextCall < this.planned.length && !o.closed) {
      this.active++
      this.execute(this.planned[this.nextCall++]!, o)
    }
    this.starting = false
    if (this.active === 0 && this.nextCall >= this.planned.length) o.complete()
  }

  /** A call has its outcome and has let go of what it held: its slot is free. */
  private release(): void {
    this.active--
    if (!this.o!.closed) this.startMore()
  }

  /**
   * Starts one call: its execution events go to `o`. A synchronous tool is
   * answered at once, with no Observable and no subscription: most tools
   * are, and a turn runs several.
   */
  private execute({ index, plan }: Planned, o: Subscriber<AgentEvent>): void {
    const { call } = plan
    o.next(executionStart(plan))
    if (this.cancelled !== undefined) return this.finish(index, call, errorOutput(cancelledText[this.cancelled].waiting), true, undefined)
    if (plan.kind === 'answer') return this.finish(index, call, errorOutput(plan.message), true, undefined)
    const timeoutMs = plan.tool.timeoutMs ?? this.options.toolTimeoutMs
    const scheduler = this.options.scheduler
    const start = startTool(plan.tool, plan.args, timeoutMs === undefined ? { toolCallId: call.id, scheduler } : { toolCallId: call.id, scheduler, timeoutMs })
    if ('ended' in start) return this.finish(index, call, start.ended.output, start.ended.isError, undefined)
    new RunningCall(this, index, call, o).follow(start.running)
  }

  /**
   * A call's outcome: its end event, then (before its slot is freed: a call
   * must not start if steering is about to interrupt the batch) the steering
   * poll, then what it held is let go and its slot freed.
   */
  finish(index: number, call: ToolCallContent, output: ToolOutput, isError: boolean, running: Subscription | undefined): void {
    const o = this.o!
    this.outcomes[index] = { output, isError }
    o.next({ type: 'toolExecutionEnd', toolCallId: call.id, toolName: call.name, result: output, isError })
    const interrupt = this.options.interruptOnSteering
    if (interrupt !== undefined && this.cancelled === undefined) {
      const found = callUser('steering source', interrupt)
      // A failing source ends the run after this batch; the calls already planned still run.
      if (found instanceof CallbackError) this.stop ??= { reason: 'error', message: found.message }
      else if (found.length > 0) {
        this.steering.push(...found)
        this.cancelAll('steering')
      }
    }
    if (running !== undefined) {
      o.remove(running)
      running.unsubscribe()
    }
    this.release()
  }

  /**
   * An event of the batch (planning, running). The batch's events go past the relays downstream
   * (see `event-relay.ts`), as a streamed answer's do: the stage's answer would only check each for a state and pass it on. With the result
   * messages' events: TOOLS 200 turns, callgrind (40 warm-up runs, then 4 after two full GCs each,
   * node --single-threaded): 50.07 -> 49.40 M instructions a run (megamorphic loads 0.48 M fewer).
   */
  next(event: AgentEvent): void {
    this.events.next(event)
  }

  /** The results, in call order, join the transcript, frozen (see {@link frozenResult}). */
  complete(): void {
    const { subscriber, state, calls, outcomes } = this
    const now = this.options.scheduler.now()
    const results: ToolResultMessage[] = []
    for (let i = 0; i < calls.length; i++) {
      const { output, isError } = outcomes[i] ?? { output: errorOutput('Tool call produced no result.'), isError: true }
      const { id: toolCallId, name: toolName } = calls[i]!
      const content = output.content
      const details: unknown = output.details
      results.push(
        frozenResult(
        details === undefined
          ? { role: 'toolResult', toolCallId, toolName, content, isError, timestamp: now }
            : { role: 'toolResult', toolCallId, toolName, content, isError, timestamp: now, details },
        ),
      )
    }
    const events = this.events
    for (const message of results) {
      events.next({ type: 'messageStart', message })
      events.next({ type: 'messageEnd', message })
    }
    const stop = this.stop
    const pending = appended(state.pending, this.steering)
    const next = draftWithMessages(state, results)
    next.toolResults = results
    next.pending = pending
    if (stop !== undefined) next.stop = stop
    subscriber.next(Object.freeze(next))
    subscriber.complete()
  }
}

/** A call whose tool returned a Promise or an Observable: it ends once, by its end or by a cancellation. */
class RunningCall {
  private finished = false
  private running: Subscription | undefined = undefined

  constructor(
    private readonly batch: CallBatch,
    private readonly index: number,
    private readonly call: ToolCallContent,
    private readonly o: Subscriber<AgentEvent>,
  ) {}

  follow(running: Observable<ToolRunEvent>): void {
    const { batch, call, o } = this
    const held = new Subscription()
    this.running = held
    o.add(held)
    held.add(batch.cancel$.subscribe(() => this.finish(errorOutput(cancelledText[batch.cancelled ?? 'abort'].running), true)))
    // Added to a closed `held` (the call already finished) it is torn down at once.
    held.add(
      running.subscribe(
        linked(
          held,
          {
            next: (event) =>
              event.type === 'update'
                ? o.next({ type: 'toolExecutionUpdate', toolCallId: call.id, toolName: call.name, partialResult: event.output })
                : this.finish(event.output, event.isError),
            error: (error: unknown) => o.error(error),
          },
          o,
        ),
      ),
    )
  }

  private finish(output: ToolOutput, isError: boolean): void {
    if (this.finished) return
    this.finished = true
    this.batch.finish(this.index, this.call, output, isError, this.running)
  }
}

// Its hidden class outlives a run (see `resident`).
resident(new CallBatch(unused, 0, { stop: undefined } as TurnState, [], unused))
