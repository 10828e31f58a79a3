/**
 * The OpenAI Chat Completions adapter, offline: decoding hand-written
 * streams in the API's wire format (text, parallel and late-announced tool
 * calls, refusals, usage with cached and reasoning tokens, every finish
 * reason, error payloads, malformed and truncated bodies, any network
 * split), building request bodies (system/developer prompt, images, tools,
 * tool results, thinking levels, another provider's transcript), HTTP error
 * classification, and agent-loop runs against a local replay server.
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
import { imageBase64, imageUrl, text } from '../../src/types/content.js'
import type { AgentEvent } from '../../src/types/event.js'
import { assistantMessage, userMessage, type AssistantMessage, type LlmMessage, type ToolResultMessage } from '../../src/types/message.js'
import { modelSpec, type ModelSpec, type ThinkingLevel } from '../../src/types/model.js'
import { ProviderError } from '../../src/types/provider-error.js'
import type { LlmRequest } from '../../src/types/request.js'
import { emptyUsage } from '../../src/types/usage.js'
import { decodeWire } from '../../src/providers/protocol.js'
import { openaiChat, openaiChatProtocol } from '../../src/providers/openai-chat.js'
import { OpenAIChatDecoder } from '../../src/providers/openai-chat-decoder.js'
import { openaiChatRequestBody } from '../../src/providers/openai-chat-request.js'
import { openaiUsage } from '../../src/providers/openai-chat-stop-usage.js'
import { sseBody, splitBytes, replayServerPerTest } from './replay-server.js'

const KEY = 'sk-proj-test-SECRET-9f8e7d6c5b4a'
const fixture = (name: string): string => readFileSync(fileURLToPath(new URL(`../fixtures/openai-chat/${name}`, import.meta.url)), 'utf8')

const gpt41 = modelSpec('openai', 'gpt-4.1-mini', { cost: { input: 0.4, output: 1.6, cacheRead: 0.1, cacheWrite: 0 } })
const o4mini = modelSpec('openai', 'o4-mini', { cost: { input: 1.1, output: 4.4, cacheRead: 0.275, cacheWrite: 0 } })

/** Decodes a wire body cut into `size`-byte network chunks. Throws what the stream would error with. */
const decode = (wire: string, size = 5): ProviderChunk[] => decodeWire(new OpenAIChatDecoder(), splitBytes(wire, size))

const fold = (chunks: readonly ProviderChunk[], model: ModelSpec = gpt41): AssistantMessage => foldChunks(chunks, model)

/** A Chat Completions chunk in the API's shape. */
function chunk(delta: Record<string, unknown>, finish: string | null = null, more: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'chatcmpl-unit',
    object: 'chat.completion.chunk',
    created: 1767225600,
    model: 'gpt-4.1-mini-2025-04-14',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...more,
  }
}
const usageChunk = (usage: Record<string, unknown>): Record<string, unknown> => ({ id: 'chatcmpl-unit', object: 'chat.completion.chunk', created: 1767225600, model: 'gpt-4.1-mini', choices: [], usage })
const wire = (payloads: readonly unknown[], done = true): string => sseBody([...payloads.map((data) => ({ data })), ...(done ? [{ data: '[DONE]' }] : [])])

/** Checks the invariants of usage.ts on a final message. */
function expectUsageInvariants(message: AssistantMessage): void {
  const u = message.usage
  expect(u.reasoning).toBeLessThanOrEqual(u.output)
  expect(u.total).toBe(u.input + u.output + u.cacheRead + u.cacheWrite)
}

describe('openai chat: decoding', () => {
  it('streams text (multi-byte characters cut across network chunks), then stop, then usage with cached tokens outside input', () => {
    const chunks = decode(fixture('text.sse'), 3)
    expect(chunks[0]).toEqual({ type: 'messageStart', id: 'chatcmpl-Cq1rxTextHandWritten01', model: 'gpt-4.1-mini-2025-04-14' })
    expect(chunks.slice(-2)).toEqual([
      { type: 'stop', reason: 'endTurn' },
      { type: 'usage', input: 210, output: 15, reasoning: 0, cacheRead: 1024, total: 1249 },
    ])
    const message = fold(chunks)
    expect(message).toMatchObject({ stopReason: 'stop', responseId: 'chatcmpl-Cq1rxTextHandWritten01', model: 'gpt-4.1-mini-2025-04-14' })
    expect(message.content).toEqual([{ type: 'text', text: 'Bonjour! Voilà le café ☕ — 日本語も 🎉.' }])
    expect(message.usage).toEqual({ ...emptyUsage, input: 210, output: 15, cacheRead: 1024, total: 1249 })
    expectUsageInvariants(message)
    // Priced from the model's rates: cached tokens at the cache-read rate.
    expect(message.cost.input).toBeCloseTo((210 * 0.4) / 1e6, 12)
    expect(message.cost.cacheRead).toBeCloseTo((1024 * 0.1) / 1e6, 12)
    expect(message.cost.output).toBeCloseTo((15 * 1.6) / 1e6, 12)
    expect(message.cost.total).toBeCloseTo(message.cost.input + message.cost.output + message.cost.cacheRead, 12)
  })

  it('decodes several tool calls in one turn, keyed by index, with streamed argument fragments', () => {
    const chunks = decode(fixture('parallel-tools.sse'), 4)
    const starts = chunks.filter((c) => c.type === 'toolUseStart')
    expect(starts).toEqual([
      { type: 'toolUseStart', id: 'call_Wq3kPz8dYbN1sLmR4tVx0aJc', name: 'get_weather' },
      { type: 'toolUseStart', id: 'call_Hh72nQe0vUo9TgKc3ZyLbM5s', name: 'get_time' },
      { type: 'toolUseStart', id: 'call_Zr0ePq4sXwT6mNbV2cJdLk8h', name: 'list_alarms' },
    ])
    // Fragments stream as they come, before the turn ends.
    const firstEnd = chunks.findIndex((c) => c.type === 'toolUseEnd')
    expect(chunks.slice(0, firstEnd).filter((c) => c.type === 'toolUseArgsDelta')).toHaveLength(5)
    const message = fold(chunks)
    expect(message.stopReason).toBe('toolUse')
    expect(message.content).toEqual([
      { type: 'toolCall', id: 'call_Wq3kPz8dYbN1sLmR4tVx0aJc', name: 'get_weather', arguments: { location: 'Paris, Île-de-France' } },
      { type: 'toolCall', id: 'call_Hh72nQe0vUo9TgKc3ZyLbM5s', name: 'get_time', arguments: { tz: 'Europe/Paris' } },
      { type: 'toolCall', id: 'call_Zr0ePq4sXwT6mNbV2cJdLk8h', name: 'list_alarms', arguments: {} },
    ])
    expect(message.usage).toMatchObject({ input: 212, output: 61, total: 273 })
    expectUsageInvariants(message)
  })

  it('counts reasoning tokens inside output, never twice, and prices them as output', () => {
    const message = fold(decode(fixture('reasoning-tool.sse')), o4mini)
    expect(message.content).toEqual([
      { type: 'text', text: 'Let me check the file.' },
      { type: 'toolCall', id: 'call_P0aLm3Xq9RtY6uWe1sDfGh2J', name: 'read_file', arguments: { path: 'src/main.ts' } },
    ])
    expect(message.usage).toEqual({ ...emptyUsage, input: 1024, cacheRead: 4096, output: 850, reasoning: 768, total: 5970 })
    expectUsageInvariants(message)
    expect(message.cost.output).toBeCloseTo((850 * 4.4) / 1e6, 12)
    expect(message.cost.total).toBeCloseTo((1024 * 1.1 + 4096 * 0.275 + 850 * 4.4) / 1e6, 12)
  })

  it('turns refusal deltas into text with stop reason refusal', () => {
    const message = fold(decode(fixture('refusal.sse')))
    expect(message.content).toEqual([{ type: 'text', text: "I'm sorry, I can't help with that." }])
    expect(message.stopReason).toBe('refusal')
  })

  const reasons: [string, string, boolean][] = [
    ['stop', 'stop', false],
    ['length', 'length', false],
    ['tool_calls', 'toolUse', true],
    ['function_call', 'toolUse', true],
    ['content_filter', 'refusal', false],
    // Servers that say "stop" after calling tools still asked for them.
    ['stop', 'toolUse', true],
  ]
  for (const [finish, stopReason, withTool] of reasons) {
    it(`finish_reason ${finish}${withTool ? ' after a tool call' : ''} → ${stopReason}`, () => {
      const call =
        finish === 'function_call'
          ? chunk({ function_call: { name: 'ping', arguments: '{"n":1}' } })
          : chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'ping', arguments: '{"n":1}' } }] })
      const message = fold(decode(wire([chunk({ role: 'assistant', content: 'ok' }), ...(withTool ? [call] : []), chunk({}, finish)])))
      expect(message.stopReason).toBe(stopReason)
      if (withTool) expect(message.content[1]).toMatchObject({ type: 'toolCall', name: 'ping', arguments: { n: 1 } })
    })
  }

  it('buffers argument fragments that arrive before the id and name; ignores a repeated id and an empty name', () => {
    const chunks = decode(
      wire([
        chunk({ role: 'assistant', content: null }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"q":' } }] }),
        chunk({ tool_calls: [{ index: 0, id: 'call_late', type: 'function', function: { name: 'search' } }] }),
        chunk({ tool_calls: [{ index: 0, id: 'call_late', function: { name: '', arguments: '"rx"}' } }] }),
        chunk({}, 'tool_calls'),
      ]),
    )
    expect(chunks.filter((c) => c.type.startsWith('toolUse'))).toEqual([
      { type: 'toolUseStart', id: 'call_late', name: 'search' },
      { type: 'toolUseArgsDelta', id: 'call_late', fragment: '{"q":' },
      { type: 'toolUseArgsDelta', id: 'call_late', fragment: '"rx"}' },
      { type: 'toolUseEnd', id: 'call_late' },
    ])
    expect(fold(chunks).content).toEqual([{ type: 'toolCall', id: 'call_late', name: 'search', arguments: { q: 'rx' } }])
  })

  it('keeps calls a server numbers alike (a new id at a used index), and one whose id never came', () => {
    const message = fold(
      decode(
        wire([
          chunk({ tool_calls: [{ index: 0, id: 'a1', function: { name: 'one', arguments: '{}' } }] }),
          chunk({ tool_calls: [{ index: 0, id: 'b2', function: { name: 'two', arguments: '{"x":2}' } }] }),
          chunk({ tool_calls: [{ index: 1, function: { name: 'three', arguments: '{"y":3}' } }] }),
          chunk({}, 'tool_calls'),
        ]),
      ),
    )
    expect(message.content).toEqual([
      { type: 'toolCall', id: 'a1', name: 'one', arguments: {} },
      { type: 'toolCall', id: 'b2', name: 'two', arguments: { x: 2 } },
      { type: 'toolCall', id: 'call_1', name: 'three', arguments: { y: 3 } },
    ])
  })

  it('keeps url-citation annotations as an extension block', () => {
    const annotation = { type: 'url_citation', url_citation: { url: 'https://example.org', title: 'Example', start_index: 0, end_index: 4 } }
    const message = fold(decode(wire([chunk({ role: 'assistant', content: 'Text' }), chunk({ annotations: [annotation] }), chunk({}, 'stop')])))
    expect(message.content).toEqual([
      { type: 'text', text: 'Text' },
      { type: 'extension', typeName: 'openai.annotations', data: { type: 'annotations', annotations: [annotation] } },
    ])
  })

  it('reads reasoning_content deltas as thinking', () => {
    const message = fold(decode(wire([chunk({ role: 'assistant', reasoning_content: 'Think' }), chunk({ reasoning_content: 'ing.' }), chunk({ content: 'Done.' }), chunk({}, 'stop')])))
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'Thinking.' },
      { type: 'text', text: 'Done.' },
    ])
  })

  it('usage: cached tokens leave input, reasoning stays inside output, the provider total is kept', () => {
    expect(openaiUsage({ prompt_tokens: 100, completion_tokens: 50, total_tokens: 150, prompt_tokens_details: { cached_tokens: 60 }, completion_tokens_details: { reasoning_tokens: 30 } })).toEqual({
      input: 40,
      cacheRead: 60,
      output: 50,
      reasoning: 30,
      total: 150,
    })
    // Without a total the fold computes it from the four kinds.
    const message = fold(decode(wire([chunk({ content: 'x' }), chunk({}, 'stop'), usageChunk({ prompt_tokens: 9, completion_tokens: 2 })])))
    expect(message.usage).toMatchObject({ input: 9, output: 2, total: 11 })
  })

  it('a mid-stream error payload fails the stream with its classification', () => {
    const server = wire([chunk({ content: 'Hal' }), { error: { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null } }], false)
    const error = (() => {
      try {
        decode(server)
      } catch (e) {
        return e
      }
    })()
    expect(error).toBeInstanceOf(ProviderError)
    expect((error as ProviderError).info).toMatchObject({ kind: 'server', retryable: true, code: 'server_error' })
    const overflow = wire([{ error: { message: "This model's maximum context length is 128000 tokens.", type: 'invalid_request_error', code: 'context_length_exceeded' } }], false)
    expect(() => decode(overflow)).toThrow(expect.objectContaining({ info: expect.objectContaining({ kind: 'contextOverflow', retryable: false }) }))
    const quota = wire([{ error: { message: 'You exceeded your current quota.', type: 'insufficient_quota', code: 'insufficient_quota' } }], false)
    expect(() => decode(quota)).toThrow(expect.objectContaining({ info: expect.objectContaining({ kind: 'rateLimit', retryable: false }) }))
  })

  it('a malformed JSON event is a protocol error', () => {
    const body = `${wire([chunk({ content: 'a' })], false)}data: {"id":"chatcmpl-unit","choices":[{"delta":{"content":"b"}\n\n`
    expect(() => decode(body)).toThrow(expect.objectContaining({ info: expect.objectContaining({ kind: 'protocol', retryable: false }) }))
    expect(() => decode(body)).toThrow(/not valid JSON/)
  })

  it('a body that ends before finish_reason and [DONE] is a truncated (network) error; after finish_reason it is complete', () => {
    const cut = wire([chunk({ role: 'assistant', content: 'Hel' }), chunk({ content: 'lo' })], false)
    expect(() => decode(cut)).toThrow(expect.objectContaining({ info: expect.objectContaining({ kind: 'network', retryable: true }) }))
    expect(() => decode('')).toThrow(/ended before it started/)
    const noDone = wire([chunk({ role: 'assistant', content: 'Hello' }), chunk({}, 'stop')], false)
    expect(fold(decode(noDone))).toMatchObject({ stopReason: 'stop', content: [{ type: 'text', text: 'Hello' }] })
  })

  it('any split of a recorded body into network chunks, inside UTF-8 characters too, decodes to the same chunks', () => {
    for (const name of ['text.sse', 'parallel-tools.sse']) {
      const bytes = new TextEncoder().encode(fixture(name))
      const whole = decodeWire(new OpenAIChatDecoder(), [bytes])
      fc.assert(
        fc.property(fc.uniqueArray(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 40 }), (cuts) => {
          const sorted = [...cuts].sort((a, b) => a - b)
          const parts = [0, ...sorted].map((start, i) => bytes.subarray(start, sorted[i] ?? bytes.length))
          expect(decodeWire(new OpenAIChatDecoder(), parts)).toEqual(whole)
        }),
        { numRuns: 150 },
      )
    }
  })
})

const request = (messages: readonly LlmMessage[], more: Partial<LlmRequest> = {}): LlmRequest => ({
  model: gpt41,
  systemPrompt: 'You are terse.',
  messages,
  tools: [],
  ...more,
})
const weatherTool = { name: 'get_weather', description: 'Weather for a place.', parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } }
const toolResult = (toolCallId: string, toolName: string, content: ToolResultMessage['content'], isError = false): ToolResultMessage => ({
  role: 'toolResult',
  toolCallId,
  toolName,
  content,
  isError,
  timestamp: 0,
})

describe('openai chat: request body', () => {
  it('streams with usage, the system prompt first, text-only user content as a string', () => {
    const body = openaiChatRequestBody(request([userMessage('Hi')]))
    expect(body).toEqual({
      model: 'gpt-4.1-mini',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Hi' },
      ],
    })
  })

  it('sends images as image_url parts: base64 as a data URL, URLs as they are', () => {
    const body = openaiChatRequestBody(request([userMessage([text('What is this?'), imageBase64('iVBORw0KGgo=', 'image/png'), imageUrl('https://example.org/cat.jpg')])]))
    expect((body['messages'] as unknown[])[1]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'What is this?' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        { type: 'image_url', image_url: { url: 'https://example.org/cat.jpg' } },
      ],
    })
  })

  it('sends tool definitions; strict only when asked', () => {
    const body = openaiChatRequestBody(request([userMessage('Weather?')], { tools: [weatherTool] }))
    expect(body['tools']).toEqual([{ type: 'function', function: { name: 'get_weather', description: 'Weather for a place.', parameters: weatherTool.parameters } }])
    const strict = openaiChatRequestBody(request([userMessage('Weather?')], { tools: [weatherTool] }), { strictTools: true })
    expect((strict['tools'] as { function: { strict?: boolean } }[])[0]!.function.strict).toBe(true)
  })

  it('replays tool calls with JSON-string arguments and one tool message per result; tool images follow in a user message', () => {
    const calls = assistantMessage(
      [
        text('Checking.'),
        { type: 'toolCall', id: 'call_a', name: 'get_weather', arguments: { location: 'Oslo' } },
        { type: 'toolCall', id: 'call_b', name: 'screenshot', arguments: {} },
      ],
      { provider: 'openai', model: 'gpt-4.1-mini', stopReason: 'toolUse' },
    )
    const body = openaiChatRequestBody(
      request([
        userMessage('Go'),
        calls,
        toolResult('call_a', 'get_weather', [text('-3 °C')]),
        toolResult('call_b', 'screenshot', [imageBase64('AAAA', 'image/jpeg')]),
        userMessage('Thanks'),
      ]),
    )
    expect((body['messages'] as unknown[]).slice(2)).toEqual([
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Oslo"}' } },
          { id: 'call_b', type: 'function', function: { name: 'screenshot', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: '-3 °C' },
      { role: 'tool', tool_call_id: 'call_b', content: '(an image returned by this tool call follows in the next user message)' },
      { role: 'user', content: [{ type: 'text', text: 'Images returned by the tool calls above:' }, { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,AAAA' } }] },
      { role: 'user', content: 'Thanks' },
    ])
  })

  it('an assistant message with only tool calls has null content', () => {
    const calls = assistantMessage([{ type: 'toolCall', id: 'call_x', name: 'get_weather', arguments: { location: 'Rome' } }], { provider: 'openai', model: 'gpt-4.1-mini', stopReason: 'toolUse' })
    const body = openaiChatRequestBody(request([userMessage('Go'), calls, toolResult('call_x', 'get_weather', [text('sunny')])]))
    expect((body['messages'] as { content: unknown }[])[2]!.content).toBeNull()
  })

  const levels: [ThinkingLevel, string | undefined][] = [
    ['off', undefined],
    ['minimal', 'minimal'],
    ['low', 'low'],
    ['medium', 'medium'],
    ['high', 'high'],
    ['xhigh', 'high'],
  ]
  for (const [level, effort] of levels) {
    it(`thinking level ${level} → reasoning_effort ${String(effort)}`, () => {
      const body = openaiChatRequestBody(request([userMessage('Hi')], { model: { ...o4mini, thinkingLevel: level } }))
      expect(body['reasoning_effort']).toBe(effort)
      // Reasoning models take the system prompt as a developer message.
      expect((body['messages'] as { role: string }[])[0]!.role).toBe('developer')
    })
  }

  it('maps options: max_completion_tokens, stop, temperature (not for reasoning models), prompt caching', () => {
    const options = { maxTokens: 512, stopSequences: ['END'], temperature: 0.2, sessionId: 'session-42', cacheRetention: 'long' as const }
    expect(openaiChatRequestBody(request([userMessage('Hi')], { options }))).toMatchObject({
      max_completion_tokens: 512,
      stop: ['END'],
      temperature: 0.2,
      prompt_cache_key: 'session-42',
      prompt_cache_retention: '24h',
    })
    const reasoning = openaiChatRequestBody(request([userMessage('Hi')], { model: { ...o4mini, thinkingLevel: 'low' }, options }))
    expect(reasoning['temperature']).toBeUndefined()
    expect(reasoning['max_completion_tokens']).toBe(512)
  })

  it("takes over another provider's transcript: foreign thinking as text, ids normalized in calls and results, unanswered calls settled", () => {
    const longId = `toolu_${'x'.repeat(60)}`
    const claude = assistantMessage(
      [
        { type: 'thinking', thinking: 'The user wants both.', signature: 'EqQBCkgIARABGAIiQ...' },
        { type: 'thinking', thinking: '', signature: 'opaque', redacted: true },
        text('On it.'),
        { type: 'toolCall', id: longId, name: 'get_weather', arguments: { location: 'Lima' } },
        { type: 'toolCall', id: 'toolu.01/odd', name: 'get_weather', arguments: { location: 'Quito' } },
      ],
      { provider: 'anthropic', model: 'claude-sonnet-4-5', stopReason: 'toolUse' },
    )
    const failed = assistantMessage([text('half an answ')], { provider: 'anthropic', model: 'claude-sonnet-4-5', stopReason: 'error' })
    const body = openaiChatRequestBody(request([userMessage('Weather in Lima and Quito?'), claude, toolResult(longId, 'get_weather', [text('18 °C')]), failed, userMessage('And?')]))
    const messages = body['messages'] as Record<string, unknown>[]
    const assistant = messages[2]!
    expect(assistant['content']).toBe('The user wants both.\n\nOn it.')
    const ids = (assistant['tool_calls'] as { id: string }[]).map((c) => c.id)
    expect(ids.every((id) => /^[a-zA-Z0-9_-]{1,40}$/.test(id))).toBe(true)
    expect(ids[0]).not.toBe(ids[1])
    expect(messages.slice(3)).toEqual([
      { role: 'tool', tool_call_id: ids[0], content: '18 °C' },
      { role: 'tool', tool_call_id: ids[1], content: expect.stringContaining('not executed') },
      { role: 'user', content: 'And?' },
    ])
  })

  it('a responseFormat becomes a json_schema response_format', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }
    const body = openaiChatRequestBody(request([userMessage('Hi')], { options: { responseFormat: { name: 'respond', schema } } }))
    expect(body['response_format']).toEqual({ type: 'json_schema', json_schema: { name: 'respond', schema, strict: false } })
  })

  it("drops the same model's own thinking (the API takes none back)", () => {
    const own = assistantMessage([{ type: 'thinking', thinking: 'hidden' }, text('Answer.')], { provider: 'openai', model: 'gpt-4.1-mini' })
    const body = openaiChatRequestBody(request([userMessage('Q'), own, userMessage('Q2')]))
    expect((body['messages'] as unknown[])[2]).toEqual({ role: 'assistant', content: 'Answer.' })
  })
})

const replay = replayServerPerTest()
const serve = replay.serve
const errorBody = (message: string, type: string, code: string | null): string => JSON.stringify({ error: { message, type, param: null, code } })

describe('openai chat: HTTP errors', () => {
  const cases: [number, Record<string, string>, string, string, boolean, number | undefined][] = [
    [401, {}, errorBody('Incorrect API key provided: sk-proj-***4a. You can find your API key at https://platform.openai.com/account/api-keys.', 'invalid_request_error', 'invalid_api_key'), 'auth', false, undefined],
    [429, {}, errorBody('Rate limit reached for gpt-4.1-mini in organization org-x on tokens per min (TPM): Limit 200000, Used 199000.', 'tokens', 'rate_limit_exceeded'), 'rateLimit', true, undefined],
    [429, { 'retry-after': '20' }, errorBody('Rate limit reached for requests', 'requests', 'rate_limit_exceeded'), 'rateLimit', true, 20_000],
    [429, { 'retry-after-ms': '1500' }, errorBody('Rate limit reached for requests', 'requests', 'rate_limit_exceeded'), 'rateLimit', true, 1500],
    [429, {}, errorBody('You exceeded your current quota, please check your plan and billing details.', 'insufficient_quota', 'insufficient_quota'), 'rateLimit', false, undefined],
    [500, {}, errorBody('The server had an error while processing your request. Sorry about that!', 'server_error', null), 'server', true, undefined],
    [503, {}, errorBody('The engine is currently overloaded, please try again later', 'server_error', null), 'overloaded', true, undefined],
    [400, {}, errorBody("This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens.", 'invalid_request_error', 'context_length_exceeded'), 'contextOverflow', false, undefined],
    [404, {}, errorBody('The model `gpt-9` does not exist or you do not have access to it.', 'invalid_request_error', 'model_not_found'), 'modelNotFound', false, undefined],
  ]
  for (const [status, headers, body, kind, retryable, retryAfterMs] of cases) {
    it(`HTTP ${status}${Object.keys(headers).length > 0 ? ` with ${Object.keys(headers)[0]}` : ''} (${JSON.parse(body).error.code ?? JSON.parse(body).error.type}) → ${kind}, retryable ${retryable}`, async () => {
      const s = await serve([{ status, headers: { 'content-type': 'application/json', ...headers }, chunks: [body] }])
      const streamFn = openaiChat({ baseUrl: `${s.url}/v1`, apiKey: KEY })
      const error = await firstValueFrom(streamFn(request([userMessage('Hi')]))).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(ProviderError)
      const info = (error as ProviderError).info
      expect(info).toMatchObject({ kind, retryable, status, provider: 'openai' })
      expect(info.retryAfterMs).toBe(retryAfterMs)
      expect(info.message).toContain(JSON.parse(body).error.message.slice(0, 20))
      expect(info.message).not.toContain(KEY)
      expect(s.requests[0]!.url).toBe('/v1/chat/completions')
    })
  }

  it('the key goes only into the Authorization header', async () => {
    const s = await serve([{ chunks: [fixture('text.sse')] }])
    await lastValueFrom(openaiChat({ baseUrl: `${s.url}/v1`, apiKey: KEY, organization: 'org-1' })(request([userMessage('Hi')])).pipe(toArray()))
    const recorded = s.requests[0]!
    expect(recorded.headers.authorization).toBe(`Bearer ${KEY}`)
    expect(recorded.headers['openai-organization']).toBe('org-1')
    expect(recorded.url).not.toContain(KEY)
    expect(JSON.stringify(recorded.body)).not.toContain(KEY)
  })

  it('without a key it fails at once, naming OPENAI_API_KEY', async () => {
    const error = await firstValueFrom(openaiChat({ env: {} })(request([userMessage('Hi')]))).catch((e: unknown) => e)
    expect((error as ProviderError).info).toMatchObject({ kind: 'auth', retryable: false })
    expect((error as ProviderError).message).toContain('OPENAI_API_KEY')
    expect(openaiChatProtocol.apiKeyEnv).toEqual(['OPENAI_API_KEY'])
  })
})

describe('openai chat: agent loop end to end', () => {
  const add = defineTool({ name: 'add', description: 'Adds two integers.', parameters: t.type({ a: t.Int, b: t.Int }), execute: ({ a, b }) => String(a + b) })
  const toolTurn = wire([
    chunk({ role: 'assistant', content: null }),
    chunk({ tool_calls: [{ index: 0, id: 'call_add_1', type: 'function', function: { name: 'add', arguments: '' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":2,' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: '"b":3}' } }] }),
    chunk({}, 'tool_calls'),
    usageChunk({ prompt_tokens: 80, completion_tokens: 20, total_tokens: 100 }),
  ])
  const answerTurn = wire([chunk({ role: 'assistant', content: '2 + 3 = ' }), chunk({ content: '5.' }), chunk({}, 'stop'), usageChunk({ prompt_tokens: 110, completion_tokens: 8, total_tokens: 118, prompt_tokens_details: { cached_tokens: 64 } })])

  it('runs a tool round trip; the second request carries the call and its result', async () => {
    const s = await serve([{ chunks: splitBytes(toolTurn, 64) }, { chunks: splitBytes(answerTurn, 64) }])
    const events: AgentEvent[] = await lastValueFrom(
      agentLoop(userMessage('What is 2 + 3?'), { systemPrompt: 'Use tools.', messages: [], tools: [add] }, { model: gpt41, streamFn: openaiChat({ baseUrl: `${s.url}/v1`, apiKey: KEY }), retry: false }).pipe(toArray()),
    )
    const end = events.at(-1)
    expect(end).toMatchObject({ type: 'agentEnd', result: { stopReason: 'stop' } })
    const transcript = transcriptFromEvents(events)
    expect(transcript.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant'])
    expect(transcript[3]).toMatchObject({ content: [{ type: 'text', text: '2 + 3 = 5.' }], usage: { input: 46, cacheRead: 64, output: 8, total: 118 } })
    expect(s.requests).toHaveLength(2)
    const second = s.requests[1]!.body as { messages: unknown[]; tools: unknown[] }
    expect(second.tools).toEqual([{ type: 'function', function: { name: 'add', description: 'Adds two integers.', parameters: expect.objectContaining({ type: 'object' }) } }])
    expect(second.messages).toEqual([
      { role: 'system', content: 'Use tools.' },
      { role: 'user', content: 'What is 2 + 3?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_add_1', type: 'function', function: { name: 'add', arguments: '{"a":2,"b":3}' } }] },
      { role: 'tool', tool_call_id: 'call_add_1', content: '5' },
    ])
  })

  it('an HTTP error ends the message with stopReason error and its kind; the transcript stays valid', async () => {
    const s = await serve([{ status: 500, headers: { 'content-type': 'application/json' }, chunks: [errorBody('The server had an error while processing your request.', 'server_error', null)] }])
    const events = await lastValueFrom(
      agentLoop(userMessage('Hi'), { systemPrompt: '', messages: [], tools: [] }, { model: gpt41, streamFn: openaiChat({ baseUrl: `${s.url}/v1`, apiKey: KEY }), retry: false }).pipe(toArray()),
    )
    const transcript = transcriptFromEvents(events)
    expect(transcript.map((m) => m.role)).toEqual(['user', 'assistant'])
    expect(transcript[1]).toMatchObject({ role: 'assistant', stopReason: 'error', errorKind: 'server' })
    expect((transcript[1] as AssistantMessage).errorMessage).not.toContain(KEY)
    expect(events.at(-1)).toMatchObject({ type: 'agentEnd', result: { stopReason: 'error' } })
  })
})
