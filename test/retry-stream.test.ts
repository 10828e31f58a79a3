/**
 * retryStream and its place in the loop: transient provider errors are
 * retried after a backoff, and the user never sees an attempt's text twice
 * (`streamRetry` discards it explicitly).
 */
import { describe, expect, it } from 'vitest'
import { lastValueFrom, Observable, toArray } from 'rxjs'
import { TestScheduler } from 'rxjs/testing'
import { retryDelay, retryStream } from '../operators/retry-stream.js'
import { agentLoop } from '../src/loop/agent-loop.js'
import { transcriptFromEvents } from '../src/loop/transcript.js'
import { ProviderError } from '../src/types/provider-error.js'
import type { ProviderChunk } from '../src/types/chunk.js'
import { userMessage, type AssistantMessage } from '../src/types/message.js'
import { modelSpec } from '../src/types/model.js'
import { AgentEvent } from '../src/types/event.js'
import { chunk, runAgentMarbles, scriptedModel } from '../marbles/index.js'

const overloaded = (retryAfterMs?: number) =>
  ProviderError.of('overloaded', 'p', 'p 529 overloaded_error: Overloaded', { status: 529, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) })
const auth = ProviderError.of('auth', 'p', 'p 401: invalid x-api-key', { status: 401 })
const noJitter = { random: () => 0.5 }

const values = {
  s: chunk.start('m1'),
  a: chunk.text('Hel'),
  b: chunk.text('lo'),
  p: chunk.stop(),
}

describe('retryDelay', () => {
  it('doubles from the base, capped, with bounded jitter', () => {
    const info = overloaded().info
    expect([1, 2, 3, 4, 10].map((n) => retryDelay(info, n, { baseDelayMs: 100, maxDelayMs: 1000, ...noJitter }))).toEqual([100, 200, 400, 800, 1000])
    for (const r of [0, 0.25, 0.999]) {
      const d = retryDelay(info, 3, { baseDelayMs: 100, jitter: 0.2, random: () => r })
      expect(d).toBeGreaterThanOrEqual(320)
      expect(d).toBeLessThanOrEqual(480)
    }
  })

  it("takes the server's delay when it gave one", () => {
    expect(retryDelay(overloaded(7000).info, 1, { baseDelayMs: 100 })).toBe(7000)
  })
})

describe('retryStream', () => {
  it('resubscribes after the backoff and announces each retry with a retry chunk', () => {
    new TestScheduler((a, b) => expect(a).toEqual(b)).run(({ cold, expectObservable, expectSubscriptions }) => {
      let calls = 0
      const first = cold<ProviderChunk>('-s-a-#', values, overloaded())
      const second = cold<ProviderChunk>('-s-a-b-p|', values)
      const src = new Observable<ProviderChunk>((subscriber) => (calls++ === 0 ? first : second).subscribe(subscriber))
      const r = { type: 'retry', attempt: 1, delayMs: 10, error: overloaded().info } satisfies ProviderChunk
      expectObservable(src.pipe(retryStream({ baseDelayMs: 10, ...noJitter }))).toBe('-s-a-r 9ms -s-a-b-p|', { ...values, r })
      expectSubscriptions(first.subscriptions).toBe('^----!')
      expectSubscriptions(second.subscriptions).toBe('---------------^-------!')
    })
  })

  it('passes on errors that are not retryable, that come after stop, or that exhaust the attempts', () => {
    new TestScheduler((a, b) => expect(a).toEqual(b)).run(({ cold, expectObservable }) => {
      expectObservable(cold<ProviderChunk>('-s-#', values, auth).pipe(retryStream())).toBe('-s-#', values, auth)
      expectObservable(cold<ProviderChunk>('-s-p-#', values, overloaded()).pipe(retryStream())).toBe('-s-p-#', values, overloaded())
      expectObservable(cold<ProviderChunk>('-#', values, new Error('plain')).pipe(retryStream())).toBe('-#', values, new Error('plain'))
      const r = (attempt: number, delayMs: number) => ({ type: 'retry', attempt, delayMs, error: overloaded().info }) satisfies ProviderChunk
      expectObservable(cold<ProviderChunk>('-#', values, overloaded()).pipe(retryStream({ maxAttempts: 3, baseDelayMs: 5, ...noJitter }))).toBe(
        '-r 4ms -q 9ms -#',
        { r: r(1, 5), q: r(2, 10) },
        overloaded(),
      )
    })
  })

  it('gives up at once when the server asks for a longer wait than allowed', () => {
    new TestScheduler((a, b) => expect(a).toEqual(b)).run(({ cold, expectObservable }) => {
      const result = cold<ProviderChunk>('-#', values, overloaded(120_000)).pipe(retryStream({ maxServerDelayMs: 60_000 }))
      expectObservable(result).toBe('-#', {}, new ProviderError({ ...overloaded(120_000).info, retryable: false, message: 'p 529 overloaded_error: Overloaded (the server asked to wait 120 s, longer than the 60 s allowed)' }))
    })
  })

  it('cancels the pending retry on unsubscribe', () => {
    new TestScheduler((a, b) => expect(a).toEqual(b)).run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold<ProviderChunk>('-#', values, overloaded())
      expectObservable(source.pipe(retryStream({ baseDelayMs: 100, ...noJitter })), '^--!').toBe('-r', {
        r: { type: 'retry', attempt: 1, delayMs: 100, error: overloaded().info },
      })
      expectSubscriptions(source.subscriptions).toBe('^!')
    })
  })
})

describe('retries in the loop', () => {
  const hello = userMessage('hi')
  const context = { systemPrompt: '', messages: [], tools: [] }

  it('a failure mid-stream: streamRetry discards the partial text, no second messageStart', () => {
    runAgentMarbles(({ expectTimeline }) => {
      const model = scriptedModel([
        { marbles: '-s-a-#', values, error: overloaded() },
        { marbles: '-s-a-b-(p|)', values },
      ])
      const run$ = agentLoop(hello, context, { model: model.model, streamFn: model.streamFn, retry: { baseDelayMs: 10, ...noJitter } })
      expectTimeline(run$).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user
        1 msgStart:assistant
        3 textDelta:"Hel"
        5 retry:1:overloaded
        18 textDelta:"Hel"
        20 textDelta:"lo"
        22 msgEnd:assistant:stop, turnEnd:0, agentEnd:stop, |
      `)
    })
  })

  it('a failure before anything streamed: streamRetry comes before messageStart', () => {
    runAgentMarbles(({ expectTimeline }) => {
      const model = scriptedModel([overloaded(), { marbles: '-s-a-(p|)', values }])
      const run$ = agentLoop(hello, context, { model: model.model, streamFn: model.streamFn, retry: { baseDelayMs: 10, ...noJitter } })
      expectTimeline(run$).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user, retry:1:overloaded
        11 msgStart:assistant
        13 textDelta:"Hel"
        15 msgEnd:assistant:stop, turnEnd:0, agentEnd:stop, |
      `)
    })
  })

  it('exhausted retries end the message with stopReason error and the error kind', async () => {
    const model = scriptedModel([overloaded(), overloaded()], { recordRequests: false })
    const events = await lastValueFrom(
      agentLoop(hello, context, { model: model.model, streamFn: model.streamFn, retry: { maxAttempts: 2, baseDelayMs: 1, ...noJitter } }).pipe(toArray()),
    )
    const end = events.find((e) => e.type === 'messageEnd' && e.message.role === 'assistant')
    const message = (end as { message: AssistantMessage }).message
    expect(message).toMatchObject({ stopReason: 'error', errorKind: 'overloaded', errorMessage: 'p 529 overloaded_error: Overloaded' })
    expect(events.filter((e) => e.type === 'streamRetry')).toHaveLength(1)
    for (const e of events) expect(AgentEvent.is(JSON.parse(JSON.stringify(e)))).toBe(true)
  })

  it('usage billed by a discarded attempt stays counted; its text does not', async () => {
    const model = scriptedModel([
      { marbles: '-s-u-a-#', values: { ...values, u: chunk.usage({ input: 100 }) }, error: overloaded() },
      { marbles: '-s-u-b-(p|)', values: { ...values, u: chunk.usage({ input: 100, output: 5 }) } },
    ])
    const events = await lastValueFrom(
      agentLoop(hello, context, { model: model.model, streamFn: model.streamFn, retry: { baseDelayMs: 1, ...noJitter } }).pipe(toArray()),
    )
    const end = events.find((e) => e.type === 'messageEnd' && e.message.role === 'assistant') as { message: AssistantMessage }
    expect(end.message.content).toEqual([{ type: 'text', text: 'lo' }])
    expect(end.message.usage).toMatchObject({ input: 200, output: 5 })
    expect(transcriptFromEvents(events.slice(0, events.findIndex((e) => e.type === 'streamRetry') + 1)).at(-1)).toMatchObject({
      role: 'assistant',
      content: [],
      stopReason: 'aborted',
    })
  })

  it('retry: false passes the first error on', async () => {
    const model = scriptedModel([overloaded(), { marbles: '-s-(p|)', values }], { recordRequests: false })
    const events = await lastValueFrom(agentLoop(hello, context, { model: model.model, streamFn: model.streamFn, retry: false }).pipe(toArray()))
    expect(events.some((e) => e.type === 'streamRetry')).toBe(false)
    expect(events.at(-1)).toMatchObject({ type: 'agentEnd', result: { stopReason: 'error' } })
  })
})

void modelSpec
