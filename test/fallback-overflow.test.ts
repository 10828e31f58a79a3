/**
 * callModel in the loop: the fallback chain (one logical message, named and
 * priced by the model that finished it) and context-overflow recovery (one
 * compacted retry, a second overflow is a clear error).
 */
import { describe, expect, it } from 'vitest'
import { lastValueFrom, toArray } from 'rxjs'
import { agentLoop } from '../src/loop/agent-loop.js'
import { ProviderError } from '../src/types/provider-error.js'
import { userMessage, assistantMessage, type AssistantMessage } from '../src/types/message.js'
import { modelSpec } from '../src/types/model.js'
import type { AgentEvent } from '../src/types/event.js'
import { chunk, reply, runAgentMarbles, scriptedModel } from '../marbles/index.js'

const overloaded = ProviderError.of('overloaded', 'a', 'a 529 overloaded_error: Overloaded', { status: 529 })
const overflow = ProviderError.of('contextOverflow', 'a', 'a 400: prompt is too long: 210000 tokens > 200000 maximum', { status: 400 })
const primary = modelSpec('a', 'big', { cost: { input: 10, output: 10, cacheRead: 0, cacheWrite: 0 } })
const backup = modelSpec('b', 'small', { cost: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 } })
const values = { s: chunk.start('r'), a: chunk.text('Hel'), b: chunk.text('lo'), p: chunk.stop(), u: chunk.usage({ input: 1_000_000, output: 0 }) }
const hello = userMessage('hi')
const noJitter = { random: () => 0.5 }
const assistantEnds = (events: readonly AgentEvent[]): AssistantMessage[] =>
  events.flatMap((e) => (e.type === 'messageEnd' && e.message.role === 'assistant' ? [e.message] : []))

describe('fallback chain', () => {
  it('the next model takes over the same turn after the retries; one logical message', () => {
    runAgentMarbles(({ expectTimeline }) => {
      const a = scriptedModel([{ marbles: '-s-a-#', values, error: overloaded }, overloaded], { model: primary })
      const b = scriptedModel([{ marbles: '-s-a-b-u-(p|)', values }], { model: backup })
      const run$ = agentLoop(hello, { systemPrompt: '', messages: [], tools: [] }, {
        model: primary,
        streamFn: a.streamFn,
        fallback: [{ model: backup, streamFn: b.streamFn }],
        retry: { maxAttempts: 2, baseDelayMs: 10, ...noJitter },
      })
      expectTimeline(run$).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user
        1 msgStart:assistant
        3 textDelta:"Hel"
        5 retry:1:overloaded
        15 fallback:small, retry:1:overloaded
        18 textDelta:"Hel"
        20 textDelta:"lo"
        22 usage
        24 msgEnd:assistant:stop, turnEnd:0, agentEnd:stop, |
      `)
    })
  })

  it('the message is named and priced by the model that finished it; the request went to it', async () => {
    const a = scriptedModel([overloaded], { model: primary })
    const b = scriptedModel([{ marbles: '-s-a-b-u-(p|)', values }], { model: backup })
    const events = await lastValueFrom(
      agentLoop(hello, { systemPrompt: '', messages: [], tools: [] }, { model: primary, streamFn: a.streamFn, fallback: [{ model: backup, streamFn: b.streamFn }], retry: false }).pipe(toArray()),
    )
    const [message] = assistantEnds(events)
    expect(assistantEnds(events)).toHaveLength(1)
    expect(message).toMatchObject({ provider: 'b', model: 'small', stopReason: 'stop', content: [{ type: 'text', text: 'Hello' }], cost: { input: 1 } })
    expect(b.requests[0]?.model.modelId).toBe('small')
    expect(events.find((e) => e.type === 'modelFallback')).toMatchObject({ from: { modelId: 'big' }, to: { modelId: 'small' }, error: { kind: 'overloaded' } })
  })

  it('errors that are not retryable do not fall back', async () => {
    const auth = ProviderError.of('auth', 'a', 'a 401: invalid key', { status: 401 })
    const a = scriptedModel([auth], { model: primary })
    const b = scriptedModel([{ marbles: '-s-(p|)', values }], { model: backup })
    const events = await lastValueFrom(
      agentLoop(hello, { systemPrompt: '', messages: [], tools: [] }, { model: primary, streamFn: a.streamFn, fallback: [{ model: backup, streamFn: b.streamFn }] }).pipe(toArray()),
    )
    expect(assistantEnds(events)[0]).toMatchObject({ stopReason: 'error', errorKind: 'auth', provider: 'a' })
    expect(b.requests).toHaveLength(0)
  })
})

describe('context overflow recovery', () => {
  const history = [userMessage('old question'), assistantMessage('old answer'), userMessage('older detail'), assistantMessage('ok')]

  it('retries the turn once with the recovered context, after a compaction event', () => {
    runAgentMarbles(({ expectTimeline }) => {
      const model = scriptedModel([overflow, { marbles: '-s-a-(p|)', values }])
      const run$ = agentLoop(hello, { systemPrompt: '', messages: history, tools: [] }, {
        model: model.model,
        streamFn: model.streamFn,
        recoverOverflow: (state) => ({
          messages: state.context.messages.slice(-1) as never,
          compaction: { droppedMessages: 4, droppedTokens: 20, keptMessages: 1, keptTokens: 2, budget: 50 },
        }),
      })
      expectTimeline(run$).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user, retry:1:contextOverflow, compaction:overflow:-4
        1 msgStart:assistant
        3 textDelta:"Hel"
        5 msgEnd:assistant:stop, turnEnd:0, agentEnd:stop, |
      `)
      void model
    })
  })

  it('sends the smaller context; a second overflow is a clear error', async () => {
    const model = scriptedModel([overflow, overflow])
    const events = await lastValueFrom(
      agentLoop(hello, { systemPrompt: '', messages: history, tools: [] }, {
        model: model.model,
        streamFn: model.streamFn,
        recoverOverflow: (state) => ({
          messages: state.context.messages.slice(-1) as never,
          compaction: { droppedMessages: 4, droppedTokens: 20, keptMessages: 1, keptTokens: 2, budget: 50 },
        }),
      }).pipe(toArray()),
    )
    expect(model.requests.map((r) => r.messages.length)).toEqual([5, 1])
    const [message] = assistantEnds(events)
    expect(message).toMatchObject({ stopReason: 'error', errorKind: 'contextOverflow' })
    expect(message?.errorMessage).toContain('the context still overflowed after compaction')
    expect(events.at(-1)).toMatchObject({ type: 'agentEnd', result: { stopReason: 'error' } })
  })

  it('without recovery the overflow ends the turn with the error', async () => {
    const model = scriptedModel([overflow])
    const events = await lastValueFrom(agentLoop(hello, { systemPrompt: '', messages: history, tools: [] }, { model: model.model, streamFn: model.streamFn }).pipe(toArray()))
    expect(assistantEnds(events)[0]).toMatchObject({ stopReason: 'error', errorKind: 'contextOverflow' })
    expect(model.requests).toHaveLength(1)
  })
})

describe('silent context overflow', () => {
  it('an answer whose prompt usage reached the context window is redone once with the recovered context', async () => {
    const windowed = modelSpec('ollama', 'small', { contextWindow: 1_000 })
    const model = scriptedModel([reply.text('garbled', { usage: { input: 1_000, output: 5 } }), reply.text('fine', { usage: { input: 300, output: 5 } })], { model: windowed })
    const events = await lastValueFrom(
      agentLoop(hello, { systemPrompt: '', messages: [userMessage('old'), assistantMessage('old answer')], tools: [] }, {
        model: windowed,
        streamFn: model.streamFn,
        recoverOverflow: (state) => ({ messages: state.context.messages.slice(-1) as never, compaction: { droppedMessages: 2, droppedTokens: 10, keptMessages: 1, keptTokens: 2, budget: 500 } }),
      }).pipe(toArray()),
    )
    const [message] = assistantEnds(events)
    expect(message).toMatchObject({ stopReason: 'stop', content: [{ type: 'text', text: 'fine' }] })
    expect(message!.usage.input).toBe(1_300) // the truncated attempt was billed too
    expect(events.find((e) => e.type === 'streamRetry')).toMatchObject({ error: { kind: 'contextOverflow' } })
    expect((events.find((e) => e.type === 'streamRetry') as { error: { message: string } }).error.message).toContain('silent context overflow')
    expect(model.requests.map((r) => r.messages.length)).toEqual([3, 1])
  })
})
