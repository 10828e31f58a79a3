import { identity, Observable, type MonoTypeOperatorFunction, type Subscriber } from 'rxjs'
import { linked } from '../src/rx/linked-observer.js'
import { resident, unused } from '../src/rx/resident.js'
import { callUser, CallbackError, deferredStream } from '../src/rx/user-callback.js'
import type { ProviderChunk } from '../src/types/chunk.js'
import type { CompactionEvent } from '../src/types/event.js'
import { ProviderError, providerErrorInfo, type ProviderErrorInfo } from '../src/types/provider-error.js'
import type { LlmRequest } from '../src/types/request.js'
import type { ModelRoute, OverflowRecovery } from '../src/types/run-config.js'

export type { ModelRoute, OverflowRecovery } from '../src/types/run-config.js'

/** Options for {@link callModel}. */
export interface CallModelOptions {
  /** Applied to each model's attempt: the retries (see `retryStream`). */
  readonly retry?: MonoTypeOperatorFunction<ProviderChunk>
  /** Asked once, when the provider says the context overflowed. A throw fails the call (`recoverOverflow threw: …`). */
  readonly recoverOverflow?: () => OverflowRecovery | undefined
  /** Told about the compaction before the smaller context is sent. */
  readonly onCompaction?: (event: CompactionEvent) => void
}

/**
 * One logical model call: the first route with its retries; when a retryable
 * error outlives them, the next route takes over with a fresh retry budget;
 * when the provider says the context overflowed, one more attempt with the
 * recovered, smaller context — also after a *silent* overflow, a response
 * whose prompt usage reached the model's context window (servers that
 * truncate instead of failing). Each switch emits a `retry` chunk first (with
 * `model` set for a fallback), so the fold discards the failed attempt and
 * exactly one message results.
 *
 * ```
 * route 1:  -s-a-#              # retryable, retries exhausted
 * route 2:         -s-a-b-p|
 * result:   -s-a-R-s-a-b-p|     R: retry chunk with model = route 2's
 * ```
 */
export function callModel(request: LlmRequest, routes: readonly ModelRoute[], options: CallModelOptions = {}): Observable<ProviderChunk> {
  // A bound function rather than an arrow made per call: see `startCall`.
  return new Observable<ProviderChunk>(startCall.bind(undefined, request, routes, options))
}

/**
 * The subscription of {@link callModel}. A module function, bound per call: an arrow made per call
 * held the only strong reference to its optimized code, so a full GC between runs threw it away and
 * it was compiled again in 3 of 8 runs (agent-tools 200, `--trace-opt`, a full GC before each run).
 */
function startCall(request: LlmRequest, routes: readonly ModelRoute[], options: CallModelOptions, subscriber: Subscriber<ProviderChunk>): void {
  new ModelCall(request, routes, options, subscriber).start()
}

/**
 * The state of one {@link callModel} subscription, its attempts' handlers as
 * methods ({@link Attempt}) rather than arrows made per call, whose optimized
 * code died with the last of them at a full GC between runs (an Agent's runs
 * take this path: its default sliding window recovers overflows). With the
 * Agent's own changes of the time (`ActiveRun.other`, the stream marks'
 * clock), agent-tools 200 under callgrind (full GC before each of 6 runs) went
 * 3,031-3,047M -> 2,795M instructions; agent-long 5000 stayed within its noise
 * (1,111-1,234M -> 1,146M). The per-chunk `Attempt.next` was still compiled
 * again after every such GC (8 of 8 runs): with no instance of either class
 * alive between runs their hidden classes died, and its code embedded them.
 * One of each is kept (`resident`, at the end of this module).
 */
class ModelCall {
  private route = 0
  private recovered = false
  private messages: LlmRequest['messages']
  private readonly retry: MonoTypeOperatorFunction<ProviderChunk>

  constructor(
    private readonly request: LlmRequest,
    private readonly routes: readonly ModelRoute[],
    private readonly options: CallModelOptions,
    readonly subscriber: Subscriber<ProviderChunk>,
  ) {
    this.messages = request.messages
    this.retry = options.retry ?? identity
  }

  /** Calls the current route. */
  start(): void {
    const { model, streamFn } = this.routes[this.route]!
    deferredStream(streamFn, { ...this.request, model, messages: this.messages })
      .pipe(this.retry)
      .subscribe(linked<ProviderChunk>(this.subscriber, new Attempt(this, model)))
  }

  /** Retries once with the recovered context; `false` when there is nothing to recover with (`true` when recovery itself failed: the call errored). */
  recoverFrom(info: ProviderErrorInfo): boolean {
    const { options, subscriber } = this
    if (this.recovered || options.recoverOverflow === undefined) return false
    const recovery = callUser('recoverOverflow', options.recoverOverflow)
    if (recovery instanceof CallbackError) {
      subscriber.error(recovery)
      return true
    }
    if (recovery === undefined) return false
    this.recovered = true
    this.messages = recovery.messages
    subscriber.next({ type: 'retry', attempt: 1, delayMs: 0, error: info })
    options.onCompaction?.({ type: 'compaction', reason: 'overflow', ...recovery.compaction })
    this.start()
    return true
  }

  /** An attempt failed after its retries: the next route, a recovered context, or the error. */
  failed(error: unknown, stopped: boolean): void {
    const { subscriber, routes } = this
    const info = providerErrorInfo(error)
    if (info === undefined || stopped) return subscriber.error(error)
    if (info.kind === 'contextOverflow') {
      if (this.recoverFrom(info)) return
      return subscriber.error(this.recovered ? new ProviderError({ ...info, message: `${info.message} (the context still overflowed after compaction)` }) : error)
    }
    if (!info.retryable || this.route + 1 >= routes.length) return subscriber.error(error)
    this.route++
    subscriber.next({ type: 'retry', attempt: 1, delayMs: 0, error: info, model: routes[this.route]!.model })
    this.start()
  }
}

/** One route's attempt (with its retries): its chunks passed on, its end handed to its {@link ModelCall}. */
class Attempt {
  private stopped = false
  private prompt = 0

  constructor(
    private readonly call: ModelCall,
    private readonly model: ModelRoute['model'],
  ) {}

  next(chunk: ProviderChunk): void {
    // `type` read once: chunks come in a dozen layouts, so each read is a megamorphic lookup, and a delta
    // read it twice (with the Agent's own events read once: agent-tools 200, 159.1 -> 155.7 M instructions a run, see `ActiveRun.next`).
    const type = chunk.type
    if (type === 'stop') this.stopped = true
    else if (type === 'usage') {
      const usage = chunk as Extract<ProviderChunk, { type: 'usage' }>
      this.prompt += (usage.input ?? 0) + (usage.cacheRead ?? 0) + (usage.cacheWrite ?? 0)
    }
    this.call.subscriber.next(chunk)
  }

  error(error: unknown): void {
    this.call.failed(error, this.stopped)
  }

  complete(): void {
    // Silent overflow: some servers (Ollama, llama.cpp) truncate a prompt that does not fit
    // instead of failing; the answer then misses the start of the conversation.
    const { model, prompt } = this
    const window = model.contextWindow
    if (window !== undefined && window > 0 && prompt >= window) {
      const info = ProviderError.of(
        'contextOverflow',
        model.provider,
        `${model.provider}: silent context overflow: the prompt used ${prompt} tokens of a ${window}-token context window (the server truncated it)`,
      ).info
      if (this.call.recoverFrom(info)) return
    }
    this.call.subscriber.complete()
  }
}

/**
 * An attempt and its call, kept (see `resident`): with no instance of either
 * class alive after a full GC between runs, their hidden classes died, and
 * `Attempt.next`'s code, which embedded them, was compiled again in every run.
 * Two attempts: one as it starts, one as a run leaves it (`stopped` set, as
 * the last chunk of every answer sets it; without that one the code compiled
 * in each run met the answer's `stop` without type feedback and was thrown
 * away again: AGENT LONG, 5,000 messages, 10k deltas, a full GC before each
 * run, --trace-opt: in each of 6 runs).
 */
function residentAttempt(stopped: boolean): Attempt {
  const attempt = new Attempt(resident(new ModelCall({ messages: [] } as unknown as LlmRequest, [], {}, unused)), unused)
  if (stopped) (attempt as unknown as { stopped: boolean }).stopped = true
  return attempt
}
resident(residentAttempt(false))
resident(residentAttempt(true))
