/**
 * The OpenAI-compatible adapter, offline: the compat table, request bodies
 * per server (token field, stream options, thinking parameter, reasoning
 * replay, Mistral's ids and tool messages), decoding hand-written streams of
 * DeepSeek, vLLM, Groq, Mistral and OpenRouter in their wire formats, keys
 * and base URLs, and an agent-loop tool round trip against a replay server.
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import * as t from 'io-ts'
import { firstValueFrom, lastValueFrom, toArray } from 'rxjs'
import { foldChunks } from '../../marbles/fold-chunks.js'
import { agentLoop } from '../../src/loop/agent-loop.js'
import { transcriptFromEvents } from '../../src/loop/transcript.js'
import { defineTool } from '../../src/tools/define-tool.js'
import type { ProviderChunk } from '../../src/types/chunk.js'
import { text } from '../../src/types/content.js'
import { assistantMessage, userMessage, type AssistantMessage, type LlmMessage, type ToolResultMessage } from '../../src/types/message.js'
import { modelSpec, type ModelSpec, type ThinkingLevel } from '../../src/types/model.js'
import { ProviderError } from '../../src/types/provider-error.js'
import type { LlmRequest } from '../../src/types/request.js'
import { emptyUsage } from '../../src/types/usage.js'
import { decodeWire } from '../../src/providers/protocol.js'
import { OpenAIChatDecoder } from '../../src/providers/openai-chat-decoder.js'
import { openaiChatRequestBody } from '../../src/providers/openai-chat-request.js'
import { openaiUsage } from '../../src/providers/openai-chat-stop-usage.js'
import { compatFor, openaiCompatible, openaiCompatibleProtocol, type CompatServer } from '../../src/providers/openai-compatible.js'
import type { Compat } from '../../src/providers/openai-chat-compat.js'
import { sseBody, splitBytes, replayServerPerTest } from './replay-server.js'

const KEY = 'gsk_test_SECRET_0123456789abcdef'
const fixture = (name: string): string => readFileSync(fileURLToPath(new URL(`../fixtures/openai-compatible/${name}`, import.meta.url)), 'utf8')

const decode = (wire: string, server: CompatServer, size = 5): ProviderChunk[] => decodeWire(new OpenAIChatDecoder(server, compatFor(server)), splitBytes(wire, size))

const fold = (chunks: readonly ProviderChunk[], model: ModelSpec): AssistantMessage => foldChunks(chunks, model)

function decodeError(run: () => unknown): ProviderError {
  try {
    run()
  } catch (e) {
    if (e instanceof ProviderError) return e
    throw e
  }
  throw new Error('expected a ProviderError')
}

const expectUsageInvariants = (m: AssistantMessage): void => {
  expect(m.usage.reasoning).toBeLessThanOrEqual(m.usage.output)
  expect(m.usage.total).toBe(m.usage.input + m.usage.output + m.usage.cacheRead + m.usage.cacheWrite)
}

const toolResult = (toolCallId: string, toolName: string, content: ToolResultMessage['content']): ToolResultMessage => ({ role: 'toolResult', toolCallId, toolName, content, isError: false, timestamp: 0 })
const req = (model: ModelSpec, messages: readonly LlmMessage[], more: Partial<LlmRequest> = {}): LlmRequest => ({ model, systemPrompt: 'Be brief.', messages, tools: [], ...more })
const bodyFor = (server: CompatServer, request: LlmRequest, overrides: Partial<Compat> = {}): Record<string, unknown> =>
  openaiChatRequestBody(request, {}, { ...compatFor(server), ...overrides })

describe('openai-compatible: the compat table', () => {
  it('has a row per server with its address, key variable and whether a key is required', () => {
    expect(compatFor('ollama')).toMatchObject({ defaultBaseUrl: 'http://localhost:11434/v1', requiresApiKey: false })
    expect(compatFor('vllm')).toMatchObject({ defaultBaseUrl: 'http://localhost:8000/v1', requiresApiKey: false })
    expect(compatFor('llamacpp')).toMatchObject({ defaultBaseUrl: 'http://localhost:8080/v1', requiresApiKey: false })
    expect(compatFor('lmstudio')).toMatchObject({ defaultBaseUrl: 'http://localhost:1234/v1', requiresApiKey: false })
    const hosted: [CompatServer, string][] = [
      ['groq', 'GROQ_API_KEY'],
      ['deepseek', 'DEEPSEEK_API_KEY'],
      ['xai', 'XAI_API_KEY'],
      ['mistral', 'MISTRAL_API_KEY'],
      ['openrouter', 'OPENROUTER_API_KEY'],
      ['together', 'TOGETHER_API_KEY'],
      ['fireworks', 'FIREWORKS_API_KEY'],
      ['cerebras', 'CEREBRAS_API_KEY'],
    ]
    for (const [server, env] of hosted) {
      expect(compatFor(server).apiKeyEnv).toContain(env)
      expect(compatFor(server).requiresApiKey).toBe(true)
      expect(compatFor(server).defaultBaseUrl).toMatch(/^https:\/\//)
    }
    expect(compatFor('generic').defaultBaseUrl).toBeUndefined()
    expect(() => compatFor('nope' as CompatServer)).toThrow(/unknown server 'nope'/)
  })

  it('needs a base URL unless the server has one', () => {
    expect(() => openaiCompatible({})).toThrow(/baseUrl/)
    expect(() => openaiCompatible({ server: 'generic' })).toThrow(/baseUrl/)
    expect(() => openaiCompatible({ server: 'ollama' })).not.toThrow()
    expect(openaiCompatibleProtocol({ baseUrl: 'http://x/v1' }).provider).toBe('openai-compatible')
    expect(openaiCompatibleProtocol({ server: 'groq' }).provider).toBe('groq')
  })
})

describe('openai-compatible: request bodies', () => {
  const qwen = modelSpec('vllm', 'Qwen/Qwen3-32B')

  it('uses max_tokens, no developer role, stream_options unless the server rejects unknown fields', () => {
    const o1 = modelSpec('ollama', 'o1-lookalike')
    const body = bodyFor('ollama', req(o1, [userMessage('Hi')], { options: { maxTokens: 100 } }))
    expect(body).toMatchObject({ max_tokens: 100, stream: true, stream_options: { include_usage: true } })
    expect(body['max_completion_tokens']).toBeUndefined()
    expect((body['messages'] as { role: string }[])[0]!.role).toBe('system')
    expect(bodyFor('mistral', req(modelSpec('mistral', 'mistral-large-latest'), [userMessage('Hi')]))['stream_options']).toBeUndefined()
    expect(bodyFor('cerebras', req(modelSpec('cerebras', 'gpt-oss-120b'), [userMessage('Hi')], { options: { maxTokens: 9 } }))['max_completion_tokens']).toBe(9)
    // No prompt_cache_key outside OpenAI.
    expect(bodyFor('groq', req(modelSpec('groq', 'x'), [userMessage('Hi')], { options: { sessionId: 's' } }))['prompt_cache_key']).toBeUndefined()
  })

  const thinking: [CompatServer, ThinkingLevel, Record<string, unknown>][] = [
    ['groq', 'minimal', { reasoning_effort: 'low' }],
    ['groq', 'xhigh', { reasoning_effort: 'high' }],
    ['xai', 'medium', { reasoning_effort: 'high' }],
    ['xai', 'low', { reasoning_effort: 'low' }],
    ['openrouter', 'minimal', { reasoning: { effort: 'minimal' } }],
    ['deepseek', 'high', { thinking: { type: 'enabled' } }],
    ['vllm', 'off', { chat_template_kwargs: { enable_thinking: false } }],
    ['llamacpp', 'medium', { chat_template_kwargs: { enable_thinking: true } }],
  ]
  for (const [server, level, params] of thinking) {
    it(`${server}: thinking level ${level} → ${JSON.stringify(params)}`, () => {
      expect(bodyFor(server, req({ ...qwen, provider: server, thinkingLevel: level }, [userMessage('Hi')]))).toMatchObject(params)
    })
  }

  it('sends no thinking parameter for level off (where off is the default) or to servers without one', () => {
    for (const server of ['groq', 'xai', 'openrouter', 'deepseek'] as const) {
      const body = bodyFor(server, req({ ...qwen, provider: server }, [userMessage('Hi')]))
      expect(body['reasoning_effort'] ?? body['reasoning'] ?? body['thinking']).toBeUndefined()
    }
    expect(bodyFor('mistral', req({ ...qwen, thinkingLevel: 'high' }, [userMessage('Hi')]))['reasoning_effort']).toBeUndefined()
  })

  it("replays the same model's reasoning where the server takes it back (OpenRouter), never to DeepSeek", () => {
    const own = (provider: string, model: string): AssistantMessage =>
      assistantMessage([{ type: 'thinking', thinking: 'Let me think.' }, text('Answer.')], { provider, model })
    const router = modelSpec('openrouter', 'deepseek/deepseek-r1')
    const viaRouter = bodyFor('openrouter', req(router, [userMessage('Q'), own('openrouter', 'deepseek/deepseek-r1'), userMessage('Q2')]))
    expect((viaRouter['messages'] as unknown[])[2]).toEqual({ role: 'assistant', content: 'Answer.', reasoning: 'Let me think.' })
    const ds = modelSpec('deepseek', 'deepseek-reasoner')
    const direct = bodyFor('deepseek', req(ds, [userMessage('Q'), own('deepseek', 'deepseek-reasoner'), userMessage('Q2')]))
    expect((direct['messages'] as unknown[])[2]).toEqual({ role: 'assistant', content: 'Answer.' })
    // A dated snapshot of the same model is the same model.
    const dated = bodyFor('openrouter', req(router, [userMessage('Q'), own('openrouter', 'deepseek/deepseek-r1-0528'), userMessage('Q2')]))
    expect((dated['messages'] as unknown[])[2]).toEqual({ role: 'assistant', content: 'Answer.', reasoning: 'Let me think.' })
    // Another model's reasoning is plain text for everyone.
    const foreign = bodyFor('openrouter', req(router, [userMessage('Q'), own('anthropic', 'claude-sonnet-4-5'), userMessage('Q2')]))
    expect((foreign['messages'] as unknown[])[2]).toEqual({ role: 'assistant', content: 'Let me think.\n\nAnswer.' })
  })

  it('Mistral: 9-character alphanumeric ids, the same in call and result; tool name on tool messages; an assistant message before a following user message', () => {
    const mistral = modelSpec('mistral', 'mistral-large-latest')
    const calls = assistantMessage(
      [
        { type: 'toolCall', id: 'call_Wq3kPz8dYbN1sLmR4tVx0aJc', name: 'get_weather', arguments: { location: 'Nice' } },
        { type: 'toolCall', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_time', arguments: {} },
      ],
      { provider: 'openai', model: 'gpt-4.1', stopReason: 'toolUse' },
    )
    const body = bodyFor(
      'mistral',
      req(mistral, [userMessage('Go'), calls, toolResult('call_Wq3kPz8dYbN1sLmR4tVx0aJc', 'get_weather', [text('sunny')]), toolResult('toolu_01A09q90qw90lq917835lq9', 'get_time', [text('noon')]), userMessage('Thanks')]),
    )
    const messages = body['messages'] as Record<string, unknown>[]
    const ids = (messages[2]!['tool_calls'] as { id: string }[]).map((c) => c.id)
    for (const id of ids) expect(id).toMatch(/^[a-zA-Z0-9]{9}$/)
    expect(new Set(ids).size).toBe(2)
    expect(messages.slice(3)).toEqual([
      { role: 'tool', tool_call_id: ids[0], content: 'sunny', name: 'get_weather' },
      { role: 'tool', tool_call_id: ids[1], content: 'noon', name: 'get_time' },
      { role: 'assistant', content: 'I have the tool results.' },
      { role: 'user', content: 'Thanks' },
    ])
    // Mistral's own ids pass unchanged.
    const own = assistantMessage([{ type: 'toolCall', id: 'D681PevKs', name: 'get_time', arguments: {} }], { provider: 'mistral', model: 'mistral-large-latest', stopReason: 'toolUse' })
    const again = bodyFor('mistral', req(mistral, [userMessage('Go'), own, toolResult('D681PevKs', 'get_time', [text('noon')])]))
    expect((again['messages'] as Record<string, unknown>[])[3]).toMatchObject({ tool_call_id: 'D681PevKs' })
  })

  it('compat overrides apply field by field', () => {
    const body = bodyFor('generic', req(modelSpec('x', 'm', { thinkingLevel: 'low' }), [userMessage('Hi')]), { thinkingParam: 'reasoning_effort', maxTokensField: 'max_completion_tokens' })
    expect(body['reasoning_effort']).toBe('low')
  })
})

describe('openai-compatible: decoding', () => {
  it('DeepSeek: reasoning_content as thinking, then the answer; reasoning tokens inside output', () => {
    const model = modelSpec('deepseek', 'deepseek-reasoner', { cost: { input: 0.28, output: 0.42, cacheRead: 0.028, cacheWrite: 0 } })
    const message = fold(decode(fixture('deepseek-reasoner.sse'), 'deepseek', 3), model)
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'The user asks for 17 × 23. 17 × 20 = 340, 17 × 3 = 51, total 391.' },
      { type: 'text', text: '17 × 23 = **391**.' },
    ])
    expect(message.usage).toEqual({ ...emptyUsage, input: 24, output: 58, reasoning: 44, total: 82 })
    expect(message.cost.total).toBeCloseTo((24 * 0.28 + 58 * 0.42) / 1e6, 12)
    expectUsageInvariants(message)
  })

  it('DeepSeek: cache hits reported only as prompt_cache_hit_tokens leave input', () => {
    const message = fold(decode(fixture('deepseek-cache-hit.sse'), 'deepseek'), modelSpec('deepseek', 'deepseek-chat'))
    expect(message.usage).toMatchObject({ input: 76, cacheRead: 1024, output: 4, total: 1104 })
    expectUsageInvariants(message)
  })

  it('vLLM: `reasoning` deltas; arguments before the id and name are buffered; no [DONE] after a finish_reason is complete', () => {
    const chunks = decode(fixture('vllm-late-id-no-done.sse'), 'vllm')
    const message = fold(chunks, modelSpec('vllm', 'Qwen/Qwen3-32B'))
    expect(message.stopReason).toBe('toolUse')
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'Need the weather tool.' },
      { type: 'toolCall', id: 'chatcmpl-tool-4f1e2d3c4b5a6978', name: 'get_weather', arguments: { city: 'Kyoto' } },
    ])
    expect(message.usage).toMatchObject({ input: 310, output: 42, total: 352 })
  })

  it('Groq: usage from x_groq.usage, counted once; two calls complete in one chunk', () => {
    const message = fold(decode(fixture('groq-x-usage.sse'), 'groq'), modelSpec('groq', 'openai/gpt-oss-120b'))
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'Two lookups.' },
      { type: 'toolCall', id: 'fc_8d2a6c1e', name: 'lookup', arguments: { q: 'alpha' } },
      { type: 'toolCall', id: 'fc_3b9f0e7d', name: 'lookup', arguments: { q: 'beta' } },
    ])
    expect(message.usage).toEqual({ ...emptyUsage, input: 180, output: 40, total: 220 })
    // A chunk carrying the same report in both places is not counted twice.
    const both = sseBody([
      { data: { id: 'g', model: 'm', choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 }, x_groq: { usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } } } },
      { data: '[DONE]' },
    ])
    expect(fold(decode(both, 'groq'), modelSpec('groq', 'm')).usage).toMatchObject({ input: 5, output: 1, total: 6 })
  })

  it('Mistral: thinking and text content parts; usage inside the finishing chunk', () => {
    const message = fold(decode(fixture('mistral-thinking-parts.sse'), 'mistral'), modelSpec('mistral', 'magistral-medium-2509'))
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'Simple greeting; answer briefly.' },
      { type: 'text', text: 'Salut !' },
    ])
    expect(message).toMatchObject({ stopReason: 'stop', usage: { input: 12, output: 18, total: 30 } })
  })

  it('xAI: completion_tokens without reasoning tokens — output still includes them', () => {
    const xaiUsage = { prompt_tokens: 307, completion_tokens: 26, total_tokens: 560, prompt_tokens_details: { cached_tokens: 306 }, completion_tokens_details: { reasoning_tokens: 227 } }
    expect(openaiUsage(xaiUsage, compatFor('xai'))).toEqual({ input: 1, cacheRead: 306, output: 253, reasoning: 227, total: 560 })
    // Without a total, the row decides.
    const { total_tokens: _omit, ...noTotal } = xaiUsage
    expect(openaiUsage(noTotal, compatFor('xai'))).toMatchObject({ output: 253, reasoning: 227 })
    expect(openaiUsage(noTotal, compatFor('generic'))).toMatchObject({ output: 26, reasoning: 26 })
  })

  it('OpenRouter: a mid-stream error payload with the upstream status fails the stream; the partial text stays in the message', () => {
    const body = fixture('openrouter-mid-stream-error.sse')
    const error = decodeError(() => decode(body, 'openrouter'))
    expect(error.info).toMatchObject({ kind: 'server', retryable: true, provider: 'openrouter', code: '502' })
    expect(error.message).toContain('Provider returned error')
    // What came before the error, as the runtime keeps it.
    const reader = new OpenAIChatDecoder('openrouter', compatFor('openrouter'))
    const before = body.split('\n\n').filter((e) => e.startsWith('data:') && !e.includes('"error"'))
    const chunks = before.flatMap((e) => [...reader.event({ data: e.slice(6) })])
    expect(fold(chunks, modelSpec('openrouter', 'anthropic/claude-sonnet-4.5'))).toMatchObject({ stopReason: 'error', content: [{ type: 'text', text: 'Partial' }] })
  })

  it("OpenRouter: encrypted reasoning_details are kept as redacted thinking and replayed only to the model that wrote them", () => {
    const detail = { type: 'reasoning.encrypted', data: 'gAAAAABo-opaque==', id: 'rs_1', format: 'openai-responses-v1', index: 0 }
    const body = sseBody([
      { data: { id: 'gen-9', model: 'openai/gpt-5', choices: [{ index: 0, delta: { role: 'assistant', content: '', reasoning_details: [detail] }, finish_reason: null }] } },
      { data: { id: 'gen-9', model: 'openai/gpt-5', choices: [{ index: 0, delta: { content: 'Done.' }, finish_reason: 'stop' }] } },
      { data: '[DONE]' },
    ])
    const model = modelSpec('openrouter', 'openai/gpt-5')
    const message = fold(decode(body, 'openrouter'), model)
    expect(message.content).toEqual([
      { type: 'thinking', thinking: '', signature: JSON.stringify(detail), redacted: true },
      { type: 'text', text: 'Done.' },
    ])
    const own = { ...message, model: 'openai/gpt-5' }
    const replayed = bodyFor('openrouter', req(model, [userMessage('Q'), own, userMessage('Q2')]))
    expect((replayed['messages'] as unknown[])[2]).toEqual({ role: 'assistant', content: 'Done.', reasoning_details: [detail] })
    const elsewhere = bodyFor('openrouter', req(modelSpec('openrouter', 'anthropic/claude-sonnet-4.5'), [userMessage('Q'), own, userMessage('Q2')]))
    expect((elsewhere['messages'] as unknown[])[2]).toEqual({ role: 'assistant', content: 'Done.' })
  })

  it('a body cut before any finish_reason is a truncated (network) error', () => {
    const cut = fixture('deepseek-reasoner.sse').split('\n\n').slice(0, 5).join('\n\n') + '\n\n'
    expect(decodeError(() => decode(cut, 'deepseek')).info).toMatchObject({ kind: 'network', retryable: true, provider: 'deepseek' })
  })

  it('a malformed JSON event is a protocol error', () => {
    expect(decodeError(() => decode('data: {"id":"x","choices":[{"delta":{"content":"a"}}]}\n\ndata: {"id":\n\n', 'ollama')).info).toMatchObject({ kind: 'protocol', retryable: false })
  })

  it('any split of a recorded body into network chunks, inside UTF-8 characters too, decodes to the same chunks', () => {
    for (const [name, server] of [
      ['deepseek-reasoner.sse', 'deepseek'],
      ['vllm-late-id-no-done.sse', 'vllm'],
    ] as const) {
      const bytes = new TextEncoder().encode(fixture(name))
      const whole = decodeWire(new OpenAIChatDecoder(server, compatFor(server)), [bytes])
      fc.assert(
        fc.property(fc.uniqueArray(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 40 }), (cuts) => {
          const sorted = [...cuts].sort((a, b) => a - b)
          const parts = [0, ...sorted].map((start, i) => bytes.subarray(start, sorted[i] ?? bytes.length))
          expect(decodeWire(new OpenAIChatDecoder(server, compatFor(server)), parts)).toEqual(whole)
        }),
        { numRuns: 150 },
      )
    }
  })
})

const replay = replayServerPerTest()
const serve = replay.serve

describe('openai-compatible: keys, URLs and HTTP errors', () => {
  const okBody = sseBody([{ data: { id: 'r', model: 'qwen3:8b', choices: [{ index: 0, delta: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] } }, { data: '[DONE]' }])

  it('a local server needs no key: no Authorization header is sent', async () => {
    const s = await serve([{ chunks: [okBody] }])
    const streamFn = openaiCompatible({ server: 'ollama', baseUrl: `${s.url}/v1`, env: {} })
    await lastValueFrom(streamFn(req(modelSpec('ollama', 'qwen3:8b'), [userMessage('Hi')])).pipe(toArray()))
    expect(s.requests[0]!.url).toBe('/v1/chat/completions')
    expect(s.requests[0]!.headers.authorization).toBeUndefined()
  })

  it("a hosted server's key comes from its variable and goes only into the Authorization header", async () => {
    const s = await serve([{ chunks: [okBody] }])
    const streamFn = openaiCompatible({ server: 'groq', baseUrl: `${s.url}/openai/v1`, env: { GROQ_API_KEY: KEY } })
    await lastValueFrom(streamFn(req(modelSpec('groq', 'llama-3.3-70b-versatile'), [userMessage('Hi')])).pipe(toArray()))
    expect(s.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`)
    expect(s.requests[0]!.url).toBe('/openai/v1/chat/completions')
    expect(JSON.stringify(s.requests[0]!.body)).not.toContain(KEY)
  })

  it('a hosted server without a key fails at once, naming its variable', async () => {
    const error = await firstValueFrom(openaiCompatible({ server: 'deepseek', env: {} })(req(modelSpec('deepseek', 'deepseek-chat'), [userMessage('Hi')]))).catch((e: unknown) => e)
    expect((error as ProviderError).info).toMatchObject({ kind: 'auth', retryable: false, provider: 'deepseek' })
    expect((error as ProviderError).message).toContain('DEEPSEEK_API_KEY')
  })

  const cases: [number, Record<string, string>, string, string, boolean, number | undefined][] = [
    [401, {}, JSON.stringify({ error: { message: 'Invalid API Key', type: 'invalid_request_error', code: 'invalid_api_key' } }), 'auth', false, undefined],
    [429, { 'retry-after': '3' }, JSON.stringify({ error: { message: 'Rate limit reached for model `llama-3.3-70b-versatile`. Please try again in 2.5s.', type: 'tokens', code: 'rate_limit_exceeded' } }), 'rateLimit', true, 3000],
    [429, {}, JSON.stringify({ error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } }), 'rateLimit', true, undefined],
    [500, {}, JSON.stringify({ error: { message: 'Internal Server Error', type: 'internal_server_error' } }), 'server', true, undefined],
    [503, {}, JSON.stringify({ error: { message: 'Service Unavailable', type: 'service_unavailable' } }), 'overloaded', true, undefined],
    [400, {}, JSON.stringify({ object: 'error', message: "This model's maximum context length is 32768 tokens. However, you requested 40000 tokens.", type: 'BadRequestError', param: null, code: 400 }), 'contextOverflow', false, undefined],
    [404, {}, JSON.stringify({ error: 'model "qwen9" not found, try pulling it first' }), 'modelNotFound', false, undefined],
  ]
  for (const [status, headers, body, kind, retryable, retryAfterMs] of cases) {
    it(`HTTP ${status}${Object.keys(headers).length > 0 ? ` with ${Object.keys(headers)[0]}` : ''} → ${kind}`, async () => {
      const s = await serve([{ status, headers: { 'content-type': 'application/json', ...headers }, chunks: [body] }])
      const streamFn = openaiCompatible({ server: 'groq', baseUrl: s.url, apiKey: KEY })
      const error = await firstValueFrom(streamFn(req(modelSpec('groq', 'm'), [userMessage('Hi')]))).catch((e: unknown) => e)
      expect((error as ProviderError).info).toMatchObject({ kind, retryable, status, provider: 'groq' })
      expect((error as ProviderError).info.retryAfterMs).toBe(retryAfterMs)
      expect((error as ProviderError).message).not.toContain(KEY)
    })
  }
})

describe('openai-compatible: agent loop end to end', () => {
  const lookup = defineTool({ name: 'lookup', description: 'Looks a word up.', parameters: t.type({ word: t.string }), execute: ({ word }) => `${word}: a small bird` })
  const model = modelSpec('openrouter', 'deepseek/deepseek-r1')
  const toolTurn = sseBody([
    { data: { id: 'gen-1', model: 'deepseek/deepseek-r1', choices: [{ index: 0, delta: { role: 'assistant', content: '', reasoning: 'Look it up.' }, finish_reason: null }] } },
    { data: { id: 'gen-1', model: 'deepseek/deepseek-r1', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_wren', type: 'function', function: { name: 'lookup', arguments: '{"word":' } }] }, finish_reason: null }] } },
    { data: { id: 'gen-1', model: 'deepseek/deepseek-r1', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '"wren"}' } }] }, finish_reason: null }] } },
    { data: { id: 'gen-1', model: 'deepseek/deepseek-r1', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 50, completion_tokens: 12, total_tokens: 62 } } },
    { data: '[DONE]' },
  ])
  const answer = sseBody([
    { data: { id: 'gen-2', model: 'deepseek/deepseek-r1', choices: [{ index: 0, delta: { role: 'assistant', content: 'A wren is a small bird.' }, finish_reason: 'stop' }], usage: { prompt_tokens: 80, completion_tokens: 7, total_tokens: 87 } } },
    { data: '[DONE]' },
  ])

  it('runs a tool round trip; the second request carries the reasoning back, the call and its result', async () => {
    const s = await serve([{ chunks: splitBytes(toolTurn, 50) }, { chunks: splitBytes(answer, 50) }])
    const events = await lastValueFrom(
      agentLoop(userMessage('What is a wren?'), { systemPrompt: 'Use tools.', messages: [], tools: [lookup] }, { model, streamFn: openaiCompatible({ server: 'openrouter', baseUrl: s.url, apiKey: KEY }), retry: false }).pipe(
        toArray(),
      ),
    )
    const transcript = transcriptFromEvents(events)
    expect(transcript.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant'])
    expect(transcript[3]).toMatchObject({ stopReason: 'stop', content: [{ type: 'text', text: 'A wren is a small bird.' }] })
    const second = s.requests[1]!.body as { messages: unknown[]; reasoning?: unknown }
    expect(second.messages).toEqual([
      { role: 'system', content: 'Use tools.' },
      { role: 'user', content: 'What is a wren?' },
      { role: 'assistant', content: null, reasoning: 'Look it up.', tool_calls: [{ id: 'call_wren', type: 'function', function: { name: 'lookup', arguments: '{"word":"wren"}' } }] },
      { role: 'tool', tool_call_id: 'call_wren', content: 'wren: a small bird' },
    ])
    expect(events.at(-1)).toMatchObject({ type: 'agentEnd', result: { stopReason: 'stop', usage: { input: 130, output: 19, total: 149 } } })
  })
})
