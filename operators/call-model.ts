import { defer, identity, Observable, type MonoTypeOperatorFunction } from 'rxjs'
import { linked } from '../src/rx/linked-observer.js'
import { callStreamFn, callUser, CallbackError } from '../src/rx/user-callback.js'
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
  const retry = options.retry ?? identity
  return new Observable<ProviderChunk>((subscriber) => {
    let route = 0
    let recovered = false
    let messages = request.messages
    /** Retries once with the recovered context; `false` when there is nothing to recover with (`true` when recovery itself failed: the call errored). */
    const recoverFrom = (info: ProviderErrorInfo): boolean => {
      if (recovered || options.recoverOverflow === undefined) return false
      const recovery = callUser('recoverOverflow', options.recoverOverflow)
      if (recovery instanceof CallbackError) {
        subscriber.error(recovery)
        return true
      }
      if (recovery === undefined) return false
      recovered = true
      messages = recovery.messages
      subscriber.next({ type: 'retry', attempt: 1, delayMs: 0, error: info })
      options.onCompaction?.({ type: 'compaction', reason: 'overflow', ...recovery.compaction })
      start()
      return true
    }
    const start = (): void => {
      const { model, streamFn } = routes[route]!
      let stopped = false
      let prompt = 0
      defer(() => callStreamFn(streamFn, { ...request, model, messages }))
        .pipe(retry)
        .subscribe(
          linked<ProviderChunk>(subscriber, {
            next: (chunk) => {
              if (chunk.type === 'stop') stopped = true
              else if (chunk.type === 'usage') prompt += (chunk.input ?? 0) + (chunk.cacheRead ?? 0) + (chunk.cacheWrite ?? 0)
              subscriber.next(chunk)
            },
            error: (error: unknown) => {
              const info = providerErrorInfo(error)
              if (info === undefined || stopped) return subscriber.error(error)
              if (info.kind === 'contextOverflow') {
                if (recoverFrom(info)) return
                return subscriber.error(recovered ? new ProviderError({ ...info, message: `${info.message} (the context still overflowed after compaction)` }) : error)
              }
              if (!info.retryable || route + 1 >= routes.length) return subscriber.error(error)
              route++
              subscriber.next({ type: 'retry', attempt: 1, delayMs: 0, error: info, model: routes[route]!.model })
              start()
            },
            complete: () => {
              // Silent overflow: some servers (Ollama, llama.cpp) truncate a prompt that does not fit
              // instead of failing; the answer then misses the start of the conversation.
              const window = model.contextWindow
              if (window !== undefined && window > 0 && prompt >= window) {
                const info = ProviderError.of(
                  'contextOverflow',
                  model.provider,
                  `${model.provider}: silent context overflow: the prompt used ${prompt} tokens of a ${window}-token context window (the server truncated it)`,
                ).info
                if (recoverFrom(info)) return
              }
              subscriber.complete()
            },
          }),
        )
    }
    start()
  })
}
