/**
 * The Anthropic adapter, offline: hand-written SSE recordings decoded into
 * chunks and folded into messages, request bodies built from transcripts
 * (including other providers' ones), HTTP and stream errors classified, and
 * whole agent runs against the local replay server.
 */
import { readFileSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { firstValueFrom, from, lastValueFrom, toArray } from 'rxjs'
import { accumulateMessage } from '../../operators/accumulate-message.js'
import { agentLoop } from '../../src/loop/agent-loop.js'
import { transcriptFromEvents } from '../../src/loop/transcript.js'
import { anthropic, anthropicProtocol, type AnthropicSettings } from '../../src/providers/anthropic.js'
import { adaptiveEffort, anthropicRequestBody, normalizeAnthropicToolCallId, supportsAdaptiveThinking } from '../../src/providers/anthropic-request.js'
import { AnthropicDecoder } from '../../src/providers/anthropic-decoder.js'
import { anthropicMessageFromJson } from '../../src/providers/anthropic-from-json.js'
import { decodeWire } from '../../src/providers/protocol.js'
import type { ProviderChunk } from '../../src/types/chunk.js'
import { imageBase64, imageUrl, text, type AssistantContent } from '../../src/types/content.js'
import type { AgentEvent } from '../../src/types/event.js'
import { assistantMessage, userMessage, type AssistantMessage, type LlmMessage, type ToolResultMessage } from '../../src/types/message.js'
import { modelSpec, type ModelSpec } from '../../src/types/model.js'
import { ProviderError } from '../../src/types/provider-error.js'
import type { LlmRequest } from '../../src/types/request.js'
import { addTool } from '../helpers.js'
import { sseBody, splitBytes, startReplayServer, type ReplayServer, type ScriptedHttpResponse } from './replay-server.js'

const KEY = 'sk-ant-test-secret-0123456789'
type Json = Record<string, unknown>

const fixture = (name: string): string => readFileSync(new URL(`../fixtures/anthropic/${name}`, import.meta.url), 'utf8')
const fixtures = ['text.sse', 'thinking-tool.sse', 'parallel-tools.sse', 'server-tools.sse', 'add-tool.sse', 'final-answer.sse'] as const

const rates = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }
const sonnet = modelSpec('anthropic', 'claude-sonnet-4-5', { cost: rates, maxOutputTokens: 64_000 })

const decode = (wire: string, size = 5): ProviderChunk[] => decodeWire(new AnthropicDecoder(), splitBytes(wire, size))

/** The runtime's final message for `chunks` (the fold is synchronous over an array). */
function fold(chunks: readonly ProviderChunk[], model: ModelSpec = sonnet): { message: AssistantMessage; events: string[] } {
  let message: AssistantMessage | undefined
  const events: string[] = []
  from(chunks)
    .pipe(accumulateMessage({ model, now: () => 0 }))
    .subscribe((e) => {
      events.push(e.type)
      if (e.type === 'messageEnd') message = e.message
    })
  return { message: message!, events }
}

const decodeError = (wire: string): ProviderError => {
  try {
    decode(wire)
  } catch (error) {
    if (error instanceof ProviderError) return error
    throw error
  }
  throw new Error('decoding did not fail')
}

// Small wire builders for edge cases the fixtures do not cover.
const wireOf = (events: readonly Json[]): string => sseBody(events.map((data) => ({ event: String(data['type']), data })))
const start = (usage: Json = { input_tokens: 10, output_tokens: 1 }, id = 'msg_1', more: Json = {}): Json => ({
  type: 'message_start',
  message: { id, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5-20250929', content: [], stop_reason: null, stop_sequence: null, usage, ...more },
})
const textBlock = (index: number, value: string): Json[] => [
  { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index, delta: { type: 'text_delta', text: value } },
  { type: 'content_block_stop', index },
]
const finish = (stopReason: string | null, usage: Json = { output_tokens: 5 }, delta: Json = {}): Json[] => [
  { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null, ...delta }, usage },
  { type: 'message_stop' },
]

describe('anthropic: decoding streams', () => {
  it('text: deltas, multi-byte characters, usage excluding cache tokens, cost', () => {
    const chunks = decode(fixture('text.sse'), 3)
    expect(chunks[0]).toEqual({ type: 'messageStart', id: 'msg_rx_text_01', model: 'claude-sonnet-4-5-20250929' })
    // Usage once early (prompt known), once at the end with the difference.
    expect(chunks.filter((c) => c.type === 'usage')).toEqual([
      { type: 'usage', input: 21, output: 1, cacheRead: 3000, cacheWrite: 1200 },
      { type: 'usage', output: 17 },
    ])
    expect(chunks.findIndex((c) => c.type === 'stop')).toBe(chunks.length - 2)
    const { message } = fold(chunks)
    expect(message).toMatchObject({
      role: 'assistant',
      provider: 'anthropic',
      model: 'claude-sonnet-4-5-20250929',
      responseId: 'msg_rx_text_01',
      stopReason: 'stop',
      content: [{ type: 'text', text: 'Grüße 👋 — naïve café, 日本語 works.' }],
    })
    // Anthropic's input_tokens already excludes cache reads and writes; reasoning is not reported apart.
    expect(message.usage).toEqual({ input: 21, output: 18, reasoning: 0, cacheRead: 3000, cacheWrite: 1200, total: 21 + 18 + 3000 + 1200, extra: {} })
    const cost = (21 * 3 + 18 * 15 + 3000 * 0.3 + 1200 * 3.75) / 1e6
    expect(message.cost.total).toBeCloseTo(cost, 12)
    expect(message.cost).toMatchObject({ input: (21 * 3) / 1e6, output: (18 * 15) / 1e6, cacheRead: (3000 * 0.3) / 1e6, cacheWrite: (1200 * 3.75) / 1e6 })
  })

  it('thinking with its signature, then text, then one tool call with streamed argument fragments', () => {
    const chunks = decode(fixture('thinking-tool.sse'))
    expect(chunks.filter((c) => c.type === 'toolUseArgsDelta').map((c) => (c as { fragment: string }).fragment)).toEqual(['{"city": "Par', 'is", "unit"', ': "celsius"}'])
    // One signature chunk closes the block; empty deltas are not sent.
    expect(chunks.filter((c) => c.type === 'thinkingSignature')).toEqual([{ type: 'thinkingSignature', signature: 'RXNpZ25hdHVyZS1vbmU=' }])
    expect(chunks.some((c) => (c.type === 'thinkingDelta' || c.type === 'textDelta') && c.text === '')).toBe(false)
    const { message } = fold(chunks)
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'The user wants the weather in Paris; I should call the tool.', signature: 'RXNpZ25hdHVyZS1vbmU=' },
      { type: 'text', text: 'Let me check the weather.' },
      { type: 'toolCall', id: 'toolu_01WeatherParis', name: 'get_weather', arguments: { city: 'Paris', unit: 'celsius' } },
    ])
    expect(message.stopReason).toBe('toolUse')
    expect(message.usage).toMatchObject({ input: 410, output: 96, total: 506 })
  })

  it('several tool calls in one turn, one with empty input ("" → {})', () => {
    const { message } = fold(decode(fixture('parallel-tools.sse'), 2))
    expect(message.content).toEqual([
      { type: 'text', text: "I'll read the file and list the folder." },
      { type: 'toolCall', id: 'toolu_01ReadFileA', name: 'read_file', arguments: { path: 'src/ä.ts' } },
      { type: 'toolCall', id: 'toolu_01ListDirB', name: 'list_dir', arguments: {} },
    ])
    expect(message.stopReason).toBe('toolUse')
  })

  it('redacted thinking, server tool blocks (input merged from deltas) and citations are kept', () => {
    const { message } = fold(decode(fixture('server-tools.sse')))
    expect(message.content).toEqual([
      { type: 'thinking', thinking: '', signature: 'RW5jcnlwdGVkVGhpbmtpbmc=', redacted: true },
      { type: 'extension', typeName: 'server_tool_use', data: { type: 'server_tool_use', id: 'srvtoolu_01Search', name: 'web_search', input: { query: 'rxjs 7 release' } } },
      {
        type: 'extension',
        typeName: 'web_search_tool_result',
        data: expect.objectContaining({ type: 'web_search_tool_result', tool_use_id: 'srvtoolu_01Search' }) as unknown,
      },
      { type: 'text', text: 'RxJS 7 is the current major version.' },
      {
        type: 'extension',
        typeName: 'anthropic.citations',
        data: { type: 'citations', citations: [expect.objectContaining({ type: 'web_search_result_location', cited_text: 'RxJS 7 was released' })] },
      },
    ])
    expect(message.usage.extra).toEqual({ web_search_requests: 1 })
    expect(message.stopReason).toBe('stop')
  })

  it('final usage follows message_delta, which may revise input tokens', () => {
    const chunks = decode(wireOf([start({ input_tokens: 43, output_tokens: 1 }), ...textBlock(0, 'pong'), ...finish('end_turn', { input_tokens: 61, output_tokens: 2 })]))
    expect(chunks.filter((c) => c.type === 'usage')).toEqual([
      { type: 'usage', input: 43, output: 1 },
      { type: 'usage', input: 18, output: 1 },
    ])
    expect(fold(chunks).message.usage).toMatchObject({ input: 61, output: 2, total: 63 })
  })

  it('usage invariants: input excludes cache, reasoning within output, total is the sum', () => {
    for (const name of fixtures) {
      const { usage } = fold(decode(fixture(name))).message
      expect(usage.reasoning).toBeLessThanOrEqual(usage.output)
      expect(usage.total).toBe(usage.input + usage.output + usage.cacheRead + usage.cacheWrite)
    }
    const { usage } = fold(decode(fixture('final-answer.sse'))).message
    expect(usage).toMatchObject({ input: 820, cacheRead: 700, output: 9, total: 1529 })
  })

  const stops: [string, ProviderChunk & { type: 'stop' }, AssistantMessage['stopReason']][] = [
    ['end_turn', { type: 'stop', reason: 'endTurn' }, 'stop'],
    ['max_tokens', { type: 'stop', reason: 'maxTokens' }, 'length'],
    ['stop_sequence', { type: 'stop', reason: 'stopSequence' }, 'stop'],
    ['refusal', { type: 'stop', reason: 'refusal' }, 'refusal'],
    // pause_turn: a server tool paused a long turn; it ends the turn (send the message back to continue).
    ['pause_turn', { type: 'stop', reason: 'endTurn' }, 'stop'],
    ['model_context_window_exceeded', { type: 'stop', reason: 'maxTokens' }, 'length'],
    ['a_future_reason', { type: 'stop', reason: 'endTurn' }, 'stop'],
  ]
  for (const [wire, chunk, reason] of stops) {
    it(`stop_reason ${wire} → ${chunk.reason} → ${reason}`, () => {
      const chunks = decode(wireOf([start(), ...textBlock(0, 'x'), ...finish(wire)]))
      expect(chunks.find((c) => c.type === 'stop')).toEqual(chunk)
      expect(fold(chunks).message.stopReason).toBe(reason)
    })
  }

  it('stop_reason tool_use → toolUse; refusal details kept as an extension before stop', () => {
    const tool = decode(fixture('add-tool.sse'))
    expect(fold(tool).message.stopReason).toBe('toolUse')
    const details = { type: 'refusal', category: 'cyber', explanation: 'blocked' }
    const { message } = fold(decode(wireOf([start(), ...finish('refusal', { output_tokens: 3 }, { stop_details: details })])))
    expect(message).toMatchObject({ stopReason: 'refusal', content: [{ type: 'extension', typeName: 'anthropic.stop_details', data: details }] })
  })

  it('a duplicated message_start is ignored', () => {
    const s = start({ input_tokens: 17, output_tokens: 1 }, 'msg_dup')
    const chunks = decode(wireOf([s, s, ...textBlock(0, 'Hello'), ...finish('end_turn', { output_tokens: 9 })]))
    expect(chunks.filter((c) => c.type === 'messageStart')).toHaveLength(1)
    expect(chunks.some((c) => c.type === 'retry')).toBe(false)
    expect(fold(chunks).message).toMatchObject({ content: [{ type: 'text', text: 'Hello' }], usage: { input: 17, output: 9 } })
  })

  it('a message_start after content restarts the response: retry chunk, then only the new attempt', () => {
    const chunks = decode(
      wireOf([
        start({ input_tokens: 17, output_tokens: 1 }, 'msg_first'),
        { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_first', name: 'test', input: {} } },
        { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"value":"Spa' } },
        start({ input_tokens: 17, output_tokens: 1 }, 'msg_second'),
        { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_second', name: 'test', input: {} } },
        { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"value":"Sparkle"}' } },
        { type: 'content_block_stop', index: 0 },
        ...finish('tool_use', { output_tokens: 20 }),
      ]),
    )
    const retry = chunks.findIndex((c) => c.type === 'retry')
    expect(chunks[retry]).toMatchObject({ type: 'retry', attempt: 1, delayMs: 0, error: { kind: 'protocol', retryable: true, provider: 'anthropic' } })
    expect(chunks[retry + 1]).toEqual({ type: 'messageStart', id: 'msg_second', model: 'claude-sonnet-4-5-20250929' })
    const { message, events } = fold(chunks)
    expect(events).toContain('streamRetry')
    expect(message).toMatchObject({ responseId: 'msg_second', stopReason: 'toolUse', content: [{ type: 'toolCall', id: 'toolu_second', arguments: { value: 'Sparkle' } }] })
    // The discarded attempt's usage stays counted (it was billed).
    expect(message.usage).toMatchObject({ input: 34, output: 21 })
  })

  it('a message announced finished in message_start (programmatic tool calling), and a tool_use with its whole input', () => {
    const done = start({ input_tokens: 0, output_tokens: 0 }, 'msg_done', {
      content: [{ type: 'tool_use', id: 'toolu_a', name: 'rollDie', input: { player: 'p1' }, caller: { type: 'code_execution_20250825' } }],
      stop_reason: 'tool_use',
    })
    const a = fold(decode(wireOf([done, { type: 'message_stop' }]))).message
    expect(a).toMatchObject({ stopReason: 'toolUse', content: [{ type: 'toolCall', id: 'toolu_a', name: 'rollDie', arguments: { player: 'p1' } }] })
    const b = fold(
      decode(
        wireOf([
          start(),
          { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_b', name: 'rollDie', input: { player: 'p2' } } },
          { type: 'content_block_stop', index: 0 },
          ...finish('tool_use'),
        ]),
      ),
    ).message
    expect(b.content).toEqual([{ type: 'toolCall', id: 'toolu_b', name: 'rollDie', arguments: { player: 'p2' } }])
  })

  it('decodes a non-streamed response body', () => {
    const body = {
      id: 'msg_json',
      type: 'message',
      role: 'assistant',
      model: 'claude-opus-4-5-20251101',
      content: [
        { type: 'thinking', thinking: 'Adding.', signature: 'c2ln' },
        { type: 'text', text: 'Calling add.' },
        { type: 'tool_use', id: 'toolu_x', name: 'add', input: { a: 1, b: 2 } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 100, cache_read_input_tokens: 50, cache_creation_input_tokens: 0, output_tokens: 30 },
    }
    const message = anthropicMessageFromJson(body, sonnet, 7)
    expect(message).toMatchObject({
      timestamp: 7,
      model: 'claude-opus-4-5-20251101',
      responseId: 'msg_json',
      stopReason: 'toolUse',
      content: [
        { type: 'thinking', thinking: 'Adding.', signature: 'c2ln' },
        { type: 'text', text: 'Calling add.' },
        { type: 'toolCall', id: 'toolu_x', name: 'add', arguments: { a: 1, b: 2 } },
      ],
      usage: { input: 100, cacheRead: 50, output: 30, total: 180 },
    })
    expect(() => anthropicMessageFromJson({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, sonnet)).toThrow(ProviderError)
  })
})

describe('anthropic: stream errors', () => {
  it('an error event mid-stream fails with its classified error', () => {
    const error = decodeError(fixture('overloaded-midstream.sse'))
    expect(error.info).toMatchObject({ kind: 'overloaded', retryable: true, code: 'overloaded_error', provider: 'anthropic' })
    expect(error.message).toContain('Overloaded')
  })

  const kinds: [string, string, string, boolean][] = [
    ['overloaded_error', 'Overloaded', 'overloaded', true],
    ['rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit', 'rateLimit', true],
    ['api_error', 'Internal server error', 'server', true],
    ['authentication_error', 'invalid x-api-key', 'auth', false],
    ['permission_error', 'Your API key does not have permission', 'auth', false],
    ['not_found_error', 'model: claude-nope', 'modelNotFound', false],
    ['invalid_request_error', 'messages: text content blocks must be non-empty', 'invalidRequest', false],
    ['invalid_request_error', 'prompt is too long: 210000 tokens > 200000 maximum', 'contextOverflow', false],
    ['request_too_large', 'Request exceeds the maximum allowed number of bytes', 'contextOverflow', false],
    ['something_new_error', 'who knows', 'server', true],
  ]
  for (const [type, message, kind, retryable] of kinds) {
    it(`error event ${type} (${message.slice(0, 24)}…) → ${kind}`, () => {
      const error = decodeError(wireOf([start(), { type: 'error', error: { type, message } }]))
      expect(error.info).toMatchObject({ kind, retryable, code: type })
    })
  }

  it('malformed JSON is a protocol error that is not retried', () => {
    const wire = `${wireOf([start()])}event: content_block_start\ndata: {"type":"content_block_start","index":0,\n\n`
    expect(decodeError(wire).info).toMatchObject({ kind: 'protocol', retryable: false })
  })

  it('impossible events are protocol errors', () => {
    expect(decodeError(wireOf([...textBlock(0, 'x')])).info.kind).toBe('protocol')
    expect(decodeError(wireOf([start(), { type: 'content_block_delta', index: 3, delta: { type: 'text_delta', text: 'x' } }])).info.kind).toBe('protocol')
    expect(decodeError(wireOf([start(), ...finish('end_turn'), ...textBlock(0, 'late')])).info.kind).toBe('protocol')
  })

  it('a stream cut before message_stop is a retryable network error', () => {
    const whole = fixture('text.sse')
    const cut = whole.slice(0, whole.indexOf('event: message_delta'))
    expect(decodeError(cut).info).toMatchObject({ kind: 'network', retryable: true })
    expect(decodeError('').info).toMatchObject({ kind: 'network', retryable: true })
    // Cut inside the last event: the partial line is dropped, the response is still incomplete.
    expect(decodeError(whole.slice(0, whole.length - 10)).info.kind).toBe('network')
  })
})

describe('anthropic: split invariance', () => {
  const recordings = [...fixtures, 'overloaded-midstream.sse'].map((name) => ({ name, bytes: new TextEncoder().encode(fixture(name)) }))
  const wholeOf = (bytes: Uint8Array): unknown => {
    try {
      return decodeWire(new AnthropicDecoder(), [bytes])
    } catch (error) {
      return error instanceof ProviderError ? error.info : error
    }
  }
  const splitAt = (bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] => {
    const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)
    const parts: Uint8Array[] = []
    let last = 0
    for (const p of [...points, bytes.length]) {
      parts.push(bytes.subarray(last, p))
      last = p
    }
    return parts
  }

  it('any split of a recorded byte stream, even inside multi-byte characters, decodes to the same chunks', () => {
    fc.assert(
      fc.property(fc.constantFrom(...recordings), fc.array(fc.nat(), { maxLength: 60 }), ({ bytes }, cuts) => {
        const parts = splitAt(bytes, cuts)
        let split: unknown
        try {
          split = decodeWire(new AnthropicDecoder(), parts)
        } catch (error) {
          split = error instanceof ProviderError ? error.info : error
        }
        expect(split).toEqual(wholeOf(bytes))
      }),
      { numRuns: 300 },
    )
  })

  it('byte-by-byte reads (every multi-byte character split) decode the same', () => {
    for (const { bytes } of recordings.slice(0, 4)) {
      const parts = Array.from({ length: bytes.length }, (_, i) => bytes.subarray(i, i + 1))
      expect(wholeOf(bytes)).toEqual((() => {
        try {
          return decodeWire(new AnthropicDecoder(), parts)
        } catch (error) {
          return error instanceof ProviderError ? error.info : error
        }
      })())
    }
  })
})

// ---------------------------------------------------------------------------

const weatherTool = { name: 'get_weather', description: 'Weather for a city.', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }
const searchTool = { name: 'search', description: 'Searches.', parameters: { type: 'object', properties: { q: { type: 'string' } } } }

const request = (messages: readonly LlmMessage[], more: Partial<LlmRequest> = {}): LlmRequest => ({
  model: sonnet,
  systemPrompt: 'You are terse.',
  messages,
  tools: [],
  ...more,
})
const body = (r: LlmRequest, settings: AnthropicSettings = {}): Json => anthropicRequestBody(r, settings)
const messagesOf = (b: Json): { role: string; content: Json[] }[] => b['messages'] as { role: string; content: Json[] }[]

const fromSonnet = (content: readonly AssistantContent[], more: Partial<AssistantMessage> = {}): AssistantMessage =>
  assistantMessage(content, { provider: 'anthropic', model: 'claude-sonnet-4-5', stopReason: 'toolUse', ...more })
const result = (toolCallId: string, value: string, isError = false, more: Partial<ToolResultMessage> = {}): ToolResultMessage => ({
  role: 'toolResult',
  toolCallId,
  toolName: 'get_weather',
  content: [text(value)],
  isError,
  timestamp: 0,
  ...more,
})

describe('anthropic: request body', () => {
  it('model, max_tokens, stream, system prompt, tools and prompt caching (default short)', () => {
    const b = body(request([userMessage('hi')], { tools: [weatherTool, searchTool] }))
    expect(b).toMatchObject({ model: 'claude-sonnet-4-5', max_tokens: 64_000, stream: true })
    expect(b['system']).toEqual([{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }])
    expect(b['tools']).toEqual([
      { name: 'get_weather', description: 'Weather for a city.', input_schema: weatherTool.parameters },
      { name: 'search', description: 'Searches.', input_schema: searchTool.parameters, cache_control: { type: 'ephemeral' } },
    ])
    expect(b['messages']).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] }])
    expect(b).not.toHaveProperty('temperature')
    expect(b).not.toHaveProperty('thinking')
    expect(body(request([userMessage('hi')], { model: modelSpec('anthropic', 'claude-x') }))['max_tokens']).toBe(8192)
    expect(body(request([userMessage('hi')], { model: modelSpec('anthropic', 'claude-x') }), { defaultMaxTokens: 1000 })['max_tokens']).toBe(1000)
  })

  it('cacheRetention long adds a 1h ttl; none marks nothing and sends the system prompt as a string', () => {
    const long = body(request([userMessage('hi')], { tools: [weatherTool], options: { cacheRetention: 'long' } }))
    expect(JSON.stringify(long).match(/"ttl":"1h"/g)).toHaveLength(3)
    const none = body(request([userMessage('hi')], { tools: [weatherTool], options: { cacheRetention: 'none' } }))
    expect(JSON.stringify(none)).not.toContain('cache_control')
    expect(none['system']).toBe('You are terse.')
    expect(body(request([userMessage('hi')], { systemPrompt: '  ' }))).not.toHaveProperty('system')
  })

  it('options: maxTokens, temperature, stop sequences, user id', () => {
    const b = body(request([userMessage('hi')], { options: { maxTokens: 500, temperature: 0.2, stopSequences: ['END'], metadata: { userId: 'user-42', other: 1 } } }))
    expect(b).toMatchObject({ max_tokens: 500, temperature: 0.2, stop_sequences: ['END'], metadata: { user_id: 'user-42' } })
    expect(body(request([userMessage('hi')], { options: { metadata: { userId: 42 } } }))).not.toHaveProperty('metadata')
    expect(body(request([userMessage('hi')], { options: { stopSequences: [] } }))).not.toHaveProperty('stop_sequences')
  })

  it('images, base64 and url; empty text blocks and empty messages are not sent', () => {
    const b = body(
      request(
        [
          userMessage([text(''), imageBase64('iVBORw0KGgo=', 'image/png'), imageUrl('https://example.com/cat.jpg'), text('what is this?')]),
          fromSonnet([text('  '), text('A cat.')], { stopReason: 'stop' }),
          userMessage([text('')]),
          userMessage('thanks'),
        ],
        { options: { cacheRetention: 'none' } },
      ),
    )
    expect(b['messages']).toEqual([
      {
        role: 'user',
        content: [
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
          { type: 'text', text: 'what is this?' },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'A cat.' }] },
      { role: 'user', content: [{ type: 'text', text: 'thanks' }] },
    ])
  })

  it('tool results go as tool_result blocks in ONE user message after the assistant turn; a following user message merges into it', () => {
    const b = body(
      request(
        [
          userMessage('weather in Paris and Rome?'),
          fromSonnet([
            { type: 'toolCall', id: 'toolu_1', name: 'get_weather', arguments: { city: 'Paris' } },
            { type: 'toolCall', id: 'toolu_2', name: 'get_weather', arguments: { city: 'Rome' } },
          ]),
          result('toolu_1', '18°C'),
          result('toolu_2', 'city not found', true, { content: [text('city not found'), imageBase64('AAAA', 'image/png')] }),
          userMessage('also Oslo'),
        ],
        { tools: [weatherTool] },
      ),
    )
    expect(messagesOf(b).map((m) => m.role)).toEqual(['user', 'assistant', 'user'])
    expect(messagesOf(b)[1]!.content).toEqual([
      { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: { city: 'Rome' } },
    ])
    expect(messagesOf(b)[2]!.content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '18°C' }] },
      {
        type: 'tool_result',
        tool_use_id: 'toolu_2',
        content: [{ type: 'text', text: 'city not found' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }],
        is_error: true,
      },
      // Only the last user message's last block is a cache breakpoint.
      { type: 'text', text: 'also Oslo', cache_control: { type: 'ephemeral' } },
    ])
  })

  it('thinking levels → budget_tokens (Claude before 4.6); max_tokens always exceeds the budget; no temperature', () => {
    const at = (level: ModelSpec['thinkingLevel'], more: Partial<ModelSpec> = {}, options: LlmRequest['options'] = {}): Json =>
      body(request([userMessage('hi')], { model: { ...sonnet, thinkingLevel: level, ...more }, options: { temperature: 0.5, ...options } }))
    expect(at('off')).toMatchObject({ temperature: 0.5 })
    expect(at('off')).not.toHaveProperty('thinking')
    const budgets: [ModelSpec['thinkingLevel'], number][] = [['minimal', 1024], ['low', 2048], ['medium', 8192], ['high', 16384], ['xhigh', 32000]]
    for (const [level, budget] of budgets) {
      const b = at(level)
      expect(b['thinking']).toEqual({ type: 'enabled', budget_tokens: budget })
      expect(b).not.toHaveProperty('temperature')
      expect(b).not.toHaveProperty('output_config')
      expect(b['max_tokens'] as number).toBeGreaterThan(budget)
    }
    expect(at('medium', { thinkingBudgets: { medium: 5000 } })['thinking']).toEqual({ type: 'enabled', budget_tokens: 5000 })
    // The call asked for fewer tokens than the budget: max_tokens grows to leave room for the answer.
    expect(at('high', {}, { maxTokens: 1000 })).toMatchObject({ max_tokens: 16384 + 4096, thinking: { budget_tokens: 16384 } })
    // ...but never past the model's limit: the budget shrinks instead.
    expect(at('xhigh', { maxOutputTokens: 32_000 })).toMatchObject({ max_tokens: 32_000, thinking: { budget_tokens: 32_000 - 4096 } })
    expect(at('minimal', { maxOutputTokens: 1024 })).not.toHaveProperty('thinking')
  })

  it('thinking on Claude 4.6+ is adaptive with an effort; thinkingMode overrides the choice', () => {
    const opus46 = modelSpec('anthropic', 'claude-opus-4-6', { thinkingLevel: 'high' })
    expect(body(request([userMessage('hi')], { model: opus46 }))).toMatchObject({ thinking: { type: 'adaptive' }, output_config: { effort: 'high' } })
    expect(body(request([userMessage('hi')], { model: { ...opus46, thinkingLevel: 'xhigh' } }))['output_config']).toEqual({ effort: 'max' })
    expect(body(request([userMessage('hi')], { model: { ...opus46, modelId: 'claude-sonnet-4-6', thinkingLevel: 'xhigh' } }))['output_config']).toEqual({ effort: 'high' })
    expect(body(request([userMessage('hi')], { model: opus46 }), { thinkingMode: 'budget' })['thinking']).toEqual({ type: 'enabled', budget_tokens: 16384 })
    expect(body(request([userMessage('hi')], { model: { ...sonnet, thinkingLevel: 'low' } }), { thinkingMode: 'adaptive' })).toMatchObject({
      thinking: { type: 'adaptive' },
      output_config: { effort: 'low' },
    })
    expect([adaptiveEffort('minimal', 'x'), adaptiveEffort('low', 'x'), adaptiveEffort('medium', 'x'), adaptiveEffort('high', 'x'), adaptiveEffort('xhigh', 'claude-opus-5')]).toEqual(['low', 'low', 'medium', 'high', 'max'])
    expect(['claude-opus-4-6', 'claude-sonnet-4-6', 'claude-opus-4-7', 'claude-opus-5', 'claude-sonnet-5-1'].every(supportsAdaptiveThinking)).toBe(true)
    expect(['claude-opus-4-5', 'claude-sonnet-4-5-20250929', 'claude-opus-4-20250514', 'claude-3-7-sonnet-latest', 'gpt-5'].some(supportsAdaptiveThinking)).toBe(false)
  })

  it('replays the same model’s thinking with its signature, redacted thinking as data, unsigned thinking as text', () => {
    const b = body(
      request([
        userMessage('q'),
        fromSonnet(
          [
            { type: 'thinking', thinking: 'Let me think.', signature: 'sig-1' },
            { type: 'thinking', thinking: '', signature: 'ZW5j', redacted: true },
            { type: 'thinking', thinking: 'Unsigned musing.' },
            text('Answer.'),
          ],
          { stopReason: 'stop' },
        ),
        userMessage('more'),
      ]),
    )
    expect(messagesOf(b)[1]!.content).toEqual([
      { type: 'thinking', thinking: 'Let me think.', signature: 'sig-1' },
      { type: 'redacted_thinking', data: 'ZW5j' },
      { type: 'text', text: 'Unsigned musing.' },
      { type: 'text', text: 'Answer.' },
    ])
    // A dated snapshot is the same model as its alias: the signature stays valid.
    const dated = body(request([userMessage('q'), fromSonnet([{ type: 'thinking', thinking: 'T', signature: 's' }, text('A')], { model: 'claude-sonnet-4-5-20250929', stopReason: 'stop' }), userMessage('q2')]))
    expect(messagesOf(dated)[1]!.content[0]).toEqual({ type: 'thinking', thinking: 'T', signature: 's' })
  })

  it('a decoded thinking + tool turn is replayed on the next request as it came (signature, tool_use id)', () => {
    const { message } = fold(decode(fixture('thinking-tool.sse')))
    // The response names a dated snapshot of the requested alias.
    expect(message.model).toBe('claude-sonnet-4-5-20250929')
    const b = body(request([userMessage('weather in Paris?'), message, result('toolu_01WeatherParis', '18°C')], { model: { ...sonnet, thinkingLevel: 'medium' } }))
    expect(messagesOf(b)[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'The user wants the weather in Paris; I should call the tool.', signature: 'RXNpZ25hdHVyZS1vbmU=' },
        { type: 'text', text: 'Let me check the weather.' },
        { type: 'tool_use', id: 'toolu_01WeatherParis', name: 'get_weather', input: { city: 'Paris', unit: 'celsius' } },
      ],
    })
    expect(messagesOf(b)[2]!.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_01WeatherParis' })
    // Another Claude model must not get the signature: its thinking becomes text.
    const other = body(request([userMessage('q'), message, result('toolu_01WeatherParis', '18°C')], { model: modelSpec('anthropic', 'claude-opus-4-5') }))
    expect(messagesOf(other)[1]!.content[0]).toEqual({ type: 'text', text: 'The user wants the weather in Paris; I should call the tool.' })
  })

  it('switching from another provider: foreign thinking → text, redacted dropped, ids normalized, unanswered calls settled', () => {
    const foreignId = 'call_abc|fc_123+/=ÿ'
    const longId = `call_${'x'.repeat(80)}`
    const b = body(
      request([
        userMessage('q'),
        assistantMessage(
          [
            { type: 'thinking', thinking: 'GPT reasoning.', signature: 'opaque-openai' },
            { type: 'thinking', thinking: '', signature: 'enc', redacted: true },
            { type: 'toolCall', id: foreignId, name: 'get_weather', arguments: { city: 'Paris' } },
            { type: 'toolCall', id: longId, name: 'search', arguments: { q: 'x' } },
            { type: 'extension', typeName: 'web_search_call', data: { type: 'web_search_call' } },
          ],
          { provider: 'openai', model: 'gpt-5', stopReason: 'toolUse' },
        ),
        result(foreignId, 'sunny'),
        userMessage('and?'),
      ]),
    )
    const [, assistant, user] = messagesOf(b)
    const id1 = normalizeAnthropicToolCallId(foreignId)
    const id2 = normalizeAnthropicToolCallId(longId)
    expect(id1).toMatch(/^[a-zA-Z0-9_-]{1,64}$/)
    expect(id2).toMatch(/^[a-zA-Z0-9_-]{1,64}$/)
    expect(assistant!.content).toEqual([
      { type: 'text', text: 'GPT reasoning.' },
      { type: 'tool_use', id: id1, name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: id2, name: 'search', input: { q: 'x' } },
    ])
    expect(user!.content).toEqual([
      { type: 'tool_result', tool_use_id: id1, content: [{ type: 'text', text: 'sunny' }] },
      { type: 'tool_result', tool_use_id: id2, content: [{ type: 'text', text: expect.stringContaining('not executed') as unknown }], is_error: true },
      { type: 'text', text: 'and?', cache_control: { type: 'ephemeral' } },
    ])
  })

  it('drops failed turns with their results; replays server tool blocks to Anthropic only', () => {
    const serverUse = { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'q' } }
    const serverResult = { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] }
    const b = body(
      request([
        userMessage('q'),
        fromSonnet([{ type: 'toolCall', id: 'toolu_bad', name: 'get_weather', arguments: {} }], { stopReason: 'error', errorMessage: 'boom' }),
        result('toolu_bad', 'late'),
        fromSonnet(
          [
            { type: 'extension', typeName: 'server_tool_use', data: serverUse },
            { type: 'extension', typeName: 'web_search_tool_result', data: serverResult },
            text('Found it.'),
            { type: 'extension', typeName: 'anthropic.citations', data: { type: 'citations', citations: [] } },
          ],
          { stopReason: 'stop' },
        ),
        userMessage('ok'),
      ]),
    )
    expect(messagesOf(b).map((m) => m.role)).toEqual(['user', 'assistant', 'user'])
    expect(JSON.stringify(b)).not.toContain('toolu_bad')
    expect(messagesOf(b)[1]!.content).toEqual([serverUse, serverResult, { type: 'text', text: 'Found it.' }])
  })

  it('the HTTP request: URL, headers (key only in x-api-key), per-call headers, betas', () => {
    const r = request([userMessage('hi')], { options: { headers: { 'x-trace': 't1' } } })
    const http = anthropicProtocol.buildRequest(r, { baseUrl: 'https://proxy.example/', betas: ['a-beta', 'b-beta'] }, KEY)
    expect(http.url).toBe('https://proxy.example/v1/messages')
    expect(http.headers).toEqual({ 'x-trace': 't1', 'anthropic-version': '2023-06-01', 'anthropic-beta': 'a-beta,b-beta', 'x-api-key': KEY })
    expect(JSON.stringify(http.body)).not.toContain(KEY)
    expect(anthropicProtocol.buildRequest(r, {}, KEY).url).toBe('https://api.anthropic.com/v1/messages')
  })
})

// ---------------------------------------------------------------------------

let server: ReplayServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const sse = (name: string): ScriptedHttpResponse => ({ chunks: splitBytes(fixture(name), 37) })
const haiku = modelSpec('anthropic', 'claude-haiku-4-5', { cost: { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 } })

async function run(responses: readonly ScriptedHttpResponse[], settings: AnthropicSettings = {}, tools = [addTool]): Promise<{ events: AgentEvent[]; last: AssistantMessage; s: ReplayServer }> {
  const s = await startReplayServer(responses)
  server = s
  const streamFn = anthropic({ baseUrl: s.url, apiKey: KEY, ...settings })
  const events = await lastValueFrom(agentLoop(userMessage('what is 2 + 3?'), { systemPrompt: 'Use tools.', messages: [], tools }, { model: haiku, streamFn, retry: false }).pipe(toArray()))
  const ends = events.flatMap((e) => (e.type === 'messageEnd' && e.message.role === 'assistant' ? [e.message] : []))
  return { events, last: ends.at(-1)!, s }
}

describe('anthropic: over HTTP', () => {
  it('an agent run with a tool round trip: the second request carries the call and its result', async () => {
    const { events, last, s } = await run([sse('add-tool.sse'), sse('final-answer.sse')])
    expect(last).toMatchObject({ stopReason: 'stop', content: [{ type: 'text', text: '2 + 3 = 5.' }], responseId: 'msg_rx_final_01' })
    expect(s.requests).toHaveLength(2)
    const [first, second] = s.requests
    expect(first).toMatchObject({ method: 'POST', url: '/v1/messages' })
    expect(first!.headers['x-api-key']).toBe(KEY)
    expect(first!.headers['anthropic-version']).toBe('2023-06-01')
    expect(first!.body).toMatchObject({ model: 'claude-haiku-4-5', stream: true, tools: [{ name: 'add', input_schema: { type: 'object' } }] })
    expect((second!.body as Json)['messages']).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'what is 2 + 3?' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01AddNumbers', name: 'add', input: { a: 2, b: 3 } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01AddNumbers', content: [{ type: 'text', text: '5' }], cache_control: { type: 'ephemeral' } }] },
    ])
    expect(transcriptFromEvents(events).map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant'])
    const end = events.at(-1)
    expect(end).toMatchObject({ type: 'agentEnd', result: { stopReason: 'stop' } })
  })

  it('a mid-stream error ends the message with stopReason error and its kind; the transcript stays valid', async () => {
    const { events, last } = await run([sse('overloaded-midstream.sse')])
    expect(last).toMatchObject({ stopReason: 'error', errorKind: 'overloaded', content: [{ type: 'text', text: 'Partial answ' }] })
    expect(last.errorMessage).toContain('Overloaded')
    expect(transcriptFromEvents(events).map((m) => m.role)).toEqual(['user', 'assistant'])
  })

  const errorBody = (type: string, message: string): string => JSON.stringify({ type: 'error', error: { type, message } })
  const statuses: [number, Record<string, string>, string, string, string, boolean, number | undefined][] = [
    [401, {}, 'authentication_error', 'invalid x-api-key', 'auth', false, undefined],
    [403, {}, 'permission_error', 'Your API key does not have permission to use the specified resource.', 'auth', false, undefined],
    [404, {}, 'not_found_error', 'model: claude-haiku-4-5', 'modelNotFound', false, undefined],
    [400, {}, 'invalid_request_error', 'prompt is too long: 215000 tokens > 200000 maximum', 'contextOverflow', false, undefined],
    [413, {}, 'request_too_large', 'Request exceeds the maximum allowed number of bytes.', 'contextOverflow', false, undefined],
    [429, {}, 'rate_limit_error', 'This request would exceed the rate limit for your organization', 'rateLimit', true, undefined],
    [429, { 'retry-after': '12' }, 'rate_limit_error', 'This request would exceed the rate limit for your organization', 'rateLimit', true, 12_000],
    [500, {}, 'api_error', 'Internal server error', 'server', true, undefined],
    [503, { 'retry-after': '3' }, 'api_error', 'Service unavailable', 'server', true, 3000],
    [529, {}, 'overloaded_error', 'Overloaded', 'overloaded', true, undefined],
  ]
  for (const [status, headers, type, message, kind, retryable, retryAfterMs] of statuses) {
    it(`HTTP ${status} ${type}${headers['retry-after'] === undefined ? '' : ' with retry-after'} → ${kind}`, async () => {
      const s = await startReplayServer([{ status, headers: { 'content-type': 'application/json', ...headers }, chunks: [errorBody(type, message)] }])
      server = s
      const error = await firstValueFrom(anthropic({ baseUrl: s.url, apiKey: KEY })(request([userMessage('hi')]))).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(ProviderError)
      const info = (error as ProviderError).info
      expect(info).toMatchObject({ kind, retryable, status, code: type, provider: 'anthropic' })
      expect(info.retryAfterMs).toBe(retryAfterMs)
      expect(info.message).toContain(message)
      expect(info.message).not.toContain(KEY)
      expect(JSON.stringify(info)).not.toContain(KEY)
    })
  }

  it('a non-JSON error body still classifies by status', async () => {
    const s = await startReplayServer([{ status: 502, headers: { 'content-type': 'text/html' }, chunks: ['<html>Bad gateway</html>'] }])
    server = s
    const error = await firstValueFrom(anthropic({ baseUrl: s.url, apiKey: KEY })(request([userMessage('hi')]))).catch((e: unknown) => e)
    expect((error as ProviderError).info).toMatchObject({ kind: 'server', retryable: true, status: 502 })
  })

  it('the key comes from ANTHROPIC_API_KEY; without one the call fails at once with an auth error', async () => {
    const s = await startReplayServer([sse('final-answer.sse')])
    server = s
    await lastValueFrom(anthropic({ baseUrl: s.url, env: { ANTHROPIC_API_KEY: 'from-env' } })(request([userMessage('hi')])).pipe(toArray()))
    expect(s.requests[0]!.headers['x-api-key']).toBe('from-env')
    const error = await firstValueFrom(anthropic({ baseUrl: s.url, env: {} })(request([userMessage('hi')]))).catch((e: unknown) => e)
    expect((error as ProviderError).info).toMatchObject({ kind: 'auth', retryable: false })
    expect(s.requests).toHaveLength(1)
  })
})
