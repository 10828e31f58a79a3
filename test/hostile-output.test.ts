/**
 * Hostile model output and hostile tool data (issue 12, point 9): nothing a
 * model or a tool sends may take the process down or stall a run.
 */
import { describe, expect, it } from 'vitest'
import * as t from 'io-ts'
import { concatMap, from, lastValueFrom, Observable, timer, toArray } from 'rxjs'
import { agentLoop } from '../src/loop/agent-loop.js'
import { Agent } from '../src/agent/agent.js'
import { defineTool } from '../src/tools/define-tool.js'
import { accumulateMessage } from '../operators/accumulate-message.js'
import { deepFreeze, MAX_ARGUMENT_DEPTH } from '../src/types/deep-freeze.js'
import type { ProviderChunk } from '../src/types/chunk.js'
import type { AgentEvent } from '../src/types/event.js'
import { modelSpec } from '../src/types/model.js'
import { assistantMessage, userMessage, type AgentMessage } from '../src/types/message.js'
import { chunk, reply, scriptedModel } from '../marbles/index.js'
import { collect, context, hello, resultOf, textOf, toolResultsOf } from './helpers.js'

/** Well past any call stack: a recursive walk over it throws `RangeError` wherever it runs. */
const DEPTH = 100_000
const deepArgs = (n: number): string => `{"x":${'['.repeat(n)}${']'.repeat(n)}}`
const nested = (n: number): unknown => {
  let v: unknown = 1
  for (let i = 0; i < n; i++) v = [v]
  return v
}

const echo = defineTool({ name: 'echo', description: 'answers ok', parameters: t.type({}), execute: () => 'ok' })
const deepCall = (n: number): ProviderChunk[] => [chunk.start(), chunk.toolStart('c1', 'echo'), chunk.args('c1', deepArgs(n)), chunk.toolEnd('c1'), chunk.stop('toolUse')]
/** The chunks, each on its own macrotask: what a throw inside the fold does there is an uncaught exception. */
const async = (chunks: readonly ProviderChunk[]): Observable<ProviderChunk> => from(chunks).pipe(concatMap((c) => timer(0).pipe(concatMap(() => [c]))))

const tooDeep = `Tool call not executed: its arguments are nested deeper than ${MAX_ARGUMENT_DEPTH} levels.`

describe('deeply nested tool-call arguments', () => {
  it('a synchronous stream: the call gets a parse error the model reads, and the run ends', () => {
    const model = scriptedModel([deepCall(DEPTH), reply.text('sorry')])
    const events = collect(agentLoop(hello, context([echo]), { model: model.model, streamFn: model.streamFn }))
    expect(resultOf(events).stopReason).toBe('stop')
    expect(toolResultsOf(events).map(textOf)).toEqual([tooDeep])
    expect(model.requests[1]!.messages.at(-1)).toMatchObject({ role: 'toolResult', isError: true })
  })

  it('an asynchronous stream: no uncaught RangeError, the call gets a parse error', async () => {
    const model = scriptedModel([() => async(deepCall(DEPTH)), reply.text('sorry')])
    const events = await lastValueFrom(agentLoop(hello, context([echo]), { model: model.model, streamFn: model.streamFn }).pipe(toArray()))
    expect(resultOf(events).stopReason).toBe('stop')
    expect(toolResultsOf(events).map(textOf)).toEqual([tooDeep])
  })

  it(`arguments exactly ${MAX_ARGUMENT_DEPTH} levels deep run; one level more does not`, () => {
    // `{"x":` is level 1, so n arrays make n + 1 levels.
    const model = scriptedModel([
      [chunk.start(), chunk.toolStart('ok', 'echo'), chunk.args('ok', deepArgs(MAX_ARGUMENT_DEPTH - 1)), chunk.toolEnd('ok'),
        chunk.toolStart('deep', 'echo'), chunk.args('deep', deepArgs(MAX_ARGUMENT_DEPTH)), chunk.toolEnd('deep'), chunk.stop('toolUse')],
      reply.text('done'),
    ])
    const events = collect(agentLoop(hello, context([echo]), { model: model.model, streamFn: model.streamFn }))
    expect(toolResultsOf(events).map(textOf)).toEqual(['ok', tooDeep])
  })

  it('maxArgumentDepth configures the cap, in agentLoop and in the Agent', async () => {
    const script = () => [
      [chunk.start(), chunk.toolStart('ok', 'echo'), chunk.args('ok', '{"a":{"b":{"c":1}}}'), chunk.toolEnd('ok'),
        chunk.toolStart('deep', 'echo'), chunk.args('deep', '{"a":{"b":{"c":[1]}}}'), chunk.toolEnd('deep'), chunk.stop('toolUse')],
      reply.text('done'),
    ]
    const nestedTooDeep = 'Tool call not executed: its arguments are nested deeper than 3 levels.'
    const model = scriptedModel(script())
    const events = collect(agentLoop(hello, context([echo]), { model: model.model, streamFn: model.streamFn, maxArgumentDepth: 3 }))
    expect(toolResultsOf(events).map(textOf)).toEqual(['ok', nestedTooDeep])
    const agentModel = scriptedModel(script())
    const agent = new Agent({ systemPrompt: 's', model: agentModel.model, streamFn: agentModel.streamFn, tools: [echo], maxArgumentDepth: 3 })
    const result = await agent.prompt('hi')
    expect(result.messages.filter((m) => m.role === 'toolResult').map((m) => textOf(m as { readonly content: readonly { type: string; text?: string }[] }))).toEqual(['ok', nestedTooDeep])
  })

  it('a late reader (the immer path of the fold) sees the same parse error, and the arguments are frozen', () => {
    const events: AgentEvent[] = []
    from([...deepCall(DEPTH).slice(0, -1), chunk.toolStart('c2', 'echo'), chunk.args('c2', '{"a":{"b":[1]}}'), chunk.toolEnd('c2'), chunk.stop('toolUse')])
      .pipe(accumulateMessage({ model: modelSpec('t', 't'), now: () => 0 }))
      .subscribe((e) => events.push(e as AgentEvent))
    // Read the snapshot after the first call's end only now, after later chunks: it is rebuilt with immer.
    const update = events.find((e) => e.type === 'messageUpdate' && e.chunk.type === 'toolUseEnd')
    const message = update?.type === 'messageUpdate' ? update.message : undefined
    expect(message?.content[0]).toMatchObject({ type: 'toolCall', parseError: `arguments are nested deeper than ${MAX_ARGUMENT_DEPTH} levels` })
    const end = events.at(-1)
    const second = end?.type === 'messageEnd' && end.message.role === 'assistant' ? end.message.content[1] : undefined
    expect(second?.type === 'toolCall' && Object.isFrozen((second.arguments.a as { b: unknown }).b)).toBe(true)
  })
})

describe('deeply nested data from a server or a tool', () => {
  it(`extension data ${DEPTH} deep: the message folds and is frozen, read early or late`, async () => {
    const data = nested(DEPTH)
    const chunks: ProviderChunk[] = [chunk.start(), { type: 'extension', typeName: 'x', data }, chunk.text('hi'), chunk.stop()]
    const events = await lastValueFrom(async(chunks).pipe(accumulateMessage({ model: modelSpec('t', 't'), now: () => 0 }), toArray()))
    const end = events.at(-1)
    expect(end?.type === 'messageEnd' && end.message.role === 'assistant' ? end.message.stopReason : undefined).toBe('stop')
    const first = events.find((e) => e.type === 'messageUpdate')
    expect(first?.type === 'messageUpdate' ? first.message.content[0]?.type : undefined).toBe('extension')
    expect(Object.isFrozen(data)).toBe(true)
  })

  it(`a tool result whose details are ${DEPTH} deep goes through the Agent's state`, async () => {
    const details = nested(DEPTH)
    const tool = defineTool({ name: 'echo', description: 'deep details', parameters: t.type({}), execute: () => ({ content: [{ type: 'text', text: 'ok' }], details }) })
    const model = scriptedModel([() => async(reply.toolCalls([{ id: 'c1', name: 'echo', args: {} }])), () => async(reply.text('done'))])
    const agent = new Agent({ systemPrompt: 's', model: model.model, streamFn: model.streamFn, tools: [tool] })
    const result = await agent.prompt('hi')
    expect(result.stopReason).toBe('stop')
    expect(agent.state.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant'])
    expect(agent.state.isRunning).toBe(false)
  })

  it('a transcript with deep details, given to the constructor, goes through the Agent', async () => {
    const model = scriptedModel([() => async(reply.text('done'))])
    const messages: AgentMessage[] = [
      userMessage('hi'),
      assistantMessage([{ type: 'toolCall', id: 'x', name: 'echo', arguments: {} }], { stopReason: 'toolUse' }),
      { role: 'toolResult', toolCallId: 'x', toolName: 'echo', content: [], isError: false, timestamp: 0, details: nested(DEPTH) },
    ]
    const agent = new Agent({ systemPrompt: 's', model: model.model, streamFn: model.streamFn, messages })
    const result = await agent.prompt('again')
    expect(result.stopReason).toBe('stop')
    expect(agent.state.messages).toHaveLength(5)
  })

  it('deepFreeze freezes any depth without recursion', () => {
    const value = nested(DEPTH)
    deepFreeze(value)
    let v = value
    let frozen = 0
    while (Array.isArray(v)) {
      if (Object.isFrozen(v)) frozen++
      v = v[0]
    }
    expect(frozen).toBe(DEPTH)
  })
})

/** A bare Observable emitting the chunks from a timer callback: an exception thrown into it has nobody to catch it. */
const bare = (chunks: readonly ProviderChunk[]): Observable<ProviderChunk> =>
  new Observable<ProviderChunk>((subscriber) => {
    const id = setTimeout(() => {
      for (const c of chunks) subscriber.next(c)
      subscriber.complete()
    }, 0)
    return () => clearTimeout(id)
  })

describe('an exception inside the fold or a reducer is an error answer', () => {
  it('a chunk that throws when read (bare asynchronous stream) ends the message with an error, not an uncaught exception', async () => {
    const hostile = { type: 'textDelta', get text(): string { throw new Error('hostile getter') } } as unknown as ProviderChunk
    const model = scriptedModel([() => bare([chunk.start(), chunk.text('a'), hostile, chunk.text('b'), chunk.stop()])])
    const events = await lastValueFrom(agentLoop(hello, context(), { model: model.model, streamFn: model.streamFn, retry: false }).pipe(toArray()))
    const result = resultOf(events)
    expect(result.stopReason).toBe('error')
    expect(result.error).toContain('hostile getter')
    expect(textOf(result.messages.at(-1) as { content: readonly { type: string; text?: string }[] })).toBe('a')
  })

  it('a null chunk (bare asynchronous stream) ends the message with an error', async () => {
    const model = scriptedModel([() => bare([chunk.start(), chunk.text('a'), null as unknown as ProviderChunk, chunk.stop()])])
    const events = await lastValueFrom(agentLoop(hello, context(), { model: model.model, streamFn: model.streamFn, retry: false }).pipe(toArray()))
    expect(resultOf(events)).toMatchObject({ stopReason: 'error', error: expect.stringContaining('the stream could not be folded') })
  })

  it('a chunk that throws when read (asynchronous stream) ends the message with an error, not an uncaught exception', async () => {
    const hostile = { type: 'textDelta', get text(): string { throw new Error('hostile getter') } } as unknown as ProviderChunk
    const model = scriptedModel([() => async([chunk.start(), chunk.text('a'), hostile, chunk.stop()])])
    const events = await lastValueFrom(agentLoop(hello, context(), { model: model.model, streamFn: model.streamFn, retry: false }).pipe(toArray()))
    const result = resultOf(events)
    expect(result.stopReason).toBe('error')
    expect(result.error).toContain('hostile getter')
  })

  it('a tool result the Agent cannot store ends the run with an error naming it; the transcript stays valid', async () => {
    const details = new Proxy({}, { ownKeys: () => { throw new Error('hostile details') } })
    const tool = defineTool({ name: 'echo', description: 'hostile details', parameters: t.type({}), execute: () => ({ content: [{ type: 'text', text: 'ok' }], details }) })
    const model = scriptedModel([() => async(reply.toolCalls([{ id: 'c1', name: 'echo', args: {} }])), () => async(reply.text('done'))])
    const agent = new Agent({ systemPrompt: 's', model: model.model, streamFn: model.streamFn, tools: [tool] })
    await expect(agent.prompt('hi').result).rejects.toThrow(/hostile details/)
    expect(agent.state.isRunning).toBe(false)
    expect(agent.state.error).toContain('hostile details')
    // The call has a result (a synthetic one), so the next request is valid.
    const roles = agent.state.messages.map((m) => m.role)
    expect(roles).toEqual(['user', 'assistant', 'toolResult'])
  })
})
