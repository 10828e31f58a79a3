/**
 * `fromAsyncIterable`: an async iterable's values in order, its end and its
 * error; unsubscribing stops the values at once and makes the iterator
 * return (an async generator's `finally` runs), but only while it is live.
 */
import { describe, expect, it } from 'vitest'
import { firstValueFrom, lastValueFrom, take, toArray } from 'rxjs'
import { agentLoop, extractText, fromAsyncIterable, modelSpec } from '../src/index.js'
import { chunk } from '../marbles/index.js'
import type { ProviderChunk } from '../src/types/chunk.js'
import { context, hello } from './helpers.js'

/** An async generator of `items` that records how it ended. */
function recorded<T>(items: readonly T[], log: string[], failAt?: number): AsyncGenerator<T> {
  return (async function* () {
    try {
      for (let i = 0; i < items.length; i++) {
        if (i === failAt) throw new Error(`failed at ${i}`)
        log.push(`yield ${i}`)
        yield items[i]!
      }
      log.push('done')
    } finally {
      log.push('finally')
    }
  })()
}

/** Resolves once every pending promise job has run. */
const settled = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

describe('fromAsyncIterable', () => {
  it('emits the values in order, then completes; the finished iterator is not asked to return', async () => {
    const log: string[] = []
    const iterable = recorded(['a', 'b', 'c'], log)
    let returns = 0
    const original = iterable.return.bind(iterable)
    iterable.return = (value) => {
      returns++
      return original(value)
    }
    expect(await lastValueFrom(fromAsyncIterable(iterable).pipe(toArray()))).toEqual(['a', 'b', 'c'])
    await settled()
    expect(log).toEqual(['yield 0', 'yield 1', 'yield 2', 'done', 'finally'])
    expect(returns).toBe(0)
  })

  it("passes on the iterator's error", async () => {
    const log: string[] = []
    const seen: string[] = []
    await new Promise<void>((resolve) =>
      fromAsyncIterable(recorded([1, 2, 3], log, 2)).subscribe({
        next: (v) => seen.push(`next ${v}`),
        error: (e: unknown) => {
          seen.push(`error ${(e as Error).message}`)
          resolve()
        },
      }),
    )
    expect(seen).toEqual(['next 1', 'next 2', 'error failed at 2'])
    expect(log).toEqual(['yield 0', 'yield 1', 'finally'])
  })

  it('unsubscribing stops the values and makes the generator return: its finally runs, nothing more is pulled', async () => {
    const log: string[] = []
    expect(await firstValueFrom(fromAsyncIterable(recorded([1, 2, 3, 4], log)).pipe(take(2), toArray()))).toEqual([1, 2])
    await settled()
    expect(log).toEqual(['yield 0', 'yield 1', 'finally'])
  })

  it('an unsubscribe while a value is awaited emits nothing more, and the iterator returns', async () => {
    const seen: number[] = []
    let returned = false
    let release: (() => void) | undefined
    const iterator: AsyncIterator<number> = {
      next: () => new Promise((resolve) => (release = () => resolve({ done: false, value: 7 }))),
      return: async () => {
        returned = true
        return { done: true, value: undefined }
      },
    }
    const subscription = fromAsyncIterable({ [Symbol.asyncIterator]: () => iterator }).subscribe((v) => seen.push(v))
    await settled()
    subscription.unsubscribe()
    expect(returned).toBe(true)
    release?.()
    await settled()
    expect(seen).toEqual([])
  })

  it('a failing return is dropped, not reported', async () => {
    const iterator: AsyncIterator<number> = {
      next: () => new Promise(() => undefined),
      return: () => Promise.reject(new Error('cannot close')),
    }
    const subscription = fromAsyncIterable({ [Symbol.asyncIterator]: () => iterator }).subscribe()
    subscription.unsubscribe()
    await settled()
    expect(subscription.closed).toBe(true)
  })

  it('is a streamFn: agentLoop folds the generator it wraps', async () => {
    async function* answer(): AsyncGenerator<ProviderChunk> {
      yield chunk.start('m', 'test')
      yield chunk.text('Hel')
      yield chunk.text('lo')
      yield chunk.stop('endTurn')
    }
    const events = await lastValueFrom(
      agentLoop(hello, context(), { model: modelSpec('test', 'm'), streamFn: () => fromAsyncIterable(answer()) }).pipe(toArray()),
    )
    const end = events.at(-1)
    expect(end?.type).toBe('agentEnd')
    if (end?.type !== 'agentEnd') return
    expect(end.result.stopReason).toBe('stop')
    const last = end.result.messages.at(-1)
    expect(last?.role === 'assistant' ? extractText(last.content) : undefined).toBe('Hello')
  })
})
