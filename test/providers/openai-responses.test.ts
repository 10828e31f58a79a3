/**
 * The OpenAI Responses adapter, offline: decoding hand-written streams in
 * the API's wire format, request building (replay of the adapter's own
 * output and of other providers' transcripts), error classification, split
 * invariance, and an agent loop against the local replay server.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import * as fc from 'fast-check'
import * as t from 'io-ts'
import { concat, firstValueFrom, from, lastValueFrom, throwError, toArray } from 'rxjs'
import { accumulateMessage } from '../../operators/accumulate-message.js'
import { agentLoop } from '../../src/loop/agent-loop.js'
import { transcriptFromEvents } from '../../src/loop/transcript.js'
import { decodeWire, WireReader } from '../../src/providers/protocol.js'
import { OPENAI_BASE_URL, openaiHttpError, openaiResponses, openaiResponsesProtocol, type OpenAIResponsesSettings } from '../../src/providers/openai-responses.js'
import { MESSAGE_MARKER } from '../../src/providers/openai-responses-items.js'
import { OpenAIResponsesDecoder } from '../../src/providers/openai-responses-decoder.js'
import { normalizeOpenAIToolCallId, openaiResponsesRequestBody } from '../../src/providers/openai-responses-request.js'
import { defineTool } from '../../src/tools/define-tool.js'
import type { ProviderChunk } from '../../src/types/chunk.js'
import type { AssistantContent } from '../../src/types/content.js'
import { imageBase64, imageUrl, text } from '../../src/types/content.js'
import type { AgentEvent } from '../../src/types/event.js'
import { AgentMessage, assistantMessage, userMessage, type AssistantMessage, type LlmMessage, type ToolResultMessage } from '../../src/types/message.js'
import { modelSpec, type ModelSpec, type ThinkingLevel } from '../../src/types/model.js'
import { ProviderError } from '../../src/types/provider-error.js'
import type { LlmRequest } from '../../src/types/request.js'
import { costOf, type Usage } from '../../src/types/usage.js'
import { sseBody, splitBytes, replayServerPerTest } from './replay-server.js'

type Json = Record<string, unknown>

const KEY = 'sk-test-openai-secret-0123456789'
const rates = { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 0 }
const gpt5 = modelSpec('openai', 'gpt-5', { thinkingLevel: 'medium', cost: rates })
const weatherSchema = { name: 'weather', description: 'Current weather of a city.', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }

const fixture = (name: string): string => readFileSync(new URL(`../fixtures/openai-responses/${name}`, import.meta.url), 'utf8')

const request = (messages: readonly LlmMessage[], more: Partial<LlmRequest> = {}): LlmRequest => ({ model: gpt5, systemPrompt: 'Be brief.', messages, tools: [weatherSchema], ...more })

/** Decodes wire text, optionally split into network chunks of `size` bytes. */
const decode = (wire: string, size?: number, req?: LlmRequest): ProviderChunk[] =>
  decodeWire(new OpenAIResponsesDecoder(req), size === undefined ? [wire] : splitBytes(wire, size))

async function foldChunks(chunks: readonly ProviderChunk[], model: ModelSpec = gpt5): Promise<AssistantMessage> {
  const events = await lastValueFrom(from(chunks).pipe(accumulateMessage({ model, now: () => 0 }), toArray()))
  const end = events.find((e) => e.type === 'messageEnd')
  if (end === undefined) throw new Error('no messageEnd')
  return end.message
}

const decodeError = (wire: string): ProviderError => {
  try {
    decode(wire, 5)
  } catch (error) {
    if (error instanceof ProviderError) return error
    throw error
  }
  throw new Error('decoding did not fail')
}

// Inline events, in the API's shapes.
const sse = (events: readonly Json[]): string => sseBody(events.map((e) => ({ event: String(e['type']), data: e })))
const created = (model = 'gpt-5'): Json => ({ type: 'response.created', sequence_number: 0, response: { id: 'resp_t1', object: 'response', status: 'in_progress', model, output: [], usage: null } })
const usage = (input: number, cached: number, output: number, reasoning: number): Json => ({
  input_tokens: input,
  input_tokens_details: { cached_tokens: cached },
  output_tokens: output,
  output_tokens_details: { reasoning_tokens: reasoning },
  total_tokens: input + output,
})
const completed = (u: Json | null = usage(10, 0, 5, 0), status = 'completed', more: Json = {}): Json => ({
  type: status === 'completed' ? 'response.completed' : `response.${status}`,
  response: { id: 'resp_t1', object: 'response', status, model: 'gpt-5', output: [], usage: u, ...more },
})
const messageAdded = (id: string, index = 0, phase?: string): Json => ({
  type: 'response.output_item.added',
  output_index: index,
  item: { id, type: 'message', status: 'in_progress', content: [], role: 'assistant', ...(phase === undefined ? {} : { phase }) },
})
const textDelta = (itemId: string, delta: string, index = 0): Json => ({ type: 'response.output_text.delta', item_id: itemId, output_index: index, content_index: 0, delta })
const messageDone = (id: string, body: string, index = 0, phase?: string, part: Json = { type: 'output_text', annotations: [], text: body }): Json => ({
  type: 'response.output_item.done',
  output_index: index,
  item: { id, type: 'message', status: 'completed', content: [part], role: 'assistant', ...(phase === undefined ? {} : { phase }) },
})
const callAdded = (itemId: string, callId: string, name: string, index = 0): Json => ({
  type: 'response.output_item.added',
  output_index: index,
  item: { id: itemId, type: 'function_call', status: 'in_progress', arguments: '', call_id: callId, name },
})
const argsDelta = (itemId: string, delta: string, index = 0): Json => ({ type: 'response.function_call_arguments.delta', item_id: itemId, output_index: index, delta })
const argsDone = (itemId: string, args: string, index = 0): Json => ({ type: 'response.function_call_arguments.done', item_id: itemId, output_index: index, arguments: args })
const callDone = (itemId: string, callId: string, name: string, args: string, index = 0): Json => ({
  type: 'response.output_item.done',
  output_index: index,
  item: { id: itemId, type: 'function_call', status: 'completed', arguments: args, call_id: callId, name },
})

/** The usage invariants of src/types/usage.ts. */
function expectUsageInvariants(u: Usage, reportedTotal?: number): void {
  expect(u.reasoning).toBeLessThanOrEqual(u.output)
  expect(u.total).toBe(reportedTotal ?? u.input + u.output + u.cacheRead + u.cacheWrite)
}

describe('decoding', () => {
  it('streams text with multi-byte characters; usage splits cached input; cost from the model rates', async () => {
    const chunks = decode(fixture('text.sse'), 3)
    expect(chunks[0]).toEqual({ type: 'messageStart', id: 'resp_rx_text_01', model: 'gpt-5-mini-2025-08-07' })
    const message = await foldChunks(chunks)
    expect(message.content).toEqual([
      { type: 'text', text: 'Grüße aus Zürich 🚀 — 日本語も OK.' },
      { type: 'extension', typeName: MESSAGE_MARKER, data: { id: 'msg_rx_text_01' } },
    ])
    expect(message).toMatchObject({ stopReason: 'stop', responseId: 'resp_rx_text_01', model: 'gpt-5-mini-2025-08-07' })
    // input_tokens 1200 includes 1024 cached; output 90 includes 64 reasoning.
    expect(message.usage).toEqual({ input: 176, output: 90, reasoning: 64, cacheRead: 1024, cacheWrite: 0, total: 1290, extra: {} })
    expectUsageInvariants(message.usage, 1290)
    expect(message.cost.total).toBeCloseTo((176 * 1.25 + 90 * 10 + 1024 * 0.125) / 1e6, 12)
    expect(message.cost).toEqual(costOf(message.usage, rates))
    // Usage comes once, after stop: the sum of usage chunks is the final count.
    expect(chunks.filter((c) => c.type === 'usage')).toHaveLength(1)
    expect(chunks.at(-2)).toEqual({ type: 'stop', reason: 'endTurn' })
  })

  it('reasoning summary parts become one thinking block with a replayable signature; two calls stream their arguments', async () => {
    const chunks = decode(fixture('reasoning-tools.sse'), 11)
    const message = await foldChunks(chunks)
    const [thinking, first, second] = message.content
    expect(thinking).toMatchObject({ type: 'thinking', thinking: "**Checking both cities**\n\nI'll look up Oslo and Lima at once." })
    expect(JSON.parse((thinking as { signature: string }).signature)).toEqual({
      id: 'rs_rx_tools_01',
      encrypted_content: 'enc-final-BBBB',
      summary: [
        { type: 'summary_text', text: '**Checking both cities**' },
        { type: 'summary_text', text: "I'll look up Oslo and Lima at once." },
      ],
    })
    expect(first).toEqual({ type: 'toolCall', id: 'call_rxOslo01|fc_rx_tools_01', name: 'weather', arguments: { city: 'Oslo' } })
    expect(second).toEqual({ type: 'toolCall', id: 'call_rxLima02|fc_rx_tools_02', name: 'weather', arguments: { city: 'Lima' } })
    expect(message.content).toHaveLength(3)
    expect(chunks.filter((c) => c.type === 'toolUseArgsDelta' && c.id.startsWith('call_rxLima02')).map((c) => (c as { fragment: string }).fragment)).toEqual(['{"ci', 'ty":"Li', 'ma"}'])
    expect(message.stopReason).toBe('toolUse')
    expect(message.usage).toMatchObject({ input: 310, output: 180, reasoning: 128, cacheRead: 0, total: 490 })
    expectUsageInvariants(message.usage, 490)
  })

  it('a refusal is text and stops with refusal', async () => {
    const wire = sse([
      created(),
      messageAdded('msg_r'),
      { type: 'response.refusal.delta', item_id: 'msg_r', output_index: 0, content_index: 0, delta: "I can't help" },
      { type: 'response.refusal.delta', item_id: 'msg_r', output_index: 0, content_index: 0, delta: ' with that.' },
      messageDone('msg_r', '', 0, undefined, { type: 'refusal', refusal: "I can't help with that." }),
      completed(),
    ])
    const message = await foldChunks(decode(wire))
    expect(message.content[0]).toEqual({ type: 'text', text: "I can't help with that." })
    expect(message.stopReason).toBe('refusal')
  })

  it('incomplete for max_output_tokens stops with length; an unfinished call stays unexecutable', async () => {
    const wire = sse([
      created(),
      callAdded('fc_1', 'call_1', 'weather'),
      argsDelta('fc_1', '{"city":"Os'),
      completed(usage(20, 0, 16, 0), 'incomplete', { incomplete_details: { reason: 'max_output_tokens' } }),
    ])
    const message = await foldChunks(decode(wire))
    expect(message.stopReason).toBe('length')
    expect(message.content[0]).toMatchObject({ type: 'toolCall', name: 'weather', partialJson: '{"city":"Os' })
  })

  it('incomplete for content_filter stops with refusal', async () => {
    const wire = sse([created(), messageAdded('msg_1'), textDelta('msg_1', 'Part'), completed(usage(5, 0, 1, 0), 'incomplete', { incomplete_details: { reason: 'content_filter' } })])
    expect((await foldChunks(decode(wire))).stopReason).toBe('refusal')
  })

  it('message phases are kept: one text block per message item, each followed by its marker', async () => {
    const wire = sse([
      created('gpt-5.3-codex'),
      messageAdded('msg_a', 0, 'commentary'),
      textDelta('msg_a', 'Checking sources.'),
      messageDone('msg_a', 'Checking sources.', 0, 'commentary'),
      messageAdded('msg_b', 1, 'final_answer'),
      textDelta('msg_b', 'Here is the answer.', 1),
      messageDone('msg_b', 'Here is the answer.', 1, 'final_answer'),
      completed(),
    ])
    const message = await foldChunks(decode(wire))
    expect(message.content).toEqual([
      { type: 'text', text: 'Checking sources.' },
      { type: 'extension', typeName: MESSAGE_MARKER, data: { id: 'msg_a', phase: 'commentary' } },
      { type: 'text', text: 'Here is the answer.' },
      { type: 'extension', typeName: MESSAGE_MARKER, data: { id: 'msg_b', phase: 'final_answer' } },
    ])
  })

  it('citations of a message are kept in its marker', async () => {
    const annotation = { type: 'url_citation', start_index: 0, end_index: 4, url: 'https://example.org', title: 'Example' }
    const wire = sse([created(), messageAdded('msg_1'), textDelta('msg_1', 'Fact'), messageDone('msg_1', 'Fact', 0, undefined, { type: 'output_text', annotations: [annotation], text: 'Fact' }), completed()])
    const message = await foldChunks(decode(wire))
    expect(message.content[1]).toEqual({ type: 'extension', typeName: MESSAGE_MARKER, data: { id: 'msg_1', annotations: [annotation] } })
  })

  it('items the runtime has no type for become extensions holding the whole item', async () => {
    const search = { id: 'ws_1', type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'weather Oslo' } }
    const wire = sse([
      created(),
      { type: 'response.output_item.added', output_index: 0, item: { id: 'ws_1', type: 'web_search_call', status: 'in_progress' } },
      { type: 'response.web_search_call.searching', output_index: 0, item_id: 'ws_1' },
      { type: 'response.output_item.done', output_index: 0, item: search },
      messageAdded('msg_1', 1),
      textDelta('msg_1', 'Cold.', 1),
      messageDone('msg_1', 'Cold.', 1),
      completed(),
    ])
    const message = await foldChunks(decode(wire))
    expect(message.content[0]).toEqual({ type: 'extension', typeName: 'web_search_call', data: search })
    expect(message.content[1]).toEqual({ type: 'text', text: 'Cold.' })
    expect(message.stopReason).toBe('stop')
  })

  it('a custom tool call carries its free-form input as {input}', async () => {
    const wire = sse([
      created(),
      { type: 'response.output_item.added', output_index: 0, item: { type: 'custom_tool_call', id: 'ctc_1', call_id: 'call_sql', name: 'write_sql', input: '' } },
      { type: 'response.custom_tool_call_input.delta', item_id: 'ctc_1', output_index: 0, delta: 'SELECT "a",\n' },
      { type: 'response.custom_tool_call_input.delta', item_id: 'ctc_1', output_index: 0, delta: ' 1' },
      { type: 'response.output_item.done', output_index: 0, item: { type: 'custom_tool_call', id: 'ctc_1', call_id: 'call_sql', name: 'write_sql', input: 'SELECT "a",\n 1', status: 'completed' } },
      completed(),
    ])
    const chunks = decode(wire)
    // One fragment, JSON-encoded, at the end: the raw input is not JSON.
    expect(chunks.filter((c) => c.type === 'toolUseArgsDelta')).toEqual([{ type: 'toolUseArgsDelta', id: 'call_sql|ctc_1', fragment: JSON.stringify({ input: 'SELECT "a",\n 1' }) }])
    const message = await foldChunks(chunks)
    expect(message.content[0]).toEqual({ type: 'toolCall', id: 'call_sql|ctc_1', name: 'write_sql', arguments: { input: 'SELECT "a",\n 1' } })
    expect(message.stopReason).toBe('toolUse')
  })

  const wrapperArgs = JSON.stringify({
    tool_uses: [
      { recipient_name: 'functions.weather', parameters: { city: 'Oslo' } },
      { recipient_name: 'functions.time', parameters: { zone: 'UTC' } },
    ],
  })

  for (const name of ['parallel', 'multi_tool_use.parallel']) {
    it(`the '${name}' wrapper is unwrapped into one call per entry`, async () => {
      const wire = sse([created(), callAdded('fc_w', 'call_w', name), argsDelta('fc_w', wrapperArgs.slice(0, 20)), argsDelta('fc_w', wrapperArgs.slice(20)), argsDone('fc_w', wrapperArgs), callDone('fc_w', 'call_w', name, wrapperArgs), completed()])
      const message = await foldChunks(decode(wire, 9))
      expect(message.content).toEqual([
        { type: 'toolCall', id: 'call_w_1', name: 'weather', arguments: { city: 'Oslo' } },
        { type: 'toolCall', id: 'call_w_2', name: 'time', arguments: { zone: 'UTC' } },
      ])
      expect(message.stopReason).toBe('toolUse')
    })
  }

  it("a tool of the app's own named 'parallel' is not unwrapped", async () => {
    const wire = sse([created(), callAdded('fc_w', 'call_w', 'parallel'), argsDelta('fc_w', wrapperArgs), argsDone('fc_w', wrapperArgs), completed()])
    const own = request([], { tools: [{ name: 'parallel', description: 'd', parameters: { type: 'object' } }] })
    const message = await foldChunks(decode(wire, undefined, own))
    expect(message.content).toEqual([{ type: 'toolCall', id: 'call_w|fc_w', name: 'parallel', arguments: JSON.parse(wrapperArgs) }])
  })

  it('a server that sends only finished items still yields full text, thinking and arguments', async () => {
    const wire = sse([
      created(),
      { type: 'response.output_item.done', output_index: 0, item: { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Plan.' }], encrypted_content: 'enc' } },
      messageDone('msg_1', 'Answer.', 1),
      callDone('fc_1', 'call_1', 'weather', '{"city":"Rome"}', 2),
      completed(),
    ])
    const message = await foldChunks(decode(wire))
    expect(message.content.map((c) => c.type)).toEqual(['thinking', 'text', 'extension', 'toolCall'])
    expect(message.content[0]).toMatchObject({ thinking: 'Plan.' })
    expect(message.content[1]).toEqual({ type: 'text', text: 'Answer.' })
    expect(message.content[3]).toEqual({ type: 'toolCall', id: 'call_1|fc_1', name: 'weather', arguments: { city: 'Rome' } })
  })

  it('works without event: lines, and ignores a trailing [DONE]', async () => {
    const events = [created(), messageAdded('msg_1'), textDelta('msg_1', 'Hi'), messageDone('msg_1', 'Hi'), completed()]
    const wire = sseBody(events.map((data) => ({ data }))) + 'data: [DONE]\n\n'
    const message = await foldChunks(decode(wire, 4))
    expect(message.content[0]).toEqual({ type: 'text', text: 'Hi' })
    expect(message.stopReason).toBe('stop')
  })

  it('raw reasoning text (open-weight models) streams as thinking too', async () => {
    const wire = sse([
      created('gpt-oss-120b'),
      { type: 'response.output_item.added', output_index: 0, item: { id: 'rs_1', type: 'reasoning', summary: [] } },
      { type: 'response.reasoning_text.delta', item_id: 'rs_1', output_index: 0, content_index: 0, delta: 'The user wants ' },
      { type: 'response.reasoning_text.delta', item_id: 'rs_1', output_index: 0, content_index: 0, delta: 'a number.' },
      { type: 'response.output_item.done', output_index: 0, item: { id: 'rs_1', type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'The user wants a number.' }] } },
      messageAdded('msg_1', 1),
      textDelta('msg_1', '42', 1),
      messageDone('msg_1', '42', 1),
      completed(),
    ])
    const message = await foldChunks(decode(wire))
    expect(message.content[0]).toMatchObject({ type: 'thinking', thinking: 'The user wants a number.' })
    expect(message.content[1]).toEqual({ type: 'text', text: '42' })
  })

  it('a second, different response inside one body is a protocol error', () => {
    const other = { type: 'response.created', response: { id: 'resp_other', status: 'in_progress', model: 'gpt-5', output: [] } }
    expect(decodeError(sse([created(), messageAdded('msg_1'), textDelta('msg_1', 'a'), other])).info.kind).toBe('protocol')
    // The same response announced again is harmless.
    expect(() => decode(sse([created(), created(), completed()]))).not.toThrow()
  })

  it('a zero-argument call parses to {}', async () => {
    const wire = sse([created(), callAdded('fc_1', 'call_1', 'now'), argsDone('fc_1', ''), completed()])
    expect((await foldChunks(decode(wire))).content[0]).toEqual({ type: 'toolCall', id: 'call_1|fc_1', name: 'now', arguments: {} })
  })
})

describe('stream errors', () => {
  const cases: [string, Json, string, boolean][] = [
    ['flat error event, rate_limit_exceeded', { type: 'error', code: 'rate_limit_exceeded', message: 'Rate limit reached for gpt-5.', param: null }, 'rateLimit', true],
    ['nested error event, insufficient_quota', { type: 'error', error: { type: 'insufficient_quota', code: 'insufficient_quota', message: 'You exceeded your current quota.', param: null } }, 'rateLimit', false],
    ['response.failed, server_error', { type: 'response.failed', response: { id: 'resp_t1', status: 'failed', error: { code: 'server_error', message: 'The server had an error.' } } }, 'server', true],
    ['response.failed, context_length_exceeded', { type: 'response.failed', response: { id: 'resp_t1', status: 'failed', error: { code: 'context_length_exceeded', message: 'Your input exceeds the context window of this model.' } } }, 'contextOverflow', false],
    ['response.failed, invalid_prompt', { type: 'response.failed', response: { id: 'resp_t1', status: 'failed', error: { code: 'invalid_prompt', message: 'Invalid prompt.' } } }, 'invalidRequest', false],
  ]
  for (const [label, event, kind, retryable] of cases) {
    it(`${label} → ${kind}${retryable ? '' : ', not retryable'}`, () => {
      const error = decodeError(sse([created(), messageAdded('msg_1'), textDelta('msg_1', 'Hal'), event]))
      expect(error.info).toMatchObject({ kind, retryable, provider: 'openai' })
      expect(error.info.code).toBeDefined()
    })
  }

  it('a mid-stream error ends the message with stopReason error, keeping the text so far', async () => {
    const wire = sse([created(), messageAdded('msg_1'), textDelta('msg_1', 'Half an ans'), { type: 'error', code: 'server_error', message: 'boom', param: null }])
    // Event by event, as the transport delivers them: the chunks before the error are returned, the error kept.
    const reader = new WireReader(new OpenAIResponsesDecoder())
    const chunks: ProviderChunk[] = []
    for (const part of wire.split(/(?<=\n\n)/)) chunks.push(...reader.push(part))
    const failure = reader.failure
    expect(failure).toBeInstanceOf(ProviderError)
    const events = await lastValueFrom(concat(from(chunks), throwError(() => failure)).pipe(accumulateMessage({ model: gpt5, now: () => 0 }), toArray()))
    const end = events.find((e) => e.type === 'messageEnd')!
    expect(end.message).toMatchObject({ stopReason: 'error', errorKind: 'server', content: [{ type: 'text', text: 'Half an ans' }] })
  })

  it('a malformed JSON event is a protocol error', () => {
    const wire = sse([created()]) + 'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"x"\n\n'
    expect(decodeError(wire).info).toMatchObject({ kind: 'protocol', retryable: false })
  })

  it('a stream without its terminal event is truncated: a network error, retryable', () => {
    const error = decodeError(sse([created(), messageAdded('msg_1'), textDelta('msg_1', 'Hel')]))
    expect(error.info).toMatchObject({ kind: 'network', retryable: true })
  })

  it('an empty body is truncated too', () => {
    expect(decodeError('').info.kind).toBe('network')
  })
})

describe('HTTP errors', () => {
  const body = (code: string | null, type: string, message: string): string => JSON.stringify({ error: { message, type, param: null, code } })
  const cases: [number, Record<string, string>, string, string, boolean, number | undefined][] = [
    [401, {}, body('invalid_api_key', 'invalid_request_error', 'Incorrect API key provided.'), 'auth', false, undefined],
    [429, {}, body('rate_limit_exceeded', 'requests', 'Rate limit reached for requests.'), 'rateLimit', true, undefined],
    [429, { 'retry-after': '3' }, body('rate_limit_exceeded', 'tokens', 'Rate limit reached for tokens.'), 'rateLimit', true, 3000],
    [429, { 'retry-after-ms': '450' }, body('rate_limit_exceeded', 'tokens', 'Rate limit reached for tokens.'), 'rateLimit', true, 450],
    [429, {}, body('insufficient_quota', 'insufficient_quota', 'You exceeded your current quota.'), 'rateLimit', false, undefined],
    [500, {}, body(null, 'server_error', 'The server had an error while processing your request.'), 'server', true, undefined],
    [503, {}, body(null, 'server_error', 'The engine is currently overloaded.'), 'overloaded', true, undefined],
    [400, {}, body('context_length_exceeded', 'invalid_request_error', 'Your input exceeds the context window of this model.'), 'contextOverflow', false, undefined],
    [404, {}, body('model_not_found', 'invalid_request_error', 'The model `gpt-9` does not exist.'), 'modelNotFound', false, undefined],
    [400, {}, body(null, 'invalid_request_error', "Unsupported parameter: 'temperature'."), 'invalidRequest', false, undefined],
  ]
  for (const [status, headers, text, kind, retryable, retryAfterMs] of cases) {
    it(`${status}${Object.keys(headers).map((h) => ` + ${h}`).join('')} ${JSON.parse(text).error.code ?? JSON.parse(text).error.type} → ${kind}`, () => {
      const error = openaiHttpError(status, new Headers(headers), text)
      expect(error.info).toMatchObject({ kind, retryable, status, provider: 'openai' })
      expect(error.info.retryAfterMs).toBe(retryAfterMs)
      expect(error.message).toContain(JSON.parse(text).error.message)
    })
  }

  it('a body that is not JSON still classifies by status', () => {
    expect(openaiHttpError(502, new Headers(), '<html>Bad gateway</html>').info).toMatchObject({ kind: 'server', retryable: true, message: expect.stringContaining('Bad gateway') })
  })
})

describe('request building', () => {
  const call = (id: string, name: string, args: Json) => ({ type: 'toolCall' as const, id, name, arguments: args })
  const result = (id: string, name: string, content: ToolResultMessage['content'], isError = false): ToolResultMessage => ({ role: 'toolResult', toolCallId: id, toolName: name, content, isError, timestamp: 0 })
  const own = (content: readonly AssistantContent[], more: Partial<AssistantMessage> = {}): AssistantMessage =>
    assistantMessage(content, { provider: 'openai', model: 'gpt-5', stopReason: 'toolUse', ...more })
  const input = (req: LlmRequest, settings: OpenAIResponsesSettings = {}): Json[] => openaiResponsesRequestBody(req, settings)['input'] as Json[]

  it('system prompt, streaming, store false, tools, max tokens, cache key, metadata', () => {
    const body = openaiResponsesRequestBody(request([userMessage('hi')], { options: { maxTokens: 500, sessionId: 'sess-1', metadata: { run: 'r1', n: 2 } } }))
    expect(body).toMatchObject({
      model: 'gpt-5',
      instructions: 'Be brief.',
      stream: true,
      store: false,
      max_output_tokens: 500,
      prompt_cache_key: 'sess-1',
      metadata: { run: 'r1', n: '2' },
      tools: [{ type: 'function', name: 'weather', description: 'Current weather of a city.', parameters: weatherSchema.parameters, strict: false }],
    })
    expect(body['input']).toEqual([{ role: 'user', content: [{ type: 'input_text', text: 'hi' }] }])
  })

  it('cache retention: long keeps the prompt cache for 24h; none sends no cache key', () => {
    const long = openaiResponsesRequestBody(request([userMessage('hi')], { options: { sessionId: 's', cacheRetention: 'long' } }))
    expect(long).toMatchObject({ prompt_cache_key: 's', prompt_cache_retention: '24h' })
    const none = openaiResponsesRequestBody(request([userMessage('hi')], { options: { sessionId: 's', cacheRetention: 'none' } }))
    expect(none['prompt_cache_key']).toBeUndefined()
  })

  it('the system prompt can be a developer item instead', () => {
    const body = openaiResponsesRequestBody(request([userMessage('hi')]), { systemPromptAs: 'developer' })
    expect(body['instructions']).toBeUndefined()
    expect((body['input'] as Json[])[0]).toEqual({ role: 'developer', content: 'Be brief.' })
  })

  it('images: base64 as a data URL, urls as they are', () => {
    const items = input(request([userMessage([text('What is this?'), imageBase64('iVBORw0KGgo=', 'image/png'), imageUrl('https://example.org/cat.jpg')])]))
    expect(items).toEqual([
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'What is this?' },
          { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' },
          { type: 'input_image', image_url: 'https://example.org/cat.jpg', detail: 'auto' },
        ],
      },
    ])
  })

  const levels: [ThinkingLevel, OpenAIResponsesSettings, Json | undefined][] = [
    ['off', {}, undefined],
    ['minimal', {}, { effort: 'minimal', summary: 'auto' }],
    ['low', {}, { effort: 'low', summary: 'auto' }],
    ['medium', { reasoningSummary: 'detailed' }, { effort: 'medium', summary: 'detailed' }],
    ['high', { reasoningSummary: null }, { effort: 'high' }],
    ['xhigh', {}, { effort: 'high', summary: 'auto' }],
    ['xhigh', { supportsXhigh: true }, { effort: 'xhigh', summary: 'auto' }],
    ['xhigh', { supportsXhigh: (id) => id === 'gpt-5' }, { effort: 'xhigh', summary: 'auto' }],
    ['off', { efforts: { off: 'none' } }, { effort: 'none' }],
  ]
  for (const [level, settings, reasoning] of levels) {
    it(`thinking ${level} ${JSON.stringify(settings, (_k, v: unknown) => (typeof v === 'function' ? 'fn' : v))} → reasoning ${JSON.stringify(reasoning)}`, () => {
      const body = openaiResponsesRequestBody(request([userMessage('hi')], { model: { ...gpt5, thinkingLevel: level } }), settings)
      expect(body['reasoning']).toEqual(reasoning)
    })
  }

  it('encrypted reasoning is requested when not stored; a stored response needs none', () => {
    expect(openaiResponsesRequestBody(request([userMessage('hi')]))['include']).toEqual(['reasoning.encrypted_content'])
    expect(openaiResponsesRequestBody(request([userMessage('hi')]), { store: true })).toMatchObject({ store: true })
    expect(openaiResponsesRequestBody(request([userMessage('hi')]), { store: true })['include']).toBeUndefined()
  })

  it('temperature only for non-reasoning models', () => {
    const options = { temperature: 0.3 }
    expect(openaiResponsesRequestBody(request([userMessage('hi')], { options }))['temperature']).toBeUndefined()
    expect(openaiResponsesRequestBody(request([userMessage('hi')], { options, model: { ...gpt5, thinkingLevel: 'off' } }))['temperature']).toBeUndefined()
    const gpt41 = modelSpec('openai', 'gpt-4.1')
    const body = openaiResponsesRequestBody(request([userMessage('hi')], { options, model: gpt41 }))
    expect(body['temperature']).toBe(0.3)
    expect(body['reasoning']).toBeUndefined()
    expect(body['include']).toBeUndefined()
    expect(openaiResponsesRequestBody(request([userMessage('hi')], { options, model: gpt41 }), { reasoningModel: true })['temperature']).toBeUndefined()
  })

  it("replays the model's own turn: reasoning from the signature, calls with item ids, outputs grouped, images after them", () => {
    const signature = JSON.stringify({ id: 'rs_1', encrypted_content: 'enc-1', summary: [{ type: 'summary_text', text: 'Plan.' }] })
    const messages: LlmMessage[] = [
      userMessage('Weather in Oslo and Lima?'),
      own([{ type: 'thinking', thinking: 'Plan.', signature }, call('call_a|fc_a', 'weather', { city: 'Oslo' }), call('call_b|fc_b', 'weather', { city: 'Lima' })]),
      result('call_a|fc_a', 'weather', [text('3°C')]),
      result('call_b|fc_b', 'weather', [text('24°C, map:'), imageBase64('AAAA', 'image/jpeg')]),
      own([{ type: 'text', text: 'Done.' }, { type: 'extension', typeName: MESSAGE_MARKER, data: { id: 'msg_1', phase: 'final_answer' } }], { stopReason: 'stop' }),
      userMessage('Thanks'),
    ]
    expect(input(request(messages))).toEqual([
      { role: 'user', content: [{ type: 'input_text', text: 'Weather in Oslo and Lima?' }] },
      { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Plan.' }], encrypted_content: 'enc-1' },
      { type: 'function_call', call_id: 'call_a', name: 'weather', arguments: '{"city":"Oslo"}', id: 'fc_a' },
      { type: 'function_call', call_id: 'call_b', name: 'weather', arguments: '{"city":"Lima"}', id: 'fc_b' },
      { type: 'function_call_output', call_id: 'call_a', output: '3°C' },
      { type: 'function_call_output', call_id: 'call_b', output: '24°C, map:' },
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'Image returned by the tool call call_b (weather):' },
          { type: 'input_image', image_url: 'data:image/jpeg;base64,AAAA', detail: 'auto' },
        ],
      },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Done.', annotations: [] }], status: 'completed', id: 'msg_1', phase: 'final_answer' },
      { role: 'user', content: [{ type: 'input_text', text: 'Thanks' }] },
    ])
  })

  it('a dated snapshot counts as the same model', () => {
    const signature = JSON.stringify({ id: 'rs_1', encrypted_content: 'enc-1', summary: [] })
    const items = input(request([userMessage('q'), own([{ type: 'thinking', thinking: '', signature }, { type: 'text', text: 'a' }], { model: 'gpt-5-2025-08-07', stopReason: 'stop' }), userMessage('q2')]))
    expect(items[1]).toMatchObject({ type: 'reasoning', id: 'rs_1' })
  })

  it('reasoning without encrypted content is not replayed when nothing is stored; alone it is never replayed', () => {
    const bare = JSON.stringify({ id: 'rs_1', summary: [] })
    const m = own([{ type: 'thinking', thinking: 'x', signature: bare }, { type: 'text', text: 'a' }], { stopReason: 'stop' })
    expect(input(request([userMessage('q'), m, userMessage('q2')])).map((i) => i['type'] ?? i['role'])).toEqual(['user', 'message', 'user'])
    expect(input(request([userMessage('q'), m, userMessage('q2')]), { store: true })[1]).toEqual({ type: 'reasoning', id: 'rs_1', summary: [] })
    const alone = own([{ type: 'thinking', thinking: 'x', signature: JSON.stringify({ id: 'rs_2', encrypted_content: 'e', summary: [] }) }], { stopReason: 'length' })
    expect(input(request([userMessage('q'), alone, userMessage('q2')])).map((i) => i['role'])).toEqual(['user', 'user'])
  })

  it("switching from another provider: its thinking becomes text, ids are normalized, item ids dropped, an unanswered call is settled", () => {
    const longId = `toolu_${'x'.repeat(70)}.weird:id`
    const claude = assistantMessage(
      [
        { type: 'thinking', thinking: 'Let me think.', signature: 'anthropic-sig' },
        { type: 'thinking', thinking: '', signature: 'opaque', redacted: true },
        { type: 'text', text: 'Checking.' },
        call(longId, 'weather', { city: 'Oslo' }),
        call('toolu_2', 'weather', { city: 'Lima' }),
      ],
      { provider: 'anthropic', model: 'claude-sonnet-4-5', stopReason: 'toolUse' },
    )
    const items = input(request([userMessage('q'), claude, result(longId, 'weather', [text('3°C')]), userMessage('and?')]))
    const normalized = normalizeOpenAIToolCallId(longId)
    expect(normalized).toMatch(/^[a-zA-Z0-9_-]{1,64}$/)
    expect(items).toEqual([
      { role: 'user', content: [{ type: 'input_text', text: 'q' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Let me think.', annotations: [] }], status: 'completed' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.', annotations: [] }], status: 'completed' },
      { type: 'function_call', call_id: normalized, name: 'weather', arguments: '{"city":"Oslo"}' },
      { type: 'function_call', call_id: 'toolu_2', name: 'weather', arguments: '{"city":"Lima"}' },
      { type: 'function_call_output', call_id: normalized, output: '3°C' },
      { type: 'function_call_output', call_id: 'toolu_2', output: expect.stringContaining('not executed') },
      { role: 'user', content: [{ type: 'input_text', text: 'and?' }] },
    ])
  })

  it("another OpenAI model's calls lose their item ids and reasoning; its message ids are not sent", () => {
    const other = own([{ type: 'thinking', thinking: 'Plan.', signature: JSON.stringify({ id: 'rs_9', encrypted_content: 'e', summary: [] }) }, call('call_9|fc_9', 'weather', { city: 'Oslo' })], { model: 'gpt-5-mini' })
    const items = input(request([userMessage('q'), other, result('call_9|fc_9', 'weather', [text('3°C')])]))
    expect(items.slice(1)).toEqual([
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Plan.', annotations: [] }], status: 'completed' },
      { type: 'function_call', call_id: 'call_9', name: 'weather', arguments: '{"city":"Oslo"}' },
      { type: 'function_call_output', call_id: 'call_9', output: '3°C' },
    ])
  })

  it('failed turns are dropped with their results', () => {
    const failed = own([call('call_x|fc_x', 'weather', { city: 'Oslo' })], { stopReason: 'error', errorMessage: 'boom' })
    const items = input(request([userMessage('q'), failed, result('call_x|fc_x', 'weather', [text('3°C')]), userMessage('again')]))
    expect(items.map((i) => i['role'])).toEqual(['user', 'user'])
  })

  it('custom tools: defined as custom, replayed as custom calls and outputs', () => {
    const settings: OpenAIResponsesSettings = { customTools: { write_sql: { format: { type: 'grammar', syntax: 'regex', definition: 'SELECT .+' } } } }
    const sqlTool = { name: 'write_sql', description: 'Writes SQL.', parameters: { type: 'object', properties: { input: { type: 'string' } } } }
    const req = request([userMessage('q'), own([call('call_s|ctc_1', 'write_sql', { input: 'SELECT 1' })]), result('call_s|ctc_1', 'write_sql', [text('1 row')])], { tools: [weatherSchema, sqlTool] })
    const body = openaiResponsesRequestBody(req, settings)
    expect(body['tools']).toEqual([
      expect.objectContaining({ type: 'function', name: 'weather' }),
      { type: 'custom', name: 'write_sql', description: 'Writes SQL.', format: { type: 'grammar', syntax: 'regex', definition: 'SELECT .+' } },
    ])
    expect((body['input'] as Json[]).slice(1)).toEqual([
      { type: 'custom_tool_call', call_id: 'call_s', name: 'write_sql', input: 'SELECT 1' },
      { type: 'custom_tool_call_output', call_id: 'call_s', output: '1 row' },
    ])
  })

  it('normalizes ids: valid ones unchanged, call ids sanitized to 64 characters, non-fc item ids dropped', () => {
    expect(normalizeOpenAIToolCallId('call_abc|fc_123')).toBe('call_abc|fc_123')
    expect(normalizeOpenAIToolCallId('call_abc|rs_123')).toBe('call_abc')
    expect(normalizeOpenAIToolCallId('a.b:c')).toBe('a_b_c')
    expect(normalizeOpenAIToolCallId('x'.repeat(100))).toHaveLength(64)
    expect(normalizeOpenAIToolCallId('x'.repeat(100))).not.toBe(normalizeOpenAIToolCallId(`${'x'.repeat(99)}y`))
  })

  it('buildRequest: URL, bearer header, organization and project; the key nowhere else', () => {
    const http = openaiResponsesProtocol.buildRequest(request([userMessage('hi')], { options: { headers: { 'x-trace': 't1' } } }), { organization: 'org-1', project: 'proj-1' }, KEY)
    expect(http.url).toBe(`${OPENAI_BASE_URL}/responses`)
    expect(http.url).toBe('https://api.openai.com/v1/responses')
    expect(http.headers).toEqual({ 'x-trace': 't1', 'OpenAI-Organization': 'org-1', 'OpenAI-Project': 'proj-1', Authorization: `Bearer ${KEY}` })
    expect(JSON.stringify(http.body)).not.toContain(KEY)
    expect(openaiResponsesProtocol.buildRequest(request([]), { baseUrl: 'http://localhost:8080/v1/' }, KEY).url).toBe('http://localhost:8080/v1/responses')
  })
})

describe('split invariance', () => {
  it('any split of a recorded stream into network chunks decodes like the whole', () => {
    const recordings = [fixture('text.sse'), fixture('reasoning-tools.sse')].map((s) => new TextEncoder().encode(s))
    fc.assert(
      fc.property(fc.integer({ min: 0, max: recordings.length - 1 }), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 40 }), (which, cuts) => {
        const bytes = recordings[which]!
        const points = [...new Set(cuts.map((c) => Math.floor(c * bytes.length)))].sort((a, b) => a - b)
        const parts: Uint8Array[] = []
        let from = 0
        for (const p of [...points, bytes.length]) {
          parts.push(bytes.subarray(from, p))
          from = p
        }
        const whole = decodeWire(new OpenAIResponsesDecoder(), [bytes])
        expect(decodeWire(new OpenAIResponsesDecoder(), parts)).toEqual(whole)
      }),
      { numRuns: 200 },
    )
  })

  it('splits inside every multi-byte character are covered', () => {
    const wire = fixture('text.sse')
    const whole = decode(wire)
    for (const size of [1, 2, 3, 5]) expect(decode(wire, size)).toEqual(whole)
  })
})

describe('end to end', () => {
  const replay = replayServerPerTest()
  const serve = replay.serve

  const weather = defineTool({
    name: 'weather',
    description: 'Current weather of a city.',
    parameters: t.type({ city: t.string }),
    execute: ({ city }) => (city === 'Oslo' ? '3°C' : '24°C'),
  })

  async function run(settings: OpenAIResponsesSettings, retry: false | undefined = false): Promise<{ events: AgentEvent[]; message: AssistantMessage }> {
    const streamFn = openaiResponses({ baseUrl: replay.current!.url, apiKey: KEY, ...settings })
    const context = { systemPrompt: 'Be brief.', messages: [], tools: [weather] }
    const events = await lastValueFrom(agentLoop(userMessage('Weather in Oslo and Lima?'), context, { model: gpt5, streamFn, retry }).pipe(toArray()))
    const ends = events.filter((e): e is Extract<AgentEvent, { type: 'messageEnd' }> => e.type === 'messageEnd' && e.message.role === 'assistant')
    return { events, message: ends.at(-1)!.message as AssistantMessage }
  }

  it('a tool round trip: the second request replays reasoning, both calls and both outputs', async () => {
    const s = await serve([{ chunks: splitBytes(fixture('reasoning-tools.sse'), 64) }, { chunks: splitBytes(fixture('final-answer.sse'), 50) }])
    const { message, events } = await run({})
    expect(message).toMatchObject({ stopReason: 'stop', content: [{ type: 'text', text: 'Oslo 3°C, Lima 24°C.' }, { type: 'extension', typeName: MESSAGE_MARKER }] })
    expect(message.usage).toMatchObject({ input: 304, cacheRead: 256, output: 14, total: 574 })
    expect(s.requests).toHaveLength(2)
    const [first, second] = s.requests
    expect(first).toMatchObject({ method: 'POST', url: '/responses' })
    expect(first!.headers.authorization).toBe(`Bearer ${KEY}`)
    expect(first!.body).toMatchObject({ model: 'gpt-5', stream: true, store: false, instructions: 'Be brief.', reasoning: { effort: 'medium', summary: 'auto' }, include: ['reasoning.encrypted_content'] })
    expect((second!.body as Json)['input']).toEqual([
      { role: 'user', content: [{ type: 'input_text', text: 'Weather in Oslo and Lima?' }] },
      {
        type: 'reasoning',
        id: 'rs_rx_tools_01',
        summary: [
          { type: 'summary_text', text: '**Checking both cities**' },
          { type: 'summary_text', text: "I'll look up Oslo and Lima at once." },
        ],
        encrypted_content: 'enc-final-BBBB',
      },
      { type: 'function_call', call_id: 'call_rxOslo01', name: 'weather', arguments: '{"city":"Oslo"}', id: 'fc_rx_tools_01' },
      { type: 'function_call', call_id: 'call_rxLima02', name: 'weather', arguments: '{"city":"Lima"}', id: 'fc_rx_tools_02' },
      { type: 'function_call_output', call_id: 'call_rxOslo01', output: '3°C' },
      { type: 'function_call_output', call_id: 'call_rxLima02', output: '24°C' },
    ])
    expect(transcriptFromEvents(events).map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'toolResult', 'assistant'])
  })

  it('an HTTP error ends the run with a classified error message, a valid transcript, and no key in it', async () => {
    await serve([{ status: 429, headers: { 'content-type': 'application/json' }, chunks: [JSON.stringify({ error: { message: 'You exceeded your current quota.', type: 'insufficient_quota', param: null, code: 'insufficient_quota' } })] }])
    const { message, events } = await run({})
    expect(message).toMatchObject({ stopReason: 'error', errorKind: 'rateLimit' })
    expect(message.errorMessage).toContain('exceeded your current quota')
    expect(message.errorMessage).not.toContain(KEY)
    expect(JSON.stringify(events)).not.toContain(KEY)
    const transcript = transcriptFromEvents(events)
    expect(transcript.map((m) => m.role)).toEqual(['user', 'assistant'])
    expect(t.readonlyArray(AgentMessage).is(transcript)).toBe(true)
    expect(events.at(-1)).toMatchObject({ type: 'agentEnd', result: { stopReason: 'error' } })
  })

  it('the raw stream errors with the classified error (no key in its message)', async () => {
    const s = await serve([{ status: 401, headers: { 'content-type': 'application/json' }, chunks: [JSON.stringify({ error: { message: 'Incorrect API key provided: sk-test-***6789.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } })] }])
    const error = await firstValueFrom(openaiResponses({ baseUrl: s.url, apiKey: KEY })(request([userMessage('hi')]))).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ProviderError)
    expect((error as ProviderError).info).toMatchObject({ kind: 'auth', retryable: false, status: 401, code: 'invalid_api_key' })
    expect((error as ProviderError).message).not.toContain(KEY)
  })

  it('reads the key from OPENAI_API_KEY', async () => {
    const s = await serve([{ chunks: [fixture('final-answer.sse')] }])
    await lastValueFrom(openaiResponses({ baseUrl: s.url, env: { OPENAI_API_KEY: 'from-env' } })(request([userMessage('hi')])).pipe(toArray()))
    expect(s.requests[0]!.headers.authorization).toBe('Bearer from-env')
  })
})

describe('openai responses: structured output', () => {
  it('a responseFormat becomes text.format json_schema', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }
    const body = openaiResponsesRequestBody(request([userMessage('hi')], { options: { responseFormat: { name: 'respond', schema } } }))
    expect(body['text']).toEqual({ format: { type: 'json_schema', name: 'respond', schema, strict: false } })
  })
})
