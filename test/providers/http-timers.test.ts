// The transport's three limits (connect, idle, whole call) on one timer: each still fires on time and
// says which limit passed, and a call that finishes sets one timer, not one per limit.
import { describe, expect, it } from 'vitest'
import { asyncScheduler, lastValueFrom, toArray, type SchedulerLike } from 'rxjs'
import { httpBody } from '../../src/providers/http.js'
import type { TransportOptions } from '../../src/providers/transport.js'
import { ProviderError } from '../../src/types/provider-error.js'

const request = { url: 'http://127.0.0.1:1/stream', headers: {}, body: '{}' }
const classify = (status: number): ProviderError => ProviderError.of('server', 'test', `HTTP ${status}`)
const encoder = new TextEncoder()

/** A response whose body sends `chunks`, one every `everyMs`, then ends (or, with `forever`, never ends). */
function respond(chunks: readonly string[], everyMs: number, forever = false): typeof globalThis.fetch {
  return async () => {
    let i = 0
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        await new Promise((resolve) => setTimeout(resolve, everyMs))
        if (i < chunks.length || forever) controller.enqueue(encoder.encode(chunks[i++ % Math.max(1, chunks.length)] ?? ':\n\n'))
        else controller.close()
      },
    })
    return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } })
  }
}

/** asyncScheduler, counting the timers set. */
function counting(): { scheduler: SchedulerLike; count: () => number } {
  let n = 0
  const scheduler: SchedulerLike = {
    now: () => asyncScheduler.now(),
    schedule: ((work: never, delay?: number, state?: never) => {
      n++
      return asyncScheduler.schedule(work, delay, state)
    }) as SchedulerLike['schedule'],
  }
  return { scheduler, count: () => n }
}

const failure = async (options: TransportOptions): Promise<ProviderError> => {
  try {
    await lastValueFrom(httpBody('test', request, classify, options).pipe(toArray()))
  } catch (error) {
    if (error instanceof ProviderError) return error
    throw error
  }
  throw new Error('the call did not fail')
}

describe('transport limits on one timer', () => {
  it('a call that finishes sets one timer, not one per limit', async () => {
    const { scheduler, count } = counting()
    const chunks = await lastValueFrom(httpBody('test', request, classify, { fetch: respond(['data: a\n\n', 'data: b\n\n'], 1), scheduler }).pipe(toArray()))
    expect(chunks).toHaveLength(2)
    expect(count()).toBe(1)
  })

  it('no response headers within the connect limit', async () => {
    const error = await failure({ fetch: () => new Promise<Response>(() => undefined), connectTimeoutMs: 40 })
    expect(error).toMatchObject({ kind: 'timeout', message: 'test: no response within 40 ms' })
  })

  it('an idle limit shorter than what is left of the connect limit fires on time', async () => {
    const started = performance.now()
    const error = await failure({ fetch: respond([], 10_000), connectTimeoutMs: 10_000, idleTimeoutMs: 60 })
    expect(error).toMatchObject({ kind: 'timeout', message: 'test: no data arrived within 60 ms' })
    expect(performance.now() - started).toBeLessThan(2_000)
  })

  it('a body that keeps streaming stops at the whole call limit, not retried', async () => {
    const error = await failure({ fetch: respond(['data: a\n\n'], 10, true), idleTimeoutMs: 50, totalTimeoutMs: 150 })
    expect(error).toMatchObject({ kind: 'timeout', retryable: false, message: 'test: the response did not finish within 150 ms (totalTimeoutMs)' })
  })

  it('an idle limit past the connect limit is waited out in full', async () => {
    const started = performance.now()
    // Headers at once, then silence: the timer set for the connect limit (30 ms) finds the body streaming and waits for the idle one.
    const error = await failure({ fetch: respond([], 10_000), connectTimeoutMs: 30, idleTimeoutMs: 120 })
    expect(error).toMatchObject({ kind: 'timeout', message: 'test: no data arrived within 120 ms' })
    expect(performance.now() - started).toBeGreaterThanOrEqual(110)
  })
})
