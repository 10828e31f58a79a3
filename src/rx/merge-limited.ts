/**
 * `merge` with a concurrency limit, over a known list of sources.
 *
 * Equivalent to `from(sources).pipe(mergeAll(limit))`, without the inner
 * subscriber that `mergeAll` puts around each source: tool calls are
 * dispatched this way once per call on every turn.
 *
 * ```
 * a:      -a--|
 * b:      --b|
 * c:          -c|             limit 2: c starts when b completes
 * result: -ab--c-|
 * ```
 */
import { Observable } from 'rxjs'
import { linked } from './linked-observer.js'

export function mergeLimited<T>(sources: readonly Observable<T>[], limit: number): Observable<T> {
  return new Observable<T>((subscriber) => {
    let next = 0
    let active = 0
    let starting = false
    const done = (): boolean => next >= sources.length && active === 0
    // A loop rather than recursion: sources that complete synchronously start the next one here.
    const start = (): void => {
      if (starting) return
      starting = true
      while (active < limit && next < sources.length && !subscriber.closed) {
        active++
        const observer = linked<T>(subscriber, { next: (value) => subscriber.next(value), complete: () => undefined })
        sources[next++]!.subscribe(observer)
        // Added after subscribing, so it runs after the source's own teardown
        // (at once if it already completed): a slot is free only once the
        // finished source has released what it held, as with mergeMap.
        observer.add(() => {
          active--
          if (subscriber.closed) return
          if (done()) subscriber.complete()
          else start()
        })
      }
      starting = false
      if (done()) subscriber.complete()
    }
    start()
  })
}
