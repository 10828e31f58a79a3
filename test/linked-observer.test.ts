/**
 * The internal linked observer routes a handler's throw the way RxJS's own
 * `OperatorSubscriber` does: to the destination's `error`, never back into
 * the source that called it.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { config, Observable, Subject, Subscription, UnsubscriptionError, type Subscriber } from 'rxjs'
import { linked } from '../src/rx/linked-observer.js'

/** A destination that records what reached it. */
function destination(): { readonly seen: string[]; readonly connect: (f: (s: Subscriber<unknown>) => void) => void } {
  const seen: string[] = []
  let body: (s: Subscriber<unknown>) => void = () => undefined
  const subscriber = new Observable<unknown>((s) => body(s))
  return {
    seen,
    connect: (f) => {
      body = f
      subscriber.subscribe({ next: (v) => seen.push(`next ${String(v)}`), error: (e: unknown) => seen.push(`error ${(e as Error).message}`), complete: () => seen.push('complete') })
    },
  }
}

const previous = config.onUnhandledError
afterEach(() => {
  config.onUnhandledError = previous
})

describe('LinkedObserver error routing', () => {
  it('a throw in next errors the destination and stops the observer; the source is not thrown into', () => {
    const source = new Subject<number>()
    const d = destination()
    d.connect((s) => {
      source.subscribe(
        linked<number>(s, {
          next: (v) => {
            if (v === 2) throw new Error('next threw')
            s.next(v)
          },
        }),
      )
    })
    source.next(1)
    expect(() => source.next(2)).not.toThrow()
    source.next(3)
    expect(d.seen).toEqual(['next 1', 'error next threw'])
    expect(source.observed).toBe(false)
  })

  it('a throw in complete errors the destination', () => {
    const source = new Subject<number>()
    const d = destination()
    d.connect((s) => {
      source.subscribe(
        linked<number>(s, {
          next: (v) => s.next(v),
          complete: () => {
            throw new Error('complete threw')
          },
        }),
      )
    })
    expect(() => source.complete()).not.toThrow()
    expect(d.seen).toEqual(['error complete threw'])
  })

  it('a throw in error errors the destination with the new error, also from a synchronous source', () => {
    const d = destination()
    d.connect((s) => {
      new Observable<number>((inner) => inner.error(new Error('source failed'))).subscribe(
        linked<number>(s, {
          next: (v) => s.next(v),
          error: () => {
            throw new Error('error handler threw')
          },
        }),
      )
    })
    expect(d.seen).toEqual(['error error handler threw'])
  })

  it('a plain Subscription destination with an error target: the throw goes there', () => {
    const errors: string[] = []
    const source = new Subject<number>()
    const held = new Subscription()
    source.subscribe(
      linked<number>(
        held,
        {
          next: () => {
            throw new Error('to the target')
          },
        },
        { error: (e: unknown) => errors.push((e as Error).message) },
      ),
    )
    expect(() => source.next(1)).not.toThrow()
    expect(errors).toEqual(['to the target'])
    expect(source.observed).toBe(false)
  })

  it('without a destination to error, a throw is reported as unhandled (the last resort), not thrown into the source', async () => {
    const reported: unknown[] = []
    config.onUnhandledError = (e) => reported.push(e)
    const source = new Subject<number>()
    source.subscribe(
      linked<number>(new Subscription(), {
        next: () => {
          throw new Error('nowhere to go')
        },
      }),
    )
    expect(() => source.next(1)).not.toThrow()
    await new Promise((resolve) => setTimeout(resolve, 0))
    expect(reported.map((e) => (e as Error).message)).toEqual(['nowhere to go'])
  })
})

describe('LinkedObserver teardown (its first linked observer held in a field, not an RxJS finalizer list)', () => {
  const observer = (destination: Subscription, log?: string[], name?: string): ReturnType<typeof linked<number>> => {
    const o = linked<number>(destination, { next: () => undefined })
    if (log !== undefined) o.add(() => log.push(`${name ?? '?'} torn down`))
    return o
  }

  it('unsubscribing a linked observer tears down the one it holds; the held one ending alone leaves its holder open', () => {
    const root = new Subscription()
    const parent = observer(root)
    const child = observer(parent)
    const other = observer(root)
    const second = observer(other)
    parent.unsubscribe()
    expect(child.closed).toBe(true)
    second.unsubscribe()
    expect(other.closed).toBe(false)
    // The held observer is gone from its holder: a new one can be held, and goes with it.
    const third = observer(other)
    other.unsubscribe()
    expect(third.closed).toBe(true)
  })

  it('everything added is torn down in the order it was added, the held observer first', () => {
    const log: string[] = []
    const root = new Subscription()
    const parent = observer(root)
    observer(parent, log, 'first')
    parent.add(() => log.push('function'))
    observer(parent, log, 'second')
    root.unsubscribe()
    expect(log).toEqual(['first torn down', 'function', 'second torn down'])
  })

  it('a teardown function added first is run with it, before what came after; one that throws is reported as RxJS does', () => {
    const log: string[] = []
    const root = new Subscription()
    const parent = observer(root)
    parent.add(() => log.push('function'))
    observer(parent, log, 'observer')
    root.unsubscribe()
    expect(log).toEqual(['function', 'observer torn down'])
    const alone = observer(new Subscription())
    alone.add(() => {
      throw new Error('teardown failed')
    })
    expect(() => alone.unsubscribe()).toThrow(UnsubscriptionError)
    expect(alone.closed).toBe(true)
  })

  it('remove() lets go of the held observer without tearing it down', () => {
    const root = new Subscription()
    const parent = observer(root)
    const child = observer(parent)
    parent.remove(child)
    parent.unsubscribe()
    expect(child.closed).toBe(false)
  })

  it('an observer added to a closed one is torn down at once; one added twice is held once', () => {
    const log: string[] = []
    const parent = observer(new Subscription())
    const child = observer(new Subscription(), log, 'child')
    parent.add(child)
    parent.add(child)
    parent.unsubscribe()
    expect(log).toEqual(['child torn down'])
    const late = observer(new Subscription())
    parent.add(late)
    expect(late.closed).toBe(true)
  })
})
