/**
 * Calling user code from inside the runtime. A user callback can fail in
 * three shapes — a synchronous throw, a rejected Promise, an Observable that
 * errors — and each becomes a {@link CallbackError} that names the callback,
 * so the call site routes it where the README says (a run error, an error
 * tool result, a `listenerError` event) instead of letting it escape a
 * subscriber.
 *
 * Internal: not exported from the package.
 */
import { catchError, from, isObservable, Observable, throwError, type MonoTypeOperatorFunction, type ObservableInput, type Subscriber } from 'rxjs'
import type { ProviderChunk } from '../types/chunk.js'
import { errorText } from '../types/codec.js'
import type { LlmRequest, StreamFn } from '../types/request.js'

/** A user callback failed: `${callback} threw: …` (synchronously) or `${callback} failed: …` (rejected, errored). */
export class CallbackError extends Error {
  override readonly name = 'CallbackError'
  constructor(
    /** The callback, as the user configured it: `recoverOverflow`, `retry.shouldRetry`, `steering source`… */
    readonly callback: string,
    /** `threw`: a synchronous throw; `failed`: a rejected Promise or an erroring Observable; or a value it gave that is invalid. */
    readonly how: 'threw' | 'failed' | 'sent an invalid message',
    readonly error: unknown,
  ) {
    super(`${callback} ${how}: ${errorText(error)}`, { cause: error })
  }

  /** `error` named for `callback`, unless it already names a callback (a guard inside a guard). */
  static of(callback: string, how: 'threw' | 'failed', error: unknown): CallbackError {
    return error instanceof CallbackError ? error : new CallbackError(callback, how, error)
  }
}

/**
 * `fn(...args)`, or the {@link CallbackError} it threw. Never throws. Off the
 * per-delta path: used where a callback is called per turn, per call, per
 * error.
 *
 * @example
 * const recovery = callUser('recoverOverflow', recover, state)
 * if (recovery instanceof CallbackError) return subscriber.error(recovery)
 */
export function callUser<A extends readonly unknown[], R>(callback: string, fn: (...args: A) => R, ...args: A): R | CallbackError {
  try {
    return fn(...args)
  } catch (error) {
    return CallbackError.of(callback, 'threw', error)
  }
}

/**
 * Names the error of a callback's asynchronous result (a Promise turned
 * Observable, an Observable) for `callback`.
 *
 * ```
 * source: --#         #: Error('boom')
 * result: --#         #: CallbackError('getApiKey failed: boom')
 * ```
 */
export function failuresOf<T>(callback: string): MonoTypeOperatorFunction<T> {
  return catchError((error: unknown) => throwError(() => CallbackError.of(callback, 'failed', error)))
}

/**
 * `streamFn(request)`, called inside a subscription ({@link deferredStream}): a synchronous throw
 * becomes the call's error, named (`streamFn threw: …`). An Observable that
 * errors is the provider's own error and is passed on as it is.
 */
function callStreamFn(streamFn: StreamFn, request: LlmRequest): Observable<ProviderChunk> {
  const chunks = callUser('streamFn', streamFn, request)
  if (chunks instanceof CallbackError) throw chunks
  return chunks
}

/**
 * `defer(() => callStreamFn(streamFn, request))`: the stream function is
 * called at each subscription (each retry), through a module function bound
 * to its arguments rather than a closure made per model call (see `pullFrom`
 * in from-async-iterable.ts).
 */
export function deferredStream(streamFn: StreamFn, request: LlmRequest): Observable<ProviderChunk> {
  return new Observable<ProviderChunk>(subscribeStream.bind(undefined, streamFn, request))
}

/**
 * Returns nothing: the inner subscription is the subscriber itself. Returning it as the teardown cost
 * TOOLS 200 turns 7.5 M instructions a run (callgrind, two full GCs before each of 6 runs: 94.4 against 86.7 M).
 */
function subscribeStream(streamFn: StreamFn, request: LlmRequest, subscriber: Subscriber<ProviderChunk>): void {
  from(callStreamFn(streamFn, request)).subscribe(subscriber)
}

/** Whether `value` is a Promise or any other thenable. */
export function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function'
}

/**
 * Whether a callback answered asynchronously (an Observable or a thenable)
 * rather than with a plain value. An array is a plain value here, although
 * RxJS would take it as an `ObservableInput`.
 */
export function isAsyncAnswer<T>(value: unknown): value is ObservableInput<T> {
  return isObservable(value) || isThenable(value)
}
