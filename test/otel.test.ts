/** rxagent/otel: a run as GenAI spans and metrics, checked with the OpenTelemetry SDK's in-memory exporter. */
import { describe, expect, it } from 'vitest'
import * as t from 'io-ts'
import { map, timer, throwError, concat, of, lastValueFrom, toArray, NEVER } from 'rxjs'
import { SpanKind, SpanStatusCode } from '@opentelemetry/api'
import { Agent } from '../src/agent/index.js'
import { agentLoop } from '../src/index.js'
import { defineTool } from '../src/tools/define-tool.js'
import { modelSpec } from '../src/types/model.js'
import { ProviderError } from '../src/types/provider-error.js'
import { assistantMessage, userMessage } from '../src/types/message.js'
import { chunk, reply, runAgentMarbles, scriptedModel } from '../marbles/index.js'
import { ATTR, EVENT, METRIC, otelForwarder, traceRun, type OtelOptions } from '../src/otel/index.js'
import { idOf, ms, parentOf, telemetry } from './support/otel-telemetry.js'

const work = defineTool({
  name: 'work',
  description: 'Works for n frames.',
  parameters: t.type({ n: t.number }),
  execute: ({ n }) => timer(n).pipe(map(() => `worked ${n}`)),
})
const failing = defineTool({ name: 'failing', description: 'Always fails.', parameters: t.type({}), execute: () => { throw new Error('disk full') } })
const usage = { input: 100, output: 20, cacheRead: 30, cacheWrite: 5 }

describe('otelForwarder (Agent)', () => {
  it('a tool-using run: invoke_agent over chat and execute_tool spans, kinds, parents, attributes, virtual times', () => {
    const tel = telemetry()
    runAgentMarbles(({ scheduler }) => {
      const values = { s: chunk.start('resp-1'), c: chunk.toolStart('c1', 'work'), d: chunk.args('c1', '{"n":10}'), e: chunk.toolEnd('c1'), p: chunk.stop('toolUse'), u: chunk.usage(usage), q: chunk.stop() }
      const model = scriptedModel([
        { marbles: '--s-c-d-e-p-(u|)', values },
        { marbles: '---s-(q|)', values },
      ], { model: modelSpec('anthropic', 'claude-x') })
      const agent = new Agent({ id: 'session-7', systemPrompt: '', model: model.model, streamFn: model.streamFn, tools: [work] })
      agent.addForwarder(otelForwarder({ ...tel.options, agentName: 'helper', scheduler }))
      agent.prompt('go')
    })
    const run = tel.one('invoke_agent helper')
    const chats = tel.byName('chat claude-x')
    const tool = tel.one('execute_tool work')
    expect(chats).toHaveLength(2)
    expect(run.kind).toBe(SpanKind.INTERNAL)
    expect(parentOf(run)).toBeUndefined()
    expect(chats.map((c) => c.kind)).toEqual([SpanKind.CLIENT, SpanKind.CLIENT])
    expect(chats.map(parentOf)).toEqual([idOf(run), idOf(run)])
    expect(tool.kind).toBe(SpanKind.INTERNAL)
    expect(parentOf(tool)).toBe(idOf(run))
    expect(run.attributes).toMatchObject({
      [ATTR.operationName]: 'invoke_agent',
      [ATTR.agentName]: 'helper',
      [ATTR.conversationId]: 'session-7',
      [ATTR.providerName]: 'anthropic',
      [ATTR.requestModel]: 'claude-x',
      [ATTR.usageInputTokens]: 135,
      [ATTR.usageOutputTokens]: 20,
      [ATTR.stopReason]: 'stop',
    })
    expect(chats[0]!.attributes).toMatchObject({
      [ATTR.operationName]: 'chat',
      [ATTR.providerName]: 'anthropic',
      [ATTR.requestModel]: 'claude-x',
      [ATTR.responseModel]: 'claude-x',
      [ATTR.responseId]: 'resp-1',
      [ATTR.responseFinishReasons]: ['tool_call'],
      [ATTR.usageInputTokens]: 135, // input + cache read + cache write
      [ATTR.usageOutputTokens]: 20,
      [ATTR.usageCacheReadTokens]: 30,
      [ATTR.usageCacheCreationTokens]: 5,
      [ATTR.conversationId]: 'session-7',
    })
    expect(chats[1]!.attributes[ATTR.responseFinishReasons]).toEqual(['stop'])
    // Time to first chunk: the first call's first content chunk (c) at frame 4 of the turn; the second call streams no content.
    expect(chats[0]!.attributes[ATTR.responseTimeToFirstChunk]).toBe(0.004)
    expect(chats[1]!.attributes[ATTR.responseTimeToFirstChunk]).toBeUndefined()
    expect(tool.attributes).toMatchObject({ [ATTR.operationName]: 'execute_tool', [ATTR.toolName]: 'work', [ATTR.toolCallId]: 'c1' })
    expect(tool.status.code).toBe(SpanStatusCode.UNSET)
    // Virtual time: the first call spans frames 0–12 (its usage chunk), the tool 10 frames, the second call 5 frames.
    expect(ms(chats[0]!.duration)).toBe(12)
    expect(ms(tool.duration)).toBe(10)
    expect(ms(chats[1]!.duration)).toBe(5)
    expect(ms(tool.startTime)).toBe(ms(chats[0]!.endTime))
    expect(ms(chats[1]!.startTime)).toBe(ms(tool.endTime))
    expect(ms(run.duration)).toBe(27)
    // Content is off by default.
    for (const span of tel.spans()) {
      for (const key of [ATTR.inputMessages, ATTR.outputMessages, ATTR.toolCallArguments, ATTR.toolCallResult]) expect(span.attributes[key]).toBeUndefined()
    }
  })

  it('records the token-usage and operation-duration histograms per model call', async () => {
    const tel = telemetry()
    runAgentMarbles(({ scheduler }) => {
      const model = scriptedModel([{ marbles: '--s-p-(u|)', values: { s: chunk.start(), p: chunk.stop(), u: chunk.usage(usage) } }], { model: modelSpec('openai', 'gpt-x') })
      const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, forwarders: [otelForwarder({ ...tel.options, scheduler })] })
      agent.prompt('go')
    })
    const tokens = await tel.histogram(METRIC.tokenUsage.name)
    expect(tokens?.descriptor.unit).toBe('{token}')
    const points = tokens!.dataPoints.map((p) => ({ type: p.attributes[ATTR.tokenType], sum: p.value.sum, model: p.attributes[ATTR.requestModel], provider: p.attributes[ATTR.providerName] }))
    expect(points).toEqual(expect.arrayContaining([
      { type: 'input', sum: 135, model: 'gpt-x', provider: 'openai' },
      { type: 'output', sum: 20, model: 'gpt-x', provider: 'openai' },
    ]))
    const duration = await tel.histogram(METRIC.operationDuration.name)
    expect(duration?.descriptor.unit).toBe('s')
    expect(duration!.dataPoints).toHaveLength(1)
    expect(duration!.dataPoints[0]!.value).toMatchObject({ count: 1, sum: 0.006 })
    expect(duration!.dataPoints[0]!.attributes).toMatchObject({ [ATTR.operationName]: 'chat', [ATTR.responseModel]: 'gpt-x' })
  })

  it('records the time-to-first-chunk histogram per streamed call, from the attempt that answered', async () => {
    const tel = telemetry()
    runAgentMarbles(({ scheduler }) => {
      const values = { s: chunk.start(), t: chunk.text('hi'), p: chunk.stop(), u: chunk.usage(usage) }
      const model = scriptedModel([{ marbles: '--s---t-p-(u|)', values }], { model: modelSpec('openai', 'gpt-x') })
      const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, forwarders: [otelForwarder({ ...tel.options, scheduler })] })
      agent.prompt('go')
    })
    const first = await tel.histogram(METRIC.timeToFirstChunk.name)
    expect(first?.descriptor.unit).toBe('s')
    expect(first!.dataPoints).toHaveLength(1)
    expect(first!.dataPoints[0]!.value).toMatchObject({ count: 1, sum: 0.006 })
    expect(first!.dataPoints[0]!.attributes).toMatchObject({ [ATTR.operationName]: 'chat', [ATTR.requestModel]: 'gpt-x' })
    expect(tel.one('chat gpt-x').attributes[ATTR.responseTimeToFirstChunk]).toBe(0.006)
  })

  it('a retried call: the time to first chunk is the answering attempt\'s, from the call\'s start', () => {
    const tel = telemetry()
    runAgentMarbles(({ scheduler }) => {
      const values = { s: chunk.start(), t: chunk.text('hi'), p: chunk.stop() }
      const overloaded = ProviderError.of('overloaded', 'scripted', 'overloaded', { status: 529 })
      // The first attempt streams a chunk at frame 3 (it would say 0.003), then fails at 5; after a 5-frame backoff the second attempt's first chunk comes 3 frames in: 13.
      const model = scriptedModel([{ marbles: '-s-t-#', values, error: overloaded }, { marbles: '-s-t-(p|)', values }], { model: modelSpec('openai', 'gpt-x') })
      const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, retry: { maxAttempts: 2, baseDelayMs: 5, jitter: 0 }, forwarders: [otelForwarder({ ...tel.options, scheduler })] })
      agent.prompt('go')
    })
    expect(tel.one('chat gpt-x').attributes[ATTR.responseTimeToFirstChunk]).toBe(0.013)
  })

  it('parallel tools: overlapping execute_tool spans under the same parent; a failing tool has error status', () => {
    const tel = telemetry()
    runAgentMarbles(({ scheduler }) => {
      const model = scriptedModel([
        reply.toolCalls([{ id: 'a', name: 'work', args: { n: 20 } }, { id: 'b', name: 'work', args: { n: 10 } }, { id: 'f', name: 'failing', args: {} }]),
        reply.text('done'),
      ])
      const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, tools: [work, failing], forwarders: [otelForwarder({ ...tel.options, scheduler })] })
      agent.prompt('go')
    })
    const run = tel.one('invoke_agent rxagent')
    const tools = tel.byName('execute_tool work').sort((x, y) => String(x.attributes[ATTR.toolCallId]).localeCompare(String(y.attributes[ATTR.toolCallId])))
    expect(tools.map((s) => s.attributes[ATTR.toolCallId])).toEqual(['a', 'b'])
    expect(tools.map(parentOf)).toEqual([idOf(run), idOf(run)])
    const [a, b] = tools as [(typeof tools)[number], (typeof tools)[number]]
    expect(ms(a.startTime)).toBe(ms(b.startTime))
    expect(ms(b.endTime)).toBeLessThan(ms(a.endTime))
    expect([ms(a.duration), ms(b.duration)]).toEqual([20, 10])
    const failed = tel.one('execute_tool failing')
    expect(failed.status).toMatchObject({ code: SpanStatusCode.ERROR, message: expect.stringContaining('disk full') })
    expect(failed.attributes[ATTR.errorType]).toBe('tool_error')
    expect(run.status.code).toBe(SpanStatusCode.UNSET)
  })

  it('an error: the chat span and the run span carry error.type and an error status', async () => {
    const tel = telemetry()
    const model = scriptedModel([ProviderError.of('auth', 'scripted', 'invalid x-api-key', { status: 401 })])
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, forwarders: [otelForwarder(tel.options)] })
    const result = await agent.prompt('go')
    expect(result.stopReason).toBe('error')
    const chat = tel.one('chat scripted-1')
    expect(chat.attributes[ATTR.errorType]).toBe('auth')
    expect(chat.status).toMatchObject({ code: SpanStatusCode.ERROR, message: expect.stringContaining('invalid x-api-key') })
    const run = tel.one('invoke_agent rxagent')
    expect(run.attributes[ATTR.errorType]).toBe('auth')
    expect(run.status.code).toBe(SpanStatusCode.ERROR)
    const duration = await tel.histogram(METRIC.operationDuration.name)
    expect(duration!.dataPoints[0]!.attributes[ATTR.errorType]).toBe('auth')
  })

  it('an abort: every span ends, the open ones with error.type aborted; the tool saw the abort', async () => {
    const tel = telemetry()
    let toolSignal: AbortSignal | undefined
    const hang = defineTool({ name: 'hang', description: 'Never ends.', parameters: t.type({}), execute: (_args, { signal }) => { toolSignal = signal; return NEVER } })
    const model = scriptedModel([reply.toolCalls([{ id: 'h', name: 'hang', args: {} }])])
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, tools: [hang], forwarders: [otelForwarder(tel.options)] })
    agent.subscribe((e) => { if (e.type === 'toolExecutionStart') queueMicrotask(() => agent.abort()) })
    const result = await agent.prompt('go')
    expect(result.stopReason).toBe('aborted')
    expect(toolSignal?.aborted).toBe(true)
    const run = tel.one('invoke_agent rxagent')
    expect(run.attributes[ATTR.errorType]).toBe('aborted')
    expect(run.status.code).toBe(SpanStatusCode.ERROR)
    const tool = tel.one('execute_tool hang')
    expect(tool.status.code).toBe(SpanStatusCode.ERROR)
    expect(tel.spans().every((s) => s.ended)).toBe(true)
  })

  it('retries, fallbacks and compactions are span events on the chat span', () => {
    const tel = telemetry()
    runAgentMarbles(({ scheduler }) => {
      const overloaded = ProviderError.of('overloaded', 'scripted', 'overloaded', { status: 529 })
      const primary = scriptedModel([overloaded, overloaded], { model: modelSpec('p', 'primary') })
      const backup = scriptedModel([reply.text('from backup')], { model: modelSpec('b', 'backup') })
      const agent = new Agent({
        systemPrompt: '',
        model: primary.model,
        streamFn: primary.streamFn,
        fallback: [{ model: backup.model, streamFn: backup.streamFn }],
        retry: { maxAttempts: 2, baseDelayMs: 5, jitter: 0 },
        forwarders: [otelForwarder({ ...tel.options, scheduler })],
      })
      agent.prompt('go')
    })
    const chat = tel.one('chat primary')
    expect(chat.attributes).toMatchObject({ [ATTR.requestModel]: 'primary', [ATTR.responseModel]: 'backup', [ATTR.providerName]: 'p' })
    const events = chat.events.map((e) => [e.name, e.attributes])
    expect(events).toEqual([
      [EVENT.retry, expect.objectContaining({ [ATTR.attempt]: 1, [ATTR.delayMs]: 5, [ATTR.errorType]: 'overloaded' })],
      [EVENT.fallback, expect.objectContaining({ [ATTR.fallbackFrom]: 'primary', [ATTR.fallbackTo]: 'backup', [ATTR.errorType]: 'overloaded' })],
      [EVENT.retry, expect.objectContaining({ [ATTR.errorType]: 'overloaded' })],
    ])
    expect(chat.status.code).toBe(SpanStatusCode.UNSET)
  })

  it('a compaction by the sliding window is a span event on the chat span', async () => {
    const tel = telemetry()
    const history = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? userMessage(`question ${i} ${'x'.repeat(200)}`) : assistantMessage(`answer ${i} ${'y'.repeat(200)}`)))
    const model = scriptedModel([reply.text('ok')])
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, messages: history, contextWindow: { maxTokens: 500 }, forwarders: [otelForwarder(tel.options)] })
    await agent.prompt('latest')
    const chat = tel.one('chat scripted-1')
    const compaction = chat.events.find((e) => e.name === EVENT.compaction)
    expect(compaction?.attributes).toMatchObject({ [ATTR.compactionReason]: 'window', [ATTR.budget]: 500 })
    expect(Number(compaction?.attributes?.[ATTR.droppedMessages])).toBeGreaterThan(0)
  })

  it('message content only when opted in, in the conventions\' message format', () => {
    const tel = telemetry()
    runAgentMarbles(({ scheduler }) => {
      const model = scriptedModel([reply.toolCalls([{ id: 'c1', name: 'work', args: { n: 1 } }]), reply.text('all done')])
      const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, tools: [work], forwarders: [otelForwarder({ ...tel.options, scheduler, captureContent: true })] })
      agent.prompt('please work')
    })
    const [first, second] = tel.byName('chat scripted-1')
    expect(JSON.parse(String(first!.attributes[ATTR.inputMessages]))).toEqual([{ role: 'user', parts: [{ type: 'text', content: 'please work' }] }])
    expect(JSON.parse(String(first!.attributes[ATTR.outputMessages]))).toEqual([
      { role: 'assistant', parts: [{ type: 'tool_call', id: 'c1', name: 'work', arguments: { n: 1 } }], finish_reason: 'tool_call' },
    ])
    expect(JSON.parse(String(second!.attributes[ATTR.inputMessages])).at(-1)).toEqual({
      role: 'tool',
      parts: [{ type: 'tool_call_response', id: 'c1', response: [{ type: 'text', content: 'worked 1' }] }],
    })
    const tool = tel.one('execute_tool work')
    expect(JSON.parse(String(tool.attributes[ATTR.toolCallArguments]))).toEqual({ n: 1 })
    expect(JSON.parse(String(tool.attributes[ATTR.toolCallResult]))).toEqual([{ type: 'text', text: 'worked 1' }])
  })

  it('one forwarder, two runs: two run spans; a bad option is a clear error', async () => {
    const tel = telemetry()
    const model = scriptedModel([reply.text('a'), reply.text('b')])
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, forwarders: [otelForwarder(tel.options)] })
    await agent.prompt('one')
    await agent.prompt('two')
    expect(tel.byName('invoke_agent rxagent')).toHaveLength(2)
    expect(() => otelForwarder({ captureContent: 'yes' } as never)).toThrow('otelForwarder: invalid options at captureContent: expected boolean, got string')
    expect(() => traceRun({ tracer: {} } as never)).toThrow('traceRun: invalid options at tracer')
  })
})

describe('traceRun (agentLoop operator)', () => {
  const context = () => ({ systemPrompt: '', messages: [], tools: [work] })

  it('traces an agentLoop run and passes its events through unchanged', async () => {
    const tel = telemetry()
    const model = scriptedModel([reply.toolCalls([{ id: 'c1', name: 'work', args: { n: 1 } }]), reply.text('ok')])
    const plain = await lastValueFrom(agentLoop('go', context(), { model: model.model, streamFn: scriptedModel([reply.toolCalls([{ id: 'c1', name: 'work', args: { n: 1 } }]), reply.text('ok')]).streamFn }).pipe(toArray()))
    const traced = await lastValueFrom(agentLoop('go', context(), { model: model.model, streamFn: model.streamFn }).pipe(traceRun({ ...tel.options, conversationId: 'conv-1' }), toArray()))
    expect(traced.map((e) => e.type)).toEqual(plain.map((e) => e.type))
    const run = tel.one('invoke_agent rxagent')
    expect(run.attributes[ATTR.conversationId]).toBe('conv-1')
    expect(tel.byName('chat scripted-1').map(parentOf)).toEqual([idOf(run), idOf(run)])
    expect(parentOf(tel.one('execute_tool work'))).toBe(idOf(run))
  })

  it('unsubscribing mid-run ends the open spans as aborted', () => {
    const tel = telemetry()
    runAgentMarbles(({ scheduler }) => {
      const model = scriptedModel([reply.toolCalls([{ id: 'c1', name: 'work', args: { n: 50 } }])])
      const subscription = agentLoop('go', context(), { model: model.model, streamFn: model.streamFn }).pipe(traceRun({ ...tel.options, scheduler })).subscribe()
      scheduler.schedule(() => subscription.unsubscribe(), 20)
    })
    const run = tel.one('invoke_agent rxagent')
    const tool = tel.one('execute_tool work')
    expect(run.attributes[ATTR.errorType]).toBe('aborted')
    expect(tool.attributes[ATTR.errorType]).toBe('aborted')
    expect(ms(tool.duration)).toBe(20)
    expect(ms(run.endTime)).toBe(ms(tool.endTime))
  })

  it('an error of the source ends the run span with the error', async () => {
    const tel = telemetry()
    const source = concat(of({ type: 'agentStart' as const }), throwError(() => new RangeError('broken pipe')))
    await expect(lastValueFrom(source.pipe(traceRun(tel.options)))).rejects.toThrow('broken pipe')
    const run = tel.one('invoke_agent rxagent')
    expect(run.attributes[ATTR.errorType]).toBe('RangeError')
    expect(run.status).toMatchObject({ code: SpanStatusCode.ERROR, message: 'broken pipe' })
    expect(run.events.map((e) => e.name)).toEqual(['exception'])
  })

  it('a tracer that throws errors the run (a user callback error goes to error)', async () => {
    const tracer = { startSpan: () => { throw new Error('exporter down') }, startActiveSpan: () => undefined } as unknown as OtelOptions['tracer']
    const model = scriptedModel([reply.text('ok')])
    await expect(lastValueFrom(agentLoop('go', context(), { model: model.model, streamFn: model.streamFn }).pipe(traceRun({ tracer })))).rejects.toThrow('exporter down')
  })
})

