import { identity, Observable, type MonoTypeOperatorFunction, type SchedulerLike, type Subscriber } from 'rxjs'
import { callModel, type ModelRoute, type OverflowRecovery } from './call-model.js'
import type { ProviderChunk } from '../src/types/chunk.js'
import { retryStream, type RetryOptions } from './retry-stream.js'
import type { LlmRequest, StreamFn, StreamOptions } from '../src/types/request.js'
import { toolSchemaOf, type AgentTool, type ToolSchema } from '../src/types/tool.js'
import type { AssistantStreamEvent } from '../src/types/event.js'
import type { AssistantMessage } from '../src/types/message.js'
import { linked, LinkedObserver } from '../src/rx/linked-observer.js'
import { deferredStream } from '../src/rx/user-callback.js'
import { nextState, withAssistant, type TurnItem, type TurnOperator, type TurnState } from '../src/turn/turn-state.js'
import { accumulated } from './accumulate-message.js'
import { defaultConvertToLlm } from './transform-context.js'
import { onTurnState } from './on-turn-state.js'
import { outOfOrder } from '../src/turn/turn-protocol.js'
import { eventsTo, type EventSink } from '../src/turn/event-relay.js'
import { resident, unused } from '../src/rx/resident.js'

export interface StreamLlmOptions {
  readonly streamFn: StreamFn
  readonly options?: StreamOptions
  /** Timestamps come from here; pass the test scheduler for virtual time. */
  readonly scheduler: SchedulerLike
  /** When this emits, the call is dropped and the message ends `aborted`. */
  readonly abort?: Observable<unknown>
  /** Retries of transient provider errors (default: on, see {@link retryStream}); `false` turns them off. */
  readonly retry?: RetryOptions | false
  /**
   * Models that take over the same turn, in order, when the call fails with a
   * retryable error that outlived its retries; each gets a fresh retry budget.
   */
  readonly fallback?: readonly ModelRoute[]
  /**
   * Asked once per turn when the provider says the context overflowed: a
   * smaller context to retry the turn with (a `compaction` event reports
   * it), or `undefined` to fail. A second overflow fails the turn.
   */
  readonly recoverOverflow?: (state: TurnState) => OverflowRecovery | undefined
  /** How deep parsed tool-call arguments may nest (see `accumulateMessage`). */
  readonly maxArgumentDepth?: number
}

// Tool lists rarely change between turns; their schemas are computed once per list.
const schemaCache = new WeakMap<readonly AgentTool[], readonly ToolSchema[]>()
const noSchemas: readonly ToolSchema[] = Object.freeze([])
function schemasOf(tools: readonly AgentTool[]): readonly ToolSchema[] {
  // No tools: nothing to remember (a run's own empty list would cost a WeakMap entry per run).
  if (tools.length === 0) return noSchemas
  let schemas = schemaCache.get(tools)
  if (schemas === undefined) {
    schemas = tools.map(toolSchemaOf)
    schemaCache.set(tools, schemas)
  }
  return schemas
}

// The default retries on a scheduler: one operator for every run (its state is per subscription).
const defaultRetries = new WeakMap<SchedulerLike, MonoTypeOperatorFunction<ProviderChunk>>()

/** The retries `options` ask for (see {@link retryStream}). */
function retryOf(options: StreamLlmOptions): MonoTypeOperatorFunction<ProviderChunk> {
  if (options.retry === false) return identity
  if (options.retry !== undefined) return retryStream({ scheduler: options.scheduler, ...options.retry })
  let retry = defaultRetries.get(options.scheduler)
  if (retry === undefined) {
    retry = retryStream({ scheduler: options.scheduler })
    defaultRetries.set(options.scheduler, retry)
  }
  return retry
}

/** The request this turn sends. */
export function requestOf(state: TurnState, options?: StreamOptions): LlmRequest {
  const request: LlmRequest = {
    model: state.model,
    systemPrompt: state.context.systemPrompt,
    messages: state.llmMessages ?? defaultConvertToLlm(state.context.messages),
    tools: schemasOf(state.context.tools),
  }
  return options === undefined ? request : { ...request, options }
}

/**
 * Calls the model and streams its answer: `messageStart`, `messageUpdate`s
 * (and `streamRetry` when a transient error made it call again), `messageEnd`; the answer joins the transcript and the run's usage. An
 * answer that ended in `error` or `aborted` stops the run after this turn
 * (its tool calls still get results, from `dispatchTools`). A turn that
 * has its answer already (the first turn of `agentLoopResume`) passes on
 * without a model call.
 *
 * ```
 * source: --S|
 * model:     -s-t-t-p|
 * result: ----S-u-u--(ES')|   S: messageStart, u: messageUpdate, E: messageEnd
 * ```
 */
export function streamLlm(options: StreamLlmOptions): TurnOperator {
  const turns: StreamTurns = { options, now: () => options.scheduler.now(), retry: retryOf(options) }
  return onTurnState(streamTurn.bind(undefined, turns), { stage: 'streamLlm' })
}

/** What every turn of one `streamLlm` shares. */
interface StreamTurns {
  readonly options: StreamLlmOptions
  readonly now: () => number
  readonly retry: MonoTypeOperatorFunction<ProviderChunk>
}

/**
 * A turn's state, answered. This function and the two below are module
 * functions bound to their data, not closures made per run or per turn (see
 * `pullFrom` in from-async-iterable.ts).
 */
function streamTurn(turns: StreamTurns, state: TurnState): Observable<TurnItem> | TurnState {
  if (!state.started) throw outOfOrder('streamLlm', 'a turn that has not started', 'startTurn')
  // A resumed turn (`agentLoopResume`) has its answer already: its tool calls are dispatched without a model call.
  if (state.assistant !== undefined) return state
  return new Observable<TurnItem>(streamAnswer.bind(undefined, turns, state))
}

/** A subscription of a turn's answer: the model is called. */
function streamAnswer({ options, now, retry }: StreamTurns, state: TurnState, subscriber: Subscriber<TurnItem>): void {
  const request = requestOf(state, options.options)
  const recover = options.recoverOverflow
  const chunks$ =
    options.fallback === undefined && recover === undefined
      ? // The common case needs neither a fallback chain nor recovery: one layer less per chunk.
        deferredStream(options.streamFn, request).pipe(retry)
      : // Options of one layout (no `{}`-or-field spreads), and bound functions rather than arrows made
        // per turn: with a full GC between runs, the layout a spread made and the arrows' optimized
        // code died with a run, and `callModel`'s code was compiled again (`--trace-deopt`, agent-tools 200).
        callModel(request, [{ model: state.model, streamFn: options.streamFn }, ...(options.fallback ?? [])], {
          retry,
          recoverOverflow: recover === undefined ? undefined : recover.bind(undefined, state),
          onCompaction: subscriber.next.bind(subscriber),
        })
  accumulated(chunks$, { model: state.model, now, abort: options.abort, maxArgumentDepth: options.maxArgumentDepth }).subscribe(
    linked<AssistantStreamEvent>(subscriber, new AnswerEvents(subscriber, state), undefined, AnswerLink),
  )
}

/**
 * The answer's events, passed on; `messageEnd` adds the turn's next state. A
 * class, so that its per-token `next` keeps its optimized code (see `linked`).
 */
class AnswerEvents {
  /** Where the events go, past the relays downstream (see `event-relay.ts`). */
  private readonly events: EventSink

  constructor(
    private readonly subscriber: Subscriber<TurnItem>,
    private readonly state: TurnState,
  ) {
    this.events = eventsTo(subscriber)
  }

  next(event: AssistantStreamEvent): void {
    this.events.next(event)
    if (event.type === 'messageEnd') this.ended(event.message)
  }

  /**
   * Out of `next`: the final message's hidden class is new to a run whose
   * previous messages a full GC collected, and a read of it inside the
   * per-token method would deoptimize that method at every run's end.
   */
  private ended(message: AssistantMessage): void {
    const after = withAssistant(this.state, message)
    this.subscriber.next(
      message.stopReason === 'error' || message.stopReason === 'aborted'
        ? nextState(after, { stop: { reason: message.stopReason, ...(message.errorMessage === undefined ? {} : { message: message.errorMessage }) } })
        : after,
    )
  }
}

/**
 * The answer's linked observer, with a `next` of its own (see `LinkClass`):
 * every event of the answer passes here, and the base class's shared `next`
 * made its call of `AnswerEvents.next` a megamorphic lookup per token. It
 * hands each event on to the app's subscriber, whose callback V8 may then
 * inline into the per-chunk code; with a full GC before each run that code
 * was once thrown away at every run's end, and this link was left out. It no
 * longer is (`--trace-deopt`: no deoptimization in runs 1–4). TEXT 10k, async
 * source, full GC before each run, 15 warm-up + 5 runs under callgrind (node
 * --single-threaded): 2,992 → 2,873 instructions per delta (the bare `for
 * await` floor: 1,844).
 */
class AnswerLink extends LinkedObserver<AssistantStreamEvent> {
  override next(event: AssistantStreamEvent): void {
    if (this.stopped || this.closed) return
    try {
      this.handlers.next(event)
    } catch (thrown) {
      this.route(thrown)
    }
  }
}

// Their hidden classes outlive a run (see `resident`).
resident(new AnswerLink(resident(new AnswerEvents(unused, unused)), undefined, undefined))
