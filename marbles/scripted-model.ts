/** A model that answers from a script: offline, deterministic, in virtual time when asked. */
import { asyncScheduler, from, Observable, throwError, type SchedulerLike, type Subscriber, type Subscription } from 'rxjs'
import { TestScheduler } from 'rxjs/testing'
import type { ProviderChunk } from '../src/types/chunk.js'
import { modelSpec, type ModelSpec } from '../src/types/model.js'
import type { LlmRequest, StreamFn } from '../src/types/request.js'

/**
 * One scripted answer:
 * - an array of chunks, emitted synchronously on subscribe;
 * - `{ marbles, values }`: chunks on a marble timeline (`-` is one frame,
 *   `|` completes, `#` errors with `error`), played on the model's scheduler;
 * - a function of the request, for answers that depend on what was sent;
 * - an `Error`: the call fails at once (as an HTTP error would).
 */
export type ScriptedResponse =
  | readonly ProviderChunk[]
  | { readonly marbles: string; readonly values?: Readonly<Record<string, ProviderChunk>>; readonly error?: unknown }
  | ((request: LlmRequest, call: number) => Observable<ProviderChunk>)
  | Error

export interface ScriptedModelOptions {
  /** Plays marble timelines; pass nothing under `TestScheduler.run` (the async scheduler is virtual there). */
  readonly scheduler?: SchedulerLike
  readonly model?: ModelSpec
  /** Keep every request in `requests` (default). Turn off for very long runs: each request holds its whole transcript. */
  readonly recordRequests?: boolean
  /** What a call past the end of the script does. Default `error`. */
  readonly whenExhausted?: 'error' | 'repeatLast'
}

export interface ScriptedModel {
  readonly streamFn: StreamFn
  readonly model: ModelSpec
  /** Every request received, in order. */
  readonly requests: readonly LlmRequest[]
}

/** Plays a marble timeline on `scheduler`, one scheduled action per frame that has notifications. */
export function playMarbles(
  marbles: string,
  values: Readonly<Record<string, ProviderChunk>> = {},
  error: unknown = new Error('scripted stream error'),
  scheduler: SchedulerLike = asyncScheduler,
): Observable<ProviderChunk> {
  const messages = TestScheduler.parseMarbles(marbles, values as Record<string, ProviderChunk>, error, false, true)
  return new Observable<ProviderChunk>((subscriber) => {
    let i = 0
    const playFrame = (): void => {
      const frame = messages[i]?.frame
      while (i < messages.length && messages[i]!.frame === frame) {
        const { notification } = messages[i++]!
        if (notification.kind === 'N') subscriber.next(notification.value as ProviderChunk)
        else if (notification.kind === 'E') subscriber.error(notification.error)
        else subscriber.complete()
      }
      const next = messages[i]
      if (next !== undefined && !subscriber.closed) {
        subscriber.add(scheduler.schedule(playFrame, next.frame - (frame ?? 0)))
      }
    }
    const first = messages[0]
    if (first === undefined) return
    subscriber.add(scheduler.schedule(playFrame, first.frame))
  })
}

/**
 * A `streamFn` that answers call N with `script[N]` (or `script(request, N)`)
 * and records every request.
 *
 * @example
 * const model = scriptedModel([
 *   reply.toolCalls([{ id: 'c1', name: 'add', args: { a: 1, b: 2 } }]),
 *   { marbles: '-s-t-(p|)', values: { s: chunk.start(), t: chunk.text('3'), p: chunk.stop() } },
 * ])
 */
export function scriptedModel(
  script: readonly ScriptedResponse[] | ((request: LlmRequest, call: number) => ScriptedResponse),
  options: ScriptedModelOptions = {},
): ScriptedModel {
  const played = new Played(script, options)
  return { streamFn: played.stream.bind(played), model: options.model ?? modelSpec('scripted', 'scripted-1'), requests: played.requests }
}

/**
 * A scripted model's calls: a class whose `stream` is bound once per model,
 * and whose answers are subscribed through a module function bound to the
 * call ({@link subscribeCall}), not through `defer` with a closure made per
 * call. `defer`'s subscribe closure is shared by every `defer` of the process
 * and inlines the factory; its optimized code was held only by the calls'
 * Observables, so a full GC between runs threw it away and the next run
 * compiled it again. Measured: TOOLS 200 turns, full GC before each run, 18
 * runs, `--trace-opt` (compilations inside the runs): defer 6 and streamFn 6
 * -> none of either.
 */
class Played {
  readonly requests: LlmRequest[] = []
  private calls = 0
  private readonly scheduler: SchedulerLike

  constructor(
    private readonly script: readonly ScriptedResponse[] | ((request: LlmRequest, call: number) => ScriptedResponse),
    private readonly options: ScriptedModelOptions,
  ) {
    this.scheduler = options.scheduler ?? asyncScheduler
  }

  /** The `streamFn`: a cold Observable; each subscription is one call. */
  stream(request: LlmRequest): Observable<ProviderChunk> {
    return new Observable<ProviderChunk>(subscribeCall.bind(undefined, this, request))
  }

  /** What call number `call` answers, or undefined past the end of the script. */
  private responseFor(request: LlmRequest, call: number): ScriptedResponse | undefined {
    const script = this.script
    if (typeof script === 'function') return script(request, call)
    if (call < script.length) return script[call]
    return this.options.whenExhausted === 'repeatLast' ? script[script.length - 1] : undefined
  }

  /** The next call's answer (the call is counted, its request recorded). */
  answer(request: LlmRequest): Observable<ProviderChunk> {
    const call = this.calls++
    if (this.options.recordRequests !== false) this.requests.push(request)
    const response = this.responseFor(request, call)
    const script = this.script
    if (response === undefined) {
      return throwError(() => new Error(`scripted model: no response scripted for call #${call + 1} (the script has ${Array.isArray(script) ? script.length : 0})`))
    }
    if (response instanceof Error) return throwError(() => response)
    if (typeof response === 'function') return response(request, call)
    if (Array.isArray(response)) return from(response as readonly ProviderChunk[])
    const timeline = response as Exclude<ScriptedResponse, readonly ProviderChunk[] | Error | ((...a: never[]) => unknown)>
    return playMarbles(timeline.marbles, timeline.values, timeline.error, this.scheduler)
  }
}

/**
 * One subscription of a scripted call, as `defer` does it: the answer is made
 * now and subscribed (through `from`, as `defer` takes any ObservableInput a
 * scripted function hands back); a throw errors the subscriber.
 */
function subscribeCall(played: Played, request: LlmRequest, subscriber: Subscriber<ProviderChunk>): Subscription {
  return from(played.answer(request)).subscribe(subscriber)
}
