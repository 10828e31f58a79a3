import { Observable, type OperatorFunction } from 'rxjs'
import { MessageFold, type FoldFailure } from '../src/stream/message-fold.js'
import type { ProviderChunk } from '../src/types/chunk.js'
import type { AssistantStreamEvent } from '../src/types/event.js'
import type { AssistantMessage } from '../src/types/message.js'
import type { ModelSpec } from '../src/types/model.js'
import { errorText } from '../src/types/codec.js'

/** Options for {@link accumulateMessage}. */
export interface AccumulateMessageOptions {
  /** The model the stream comes from: names the message and prices its usage. */
  readonly model: ModelSpec
  /** The message's timestamp source; pass the scheduler's `now` for virtual time. */
  readonly now: () => number
  /** When this emits, the stream is dropped and the message ends with stopReason `aborted`. */
  readonly abort?: Observable<unknown>
}

/** Whether an error means "cancelled" rather than "failed". */
export function isAbortError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'AbortError'
}

/**
 * Folds a provider's chunks into one assistant message and emits
 * `messageStart`, a `messageUpdate` per content chunk, and `messageEnd`.
 *
 * It never errors: a contract violation, a stream that completes without
 * `stop`, or a stream error ends the message with stopReason `error` and an
 * `errorMessage` saying what happened; `abort` ends it with `aborted`. The
 * content received so far is kept in every case.
 *
 * ```
 * chunks: --s--t--t--p--|        s: messageStart, t: textDelta, p: stop
 * result: --S--u--u-----(E|)     S: messageStart, u: messageUpdate, E: messageEnd
 * ```
 */
export function accumulateMessage(options: AccumulateMessageOptions): OperatorFunction<ProviderChunk, AssistantStreamEvent> {
  return (source) =>
    new Observable<AssistantStreamEvent>((subscriber) => {
      const fold = new MessageFold(options.model, options.now())
      let ended = false
      let upstream: { unsubscribe(): void } | undefined

      const end = (failure?: FoldFailure): void => {
        if (ended) return
        ended = true
        if (!fold.isStarted) subscriber.next({ type: 'messageStart', message: fold.current() })
        const message: AssistantMessage = fold.finish(failure)
        subscriber.next({ type: 'messageEnd', message })
        subscriber.complete()
      }

      // The abort notifier is subscribed first so that an abort already
      // signalled never lets a chunk through.
      if (options.abort !== undefined) {
        subscriber.add(
          options.abort.subscribe(() => {
            upstream?.unsubscribe()
            end({ reason: 'aborted', message: 'the request was aborted' })
          }),
        )
        if (ended) return
      }

      upstream = source.subscribe({
        next: (chunk) => {
          if (ended) return
          const result = fold.push(chunk)
          if (result === undefined) {
            if (chunk.type === 'messageStart') subscriber.next({ type: 'messageStart', message: fold.current() })
          } else if (typeof result === 'string') {
            upstream?.unsubscribe()
            end({ reason: 'error', message: `stream contract violated: ${result}` })
          } else subscriber.next(result)
        },
        error: (error: unknown) =>
          end(isAbortError(error) ? { reason: 'aborted', message: errorText(error) } : { reason: 'error', message: errorText(error) }),
        complete: () => end(),
      })
      // A violation inside a synchronous source fires before `upstream` is assigned.
      if (ended) upstream.unsubscribe()
      subscriber.add(upstream)
    })
}
