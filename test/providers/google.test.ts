/**
 * The Gemini adapter, offline: hand-written wire fixtures (test/fixtures/google)
 * and small inline streams through the decoder and the runtime's fold,
 * request bodies, error classification, and whole agent runs against the
 * local replay server.
 */
import { readFileSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { firstValueFrom, lastValueFrom, toArray } from 'rxjs'
import { foldChunks } from '../../marbles/fold-chunks.js'
import { agentLoop } from '../../src/loop/agent-loop.js'
import { transcriptFromEvents } from '../../src/loop/transcript.js'
import { google, googleProtocol, type GoogleSettings } from '../../src/providers/google.js'
import { googleErrorFromBody } from '../../src/providers/google-errors.js'
import { googleRequestBody, SKIP_THOUGHT_SIGNATURE } from '../../src/providers/google-request.js'
import { googleThinkingConfig, sameGeminiModel } from '../../src/providers/google-thinking.js'
import { geminiSchema } from '../../src/providers/google-schema.js'
import { GoogleDecoder } from '../../src/providers/google-decoder.js'
import { decodeWire, WireReader } from '../../src/providers/protocol.js'
import type { ProviderChunk } from '../../src/types/chunk.js'
import { imageBase64, imageUrl, text } from '../../src/types/content.js'
import type { AgentEvent } from '../../src/types/event.js'
import { assistantMessage, userMessage, type AssistantMessage, type LlmMessage, type ToolResultMessage } from '../../src/types/message.js'
import { modelSpec, type ModelSpec, type ThinkingLevel } from '../../src/types/model.js'
import { ProviderError } from '../../src/types/provider-error.js'
import type { LlmRequest } from '../../src/types/request.js'
import { costOf } from '../../src/types/usage.js'
import { addTool } from '../helpers.js'
import { sseBody, splitBytes, startReplayServer, type ReplayServer, type ScriptedHttpResponse } from './replay-server.js'

const KEY = 'AIzaSy-test-secret-0123456789abcdef'
type Json = Record<string, unknown>

const fixture = (name: string): string => readFileSync(new URL(`../fixtures/google/${name}`, import.meta.url), 'utf8')
const fixtures = ['text.sse', 'thinking-tools.sse', 'streamed-args.sse', 'add-tool.sse', 'final-answer.sse'] as const

const rates = { input: 0.3, output: 2.5, cacheRead: 0.075, cacheWrite: 0 }
const flash = modelSpec('google', 'gemini-2.5-flash', { cost: rates })

const decode = (wire: string, size = 5): ProviderChunk[] => decodeWire(new GoogleDecoder('gemini-2.5-flash'), splitBytes(wire, size))

const fold = (chunks: readonly ProviderChunk[], model: ModelSpec = flash): AssistantMessage => foldChunks(chunks, model)

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
const wireOf = (events: readonly unknown[]): string => sseBody(events.map((data) => ({ data })))
const resp = (parts: readonly Json[], candidate: Json = {}, more: Json = {}): Json => ({
  candidates: [{ content: { role: 'model', parts }, index: 0, ...candidate }],
  modelVersion: 'gemini-2.5-flash',
  responseId: 'resp1',
  ...more,
})
const usageMeta = (prompt: number, candidates: number, more: Json = {}): Json => ({
  usageMetadata: { promptTokenCount: prompt, candidatesTokenCount: candidates, totalTokenCount: prompt + candidates, ...more },
})
const stop = (reason = 'STOP', candidate: Json = {}): Json => resp([{ text: '' }], { finishReason: reason, ...candidate }, usageMeta(10, 5))

function request(messages: readonly LlmMessage[], more: Partial<LlmRequest> = {}): LlmRequest {
  return { model: flash, systemPrompt: '', messages, tools: [], ...more }
}
const contentsOf = (r: LlmRequest): Json[] => googleRequestBody(r)['contents'] as Json[]

describe('google: decoding streams', () => {
  it('text: deltas across multi-byte characters and CRLF events, usage excluding cached tokens, the closing signature, cost', () => {
    const chunks = decode(fixture('text.sse'), 3)
    expect(chunks).toEqual([
      { type: 'messageStart', id: 'rxTextResp01', model: 'gemini-2.5-flash' },
      { type: 'textDelta', text: 'Grüße aus Zürich — ' },
      // Once early, when the prompt is known; the rest at the end.
      { type: 'usage', input: 216, cacheRead: 1024 },
      { type: 'textDelta', text: 'naïve café ☕ and 日本語 🎌.' },
      { type: 'thinkingSignature', signature: 'CiQBjz1rX2Zha2UtdGV4dC1zaWduYXR1cmUtZm9yLXRlc3Rz' },
      { type: 'stop', reason: 'endTurn' },
      { type: 'usage', output: 18, total: 1258 },
    ])
    const message = fold(chunks)
    expect(message.content).toEqual([
      { type: 'text', text: 'Grüße aus Zürich — naïve café ☕ and 日本語 🎌.' },
      { type: 'thinking', thinking: '', signature: 'CiQBjz1rX2Zha2UtdGV4dC1zaWduYXR1cmUtZm9yLXRlc3Rz' },
    ])
    expect(message).toMatchObject({ stopReason: 'stop', responseId: 'rxTextResp01', model: 'gemini-2.5-flash', provider: 'google' })
    // promptTokenCount (1240) includes the 1024 cached tokens: input is the rest.
    expect(message.usage).toEqual({ input: 216, output: 18, reasoning: 0, cacheRead: 1024, cacheWrite: 0, total: 1258, extra: {} })
    expect(message.usage.total).toBe(message.usage.input + message.usage.output + message.usage.cacheRead)
    expect(message.cost).toEqual(costOf(message.usage, rates))
    expect(message.cost.total).toBeCloseTo((216 * 0.3 + 18 * 2.5 + 1024 * 0.075) / 1e6, 12)
  })

  it('thought summaries and parallel calls: thinking deltas, the signature right after the call it came on, generated ids', () => {
    const chunks = decodeWire(new GoogleDecoder('gemini-3-flash-preview'), splitBytes(fixture('thinking-tools.sse'), 7))
    const paris = 'get_weather_rxThinkResp01_0'
    const tokyo = 'get_weather_rxThinkResp01_1'
    expect(chunks).toEqual([
      { type: 'messageStart', id: 'rxThinkResp01', model: 'gemini-3-flash-preview' },
      { type: 'thinkingDelta', text: '**Planning the lookup**\n\nThe user wants the weather in two cities' },
      { type: 'usage', input: 88 },
      { type: 'thinkingDelta', text: ' — Paris and Tōkyō; one call each.' },
      { type: 'toolUseStart', id: paris, name: 'get_weather' },
      { type: 'toolUseArgsDelta', id: paris, fragment: '{"city":"Paris","unit":"celsius"}' },
      { type: 'toolUseEnd', id: paris },
      { type: 'thinkingSignature', signature: 'EiYKJGZha2Utc2lnbmF0dXJlLWZvci10aGUtZmlyc3QtY2FsbA==' },
      { type: 'toolUseStart', id: tokyo, name: 'get_weather' },
      { type: 'toolUseArgsDelta', id: tokyo, fragment: '{"city":"Tōkyō","unit":"celsius"}' },
      { type: 'toolUseEnd', id: tokyo },
      { type: 'stop', reason: 'toolUse' },
      { type: 'usage', output: 142, reasoning: 112, total: 230 },
    ])
    const message = fold(chunks, modelSpec('google', 'gemini-3-flash-preview', { cost: rates }))
    expect(message.content).toEqual([
      { type: 'thinking', thinking: '**Planning the lookup**\n\nThe user wants the weather in two cities — Paris and Tōkyō; one call each.' },
      { type: 'toolCall', id: paris, name: 'get_weather', arguments: { city: 'Paris', unit: 'celsius' } },
      { type: 'thinking', thinking: '', signature: 'EiYKJGZha2Utc2lnbmF0dXJlLWZvci10aGUtZmlyc3QtY2FsbA==' },
      { type: 'toolCall', id: tokyo, name: 'get_weather', arguments: { city: 'Tōkyō', unit: 'celsius' } },
    ])
    expect(message.stopReason).toBe('toolUse')
    // Thoughts are outside candidatesTokenCount: output adds them, and reasoning is part of output.
    expect(message.usage).toMatchObject({ input: 88, output: 142, reasoning: 112, cacheRead: 0, total: 230 })
    expect(message.usage.reasoning).toBeLessThanOrEqual(message.usage.output)
    expect(message.cost.output).toBeCloseTo((142 * 2.5) / 1e6, 12)
  })

  it('streamed arguments (partialArgs): the call starts at once, strings continue, paths build nested objects and arrays', () => {
    const chunks = decodeWire(new GoogleDecoder('gemini-3.1-pro-preview'), splitBytes(fixture('streamed-args.sse'), 11))
    const types = chunks.map((c) => c.type)
    // The call is announced before its arguments arrive, and gets them as one fragment when complete.
    expect(types.indexOf('toolUseStart')).toBeLessThan(types.indexOf('toolUseArgsDelta'))
    expect(types.filter((t) => t === 'toolUseArgsDelta')).toHaveLength(2)
    const message = fold(chunks, modelSpec('google', 'gemini-3.1-pro-preview'))
    expect(message.content).toEqual([
      { type: 'text', text: 'Je vérifie l’agenda… ' },
      {
        type: 'toolCall',
        id: 'create_event_rxStreamResp01_0',
        name: 'create_event',
        arguments: {
          title: 'Réunion d’équipe 🚀',
          attendees: [{ email: 'ana@example.com' }, { email: 'bo@example.com', optional: true }],
          durationMinutes: 45,
          room: { 'building name': null },
        },
      },
      { type: 'thinking', thinking: '', signature: 'CiMBjz1rX3N0cmVhbWVkLWNhbGwtc2lnbmF0dXJl' },
      // Its terminal part never came: the finish reason ends it.
      { type: 'toolCall', id: 'notify_rxStreamResp01_1', name: 'notify', arguments: { channel: '#ops', tags: ['q3', 'planning'] } },
    ])
    expect(message.stopReason).toBe('toolUse')
    expect(message.usage).toMatchObject({ input: 140, output: 251, reasoning: 190, total: 391 })
  })

  it('a partial without willContinue is the call’s last; an empty terminal part after it is ignored', () => {
    const wire = wireOf([
      resp([{ functionCall: { name: 'f', willContinue: true } }]),
      resp([{ functionCall: { partialArgs: [{ jsonPath: '$.x', numberValue: 1 }] } }]),
      resp([{ functionCall: {} }]),
      resp([{ text: 'after' }]),
      stop(),
    ])
    const message = fold(decode(wire))
    expect(message.content).toEqual([
      { type: 'toolCall', id: 'f_resp1_0', name: 'f', arguments: { x: 1 } },
      { type: 'text', text: 'after' },
    ])
  })

  it('ids: functionCall.id is used when given; generated ones are unique in the response and the same on every decode', () => {
    const wire = wireOf([
      resp([{ functionCall: { name: 'a', args: {}, id: 'call-given-1' } }, { functionCall: { name: 'a', args: {} } }, { functionCall: { name: 'a' } }]),
      stop(),
    ])
    const ids = decode(wire).flatMap((c) => (c.type === 'toolUseStart' ? [c.id] : []))
    expect(ids).toEqual(['call-given-1', 'a_resp1_1', 'a_resp1_2'])
    expect(decode(wire, 1).flatMap((c) => (c.type === 'toolUseStart' ? [c.id] : []))).toEqual(ids)
    // A call without args has no arguments.
    expect(fold(decode(wire)).content.at(-1)).toMatchObject({ type: 'toolCall', arguments: {} })
  })

  const finishes: [string, string, boolean][] = [
    ['STOP', 'stop', false],
    ['MAX_TOKENS', 'length', false],
    ['SAFETY', 'refusal', true],
    ['RECITATION', 'refusal', true],
    ['BLOCKLIST', 'refusal', true],
    ['PROHIBITED_CONTENT', 'refusal', true],
    ['SPII', 'refusal', true],
    ['IMAGE_SAFETY', 'refusal', true],
    ['OTHER', 'stop', true],
    ['LANGUAGE', 'stop', true],
  ]
  for (const [reason, stopReason, noted] of finishes) {
    it(`finishReason ${reason} → stopReason ${stopReason}${noted ? ', the reason kept as an extension block' : ''}`, () => {
      const safetyRatings = [{ category: 'HARM_CATEGORY_DANGEROUS_CONTENT', probability: 'HIGH', blocked: true }]
      const message = fold(decode(wireOf([resp([{ text: 'Some text' }]), stop(reason, { finishMessage: `stopped: ${reason}`, safetyRatings })])))
      expect(message.stopReason).toBe(stopReason)
      expect(message.errorMessage).toBeUndefined()
      expect(message.content[0]).toEqual({ type: 'text', text: 'Some text' })
      const ext = message.content.find((b) => b.type === 'extension')
      if (noted) expect(ext).toEqual({ type: 'extension', typeName: 'google.finishReason', data: { finishReason: reason, finishMessage: `stopped: ${reason}`, safetyRatings } })
      else expect(ext).toBeUndefined()
    })
  }

  it('STOP after a function call is toolUse; MAX_TOKENS stays maxTokens', () => {
    const call = resp([{ functionCall: { name: 'f', args: { a: 1 } } }])
    expect(fold(decode(wireOf([call, stop('STOP')]))).stopReason).toBe('toolUse')
    expect(fold(decode(wireOf([call, stop('MAX_TOKENS')]))).stopReason).toBe('length')
  })

  it('a prompt blocked before any candidate is a refusal, with the feedback kept', () => {
    const feedback = { blockReason: 'PROHIBITED_CONTENT', safetyRatings: [] }
    const chunks = decode(wireOf([{ promptFeedback: feedback, usageMetadata: { promptTokenCount: 7, totalTokenCount: 7 }, modelVersion: 'gemini-2.5-flash', responseId: 'blocked1' }]))
    expect(chunks).toEqual([
      { type: 'messageStart', id: 'blocked1', model: 'gemini-2.5-flash' },
      { type: 'extension', typeName: 'google.promptFeedback', data: feedback },
      { type: 'stop', reason: 'refusal' },
      { type: 'usage', input: 7, total: 7 },
    ])
    expect(fold(chunks)).toMatchObject({ stopReason: 'refusal', content: [{ type: 'extension', typeName: 'google.promptFeedback' }] })
  })

  const failures: [string, string][] = [
    ['MALFORMED_FUNCTION_CALL', 'protocol'],
    ['UNEXPECTED_TOOL_CALL', 'protocol'],
    ['MISSING_THOUGHT_SIGNATURE', 'invalidRequest'],
  ]
  for (const [reason, kind] of failures) {
    it(`finishReason ${reason} fails the stream (${kind}) with its finishMessage, after the event's content and usage`, () => {
      const wire = wireOf([resp([{ text: 'Calling' }]), resp([], { finishReason: reason, finishMessage: `Malformed function call: print(default_api.f(x=` }, usageMeta(30, 4))])
      const reader = new WireReader(new GoogleDecoder('gemini-2.5-flash'))
      const chunks = reader.push(wire)
      expect(chunks.at(-1)).toEqual({ type: 'usage', input: 30, output: 4, total: 34 })
      expect(chunks.some((c) => c.type === 'stop')).toBe(false)
      const error = decodeError(wire)
      expect(error.info).toMatchObject({ kind, retryable: false, code: reason, provider: 'google' })
      expect(error.message).toContain('Malformed function call: print(default_api.f(x=')
    })
  }

  it('usage: built-in tool prompt tokens count as input, cached ones as cache reads; the chunks sum to the final report', () => {
    const meta = (candidates: number): Json => ({
      usageMetadata: { promptTokenCount: 500, cachedContentTokenCount: 300, toolUsePromptTokenCount: 40, candidatesTokenCount: candidates, thoughtsTokenCount: 60, totalTokenCount: 600 + candidates },
    })
    const chunks = decode(wireOf([resp([{ text: 'a' }], {}, meta(2)), resp([{ text: 'b' }], {}, meta(9)), resp([{ text: '' }], { finishReason: 'STOP' }, meta(12))]))
    const usages = chunks.filter((c) => c.type === 'usage')
    expect(usages).toEqual([
      { type: 'usage', input: 240, cacheRead: 300 },
      { type: 'usage', output: 72, reasoning: 60, total: 612 },
    ])
    expect(fold(chunks).usage).toEqual({ input: 240, output: 72, reasoning: 60, cacheRead: 300, cacheWrite: 0, total: 612, extra: {} })
  })

  it('parts without a runtime block (code execution, unknown kinds) and grounding metadata become extension blocks; the parts replay to Gemini', () => {
    const grounding = { webSearchQueries: ['one plus one'] }
    const wire = wireOf([
      resp([{ executableCode: { language: 'PYTHON', code: 'print(1 + 1)' } }, { codeExecutionResult: { outcome: 'OUTCOME_OK', output: '2\n' } }, { futurePart: { x: 1 } }]),
      resp([{ text: 'It is 2.' }], { finishReason: 'STOP', groundingMetadata: grounding }, usageMeta(20, 10)),
    ])
    const message = fold(decode(wire))
    expect(message.content).toEqual([
      { type: 'extension', typeName: 'google.part.executableCode', data: { executableCode: { language: 'PYTHON', code: 'print(1 + 1)' } } },
      { type: 'extension', typeName: 'google.part.codeExecutionResult', data: { codeExecutionResult: { outcome: 'OUTCOME_OK', output: '2\n' } } },
      { type: 'extension', typeName: 'google.part.futurePart', data: { futurePart: { x: 1 } } },
      { type: 'text', text: 'It is 2.' },
      { type: 'extension', typeName: 'google.groundingMetadata', data: grounding },
    ])
    const contents = contentsOf(request([userMessage('1+1?'), message, userMessage('thanks')]))
    expect(contents[1]).toEqual({
      role: 'model',
      parts: [
        { executableCode: { language: 'PYTHON', code: 'print(1 + 1)' } },
        { codeExecutionResult: { outcome: 'OUTCOME_OK', output: '2\n' } },
        { futurePart: { x: 1 } },
        { text: 'It is 2.' },
      ],
    })
    // Another provider's model gets only the text.
    const foreign = contentsOf(request([userMessage('1+1?'), { ...message, provider: 'anthropic', model: 'claude-sonnet-4-5' }]))
    expect(foreign[1]).toEqual({ role: 'model', parts: [{ text: 'It is 2.' }] })
  })

  it('an empty text part with a signature after a call keeps its own (empty) text block, so replay puts each signature back in place', () => {
    const wire = wireOf([resp([{ functionCall: { name: 'f', args: {} }, thoughtSignature: 'sig-call' }]), resp([{ text: '', thoughtSignature: 'sig-text' }], { finishReason: 'STOP' }, usageMeta(5, 5))])
    const message = fold(decode(wire))
    expect(message.content).toEqual([
      { type: 'toolCall', id: 'f_resp1_0', name: 'f', arguments: {} },
      { type: 'thinking', thinking: '', signature: 'sig-call' },
      { type: 'text', text: '' },
      { type: 'thinking', thinking: '', signature: 'sig-text' },
    ])
    const model = contentsOf(request([userMessage('go'), message]))[1]
    expect(model).toEqual({
      role: 'model',
      parts: [{ functionCall: { id: 'f_resp1_0', name: 'f', args: {} }, thoughtSignature: 'sig-call' }, { text: '', thoughtSignature: 'sig-text' }],
    })
  })

  it('a signature on a thought part closes that thinking block and replays on the thought', () => {
    const wire = wireOf([resp([{ text: 'Thinking…', thought: true }]), resp([{ text: '', thought: true, thoughtSignature: 'sig-thought' }, { text: 'Answer' }], { finishReason: 'STOP' }, usageMeta(5, 5))])
    const message = fold(decode(wire))
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'Thinking…', signature: 'sig-thought' },
      { type: 'text', text: 'Answer' },
    ])
    expect(contentsOf(request([userMessage('q'), message]))[1]).toEqual({
      role: 'model',
      parts: [{ text: 'Thinking…', thought: true, thoughtSignature: 'sig-thought' }, { text: 'Answer' }],
    })
  })
})

describe('google: stream errors', () => {
  const errors: [string, number, string, string, boolean, number | undefined][] = [
    ['RESOURCE_EXHAUSTED', 429, 'Quota exceeded for metric generate_content_input_tokens', 'rateLimit', true, 7000],
    ['UNAVAILABLE', 503, 'The model is overloaded. Please try again later.', 'overloaded', true, undefined],
    ['INTERNAL', 500, 'An internal error has occurred.', 'server', true, undefined],
  ]
  for (const [status, code, message, kind, retryable, delay] of errors) {
    it(`an error object mid-stream with status ${status} → ${kind}`, () => {
      const details = delay === undefined ? [] : [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${delay / 1000}s` }]
      const error = decodeError(wireOf([resp([{ text: 'partial' }]), { error: { code, message, status, details } }]))
      expect(error.info).toMatchObject({ kind, retryable, code: status, provider: 'google' })
      expect(error.info.retryAfterMs).toBe(delay)
      expect(error.message).toContain(message)
    })
  }

  it('malformed JSON in an event → protocol error, not retried', () => {
    const error = decodeError(`${wireOf([resp([{ text: 'ok' }])])}data: {"candidates":[{"content":\n\n`)
    expect(error.info).toMatchObject({ kind: 'protocol', retryable: false })
    expect(error.message).toContain('not valid JSON')
  })

  it('a body that ends before any finish reason → network error (retryable); so does an empty body', () => {
    const cut = decodeError(wireOf([resp([{ text: 'Half an ans' }], {}, usageMeta(10, 3))]))
    expect(cut.info).toMatchObject({ kind: 'network', retryable: true })
    expect(cut.message).toContain('finish reason')
    expect(decodeError('').info).toMatchObject({ kind: 'network', retryable: true })
  })

  it('content after a finish reason is kept and the last finish reason wins; an unreadable jsonPath → protocol error', () => {
    const late = fold(decode(wireOf([resp([{ text: 'early' }]), stop(), resp([{ text: ' late' }]), stop('MAX_TOKENS')])))
    expect(late).toMatchObject({ stopReason: 'length', content: [{ type: 'text', text: 'early late' }] })
    const bad = wireOf([resp([{ functionCall: { name: 'f', willContinue: true } }]), resp([{ functionCall: { partialArgs: [{ jsonPath: 'x..y', stringValue: 'v' }] } }]), stop()])
    expect(decodeError(bad).message).toContain('jsonPath')
  })

  it('a usage-only event after the finish reason still counts', () => {
    const chunks = decode(wireOf([stop(), { usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 8, totalTokenCount: 18 }, responseId: 'resp1' }]))
    expect(fold(chunks).usage).toMatchObject({ input: 10, output: 8, total: 18 })
  })
})

describe('google: split invariance', () => {
  it('any split of a recorded stream into network chunks, even inside multi-byte characters, decodes to the same chunks', () => {
    const recorded = fixtures.map((name) => new TextEncoder().encode(fixture(name)))
    const whole = recorded.map((bytes) => decodeWire(new GoogleDecoder('m'), [bytes]))
    fc.assert(
      fc.property(fc.nat({ max: recorded.length - 1 }), fc.array(fc.nat(), { maxLength: 40 }), (k, cuts) => {
        const bytes = recorded[k]!
        const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)
        const parts: Uint8Array[] = []
        let at = 0
        for (const p of [...points, bytes.length]) {
          parts.push(bytes.subarray(at, p))
          at = p
        }
        expect(decodeWire(new GoogleDecoder('m'), parts)).toEqual(whole[k])
      }),
      { numRuns: 150 },
    )
    // Byte by byte: every multi-byte character is cut somewhere.
    recorded.forEach((bytes, k) => expect(decodeWire(new GoogleDecoder('m'), splitBytes(new TextDecoder().decode(bytes), 1))).toEqual(whole[k]))
  })
})

describe('google: request body', () => {
  it('system prompt, user text and images (base64, URL, data URL), generation options, safety settings', () => {
    const r = request(
      [
        userMessage([
          text('What is in these?'),
          imageBase64('iVBORw0KGgo=', 'image/png'),
          imageUrl('https://example.com/cat.JPG?size=large'),
          imageUrl('https://example.com/photo', 'image/webp'),
          imageUrl('https://example.com/unknown'),
          imageUrl('data:image/gif;base64,R0lGODlh'),
          text(''),
        ]),
      ],
      { systemPrompt: 'Be brief.', options: { temperature: 0.2, maxTokens: 1000, stopSequences: ['END'] } },
    )
    const body = googleRequestBody(r, { safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }] })
    expect(body).toEqual({
      contents: [
        {
          role: 'user',
          parts: [
            { text: 'What is in these?' },
            { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
            { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/cat.JPG?size=large' } },
            { fileData: { mimeType: 'image/webp', fileUri: 'https://example.com/photo' } },
            { fileData: { fileUri: 'https://example.com/unknown' } },
            { inlineData: { mimeType: 'image/gif', data: 'R0lGODlh' } },
          ],
        },
      ],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      // gemini-2.5-flash with thinking off: budget 0.
      generationConfig: { temperature: 0.2, maxOutputTokens: 1000, stopSequences: ['END'], thinkingConfig: { thinkingBudget: 0 } },
      safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
    })
    // The model's output cap applies when the call sets none.
    expect(googleRequestBody(request([userMessage('hi')], { model: { ...flash, maxOutputTokens: 2048 } }))['generationConfig']).toMatchObject({ maxOutputTokens: 2048 })
  })

  it('tool declarations: JSON Schema converted to Gemini’s subset; a tool without parameters sends none; jsonSchema mode sends it as is', () => {
    const parameters = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      additionalProperties: false,
      $defs: { Point: { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' } }, required: ['x', 'y'], additionalProperties: false } },
      properties: {
        mode: { const: 'fast' },
        kind: { enum: ['a', 'b', null] },
        level: { type: 'integer', enum: [1, 2, 3], description: 'How hard' },
        when: { type: 'string', format: 'date-time' },
        site: { type: 'string', format: 'uri', minLength: 3 },
        note: { type: ['string', 'null'] },
        origin: { $ref: '#/$defs/Point', description: 'Start' },
        target: { anyOf: [{ $ref: '#/$defs/Point' }, { type: 'null' }] },
        shape: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'number' } }] },
        pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }] },
        both: { allOf: [{ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }, { properties: { b: { type: 'string' } } }] },
      },
      required: ['mode', 'origin', 'missing'],
    }
    const tools = [
      { name: 'plot', description: 'Plots.', parameters },
      { name: 'ping', description: 'Pings.', parameters: { type: 'object', properties: {}, additionalProperties: false } },
    ]
    const body = googleRequestBody(request([userMessage('hi')], { tools }))
    const point = { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' } }, required: ['x', 'y'] }
    expect(body['tools']).toEqual([
      {
        functionDeclarations: [
          {
            name: 'plot',
            description: 'Plots.',
            parameters: {
              type: 'object',
              properties: {
                mode: { type: 'string', enum: ['fast'] },
                kind: { type: 'string', enum: ['a', 'b'], nullable: true },
                level: { type: 'integer', description: 'How hard (one of 1, 2, 3)' },
                when: { type: 'string', format: 'date-time' },
                site: { type: 'string', minLength: 3 },
                note: { type: 'string', nullable: true },
                origin: { ...point, description: 'Start' },
                target: { ...point, nullable: true },
                shape: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'number' } }] },
                pair: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'number' }] } },
                both: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, required: ['a'] },
              },
              required: ['mode', 'origin'],
            },
          },
          { name: 'ping', description: 'Pings.' },
        ],
      },
    ])
    const raw = googleRequestBody(request([userMessage('hi')], { tools }), { schemaMode: 'jsonSchema' })
    const declaration = ((raw['tools'] as Json[])[0]!['functionDeclarations'] as Json[])[0]!
    const { $schema: _, ...withoutSchema } = parameters
    expect(declaration).toEqual({ name: 'plot', description: 'Plots.', parametersJsonSchema: withoutSchema })
  })

  it('a recursive $ref does not loop', () => {
    const tree = { $defs: { Node: { type: 'object', properties: { child: { $ref: '#/$defs/Node' } } } }, type: 'object', properties: { root: { $ref: '#/$defs/Node' } } }
    expect(JSON.stringify(geminiSchema(tree)).length).toBeGreaterThan(0)
  })

  it('tool results: one user turn after the model turn, errors as {error}, images after the responses', () => {
    const call = (id: string, name: string) => ({ type: 'toolCall' as const, id, name, arguments: { q: id } })
    const assistant = assistantMessage([text('Looking.'), call('c1', 'search'), call('c2', 'screenshot'), call('c3', 'search')], { provider: 'google', model: 'gemini-2.5-flash', stopReason: 'toolUse' })
    const result = (toolCallId: string, toolName: string, content: ToolResultMessage['content'], isError = false): ToolResultMessage => ({ role: 'toolResult', toolCallId, toolName, content, isError, timestamp: 0 })
    const contents = contentsOf(
      request([
        userMessage('find it'),
        assistant,
        result('c1', 'search', [text('found'), text('twice')]),
        result('c2', 'screenshot', [imageBase64('AAAA', 'image/png')]),
        result('c3', 'search', [text('boom')], true),
        userMessage('and now?'),
      ]),
    )
    expect(contents).toEqual([
      { role: 'user', parts: [{ text: 'find it' }] },
      {
        role: 'model',
        parts: [
          { text: 'Looking.' },
          { functionCall: { id: 'c1', name: 'search', args: { q: 'c1' } } },
          { functionCall: { id: 'c2', name: 'screenshot', args: { q: 'c2' } } },
          { functionCall: { id: 'c3', name: 'search', args: { q: 'c3' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { id: 'c1', name: 'search', response: { output: 'found\ntwice' } } },
          { functionResponse: { id: 'c2', name: 'screenshot', response: { output: 'The result is in the attached file(s).' } } },
          { functionResponse: { id: 'c3', name: 'search', response: { error: 'boom' } } },
          { inlineData: { mimeType: 'image/png', data: 'AAAA' } },
          { text: 'and now?' },
        ],
      },
    ])
  })

  const thinkingCases: [string, ThinkingLevel, Json | undefined, GoogleSettings['thinkingParameter']?][] = [
    ['gemini-2.5-flash', 'off', { thinkingBudget: 0 }],
    ['gemini-2.5-flash-lite', 'off', { thinkingBudget: 0 }],
    ['gemini-2.5-pro', 'off', { thinkingBudget: 128 }],
    ['gemini-2.0-flash', 'off', undefined],
    ['gemini-3-pro-preview', 'off', { thinkingLevel: 'low' }],
    ['gemini-3-flash-preview', 'off', { thinkingLevel: 'minimal' }],
    ['gemini-2.5-flash', 'minimal', { includeThoughts: true, thinkingBudget: 512 }],
    ['gemini-2.5-flash', 'low', { includeThoughts: true, thinkingBudget: 2048 }],
    ['gemini-2.5-flash', 'medium', { includeThoughts: true, thinkingBudget: 8192 }],
    ['gemini-2.5-flash', 'high', { includeThoughts: true, thinkingBudget: 24576 }],
    ['gemini-2.5-flash', 'xhigh', { includeThoughts: true, thinkingBudget: 24576 }],
    ['gemini-2.5-pro', 'xhigh', { includeThoughts: true, thinkingBudget: 32768 }],
    ['gemini-3-pro-preview', 'minimal', { includeThoughts: true, thinkingLevel: 'low' }],
    ['gemini-3-pro-preview', 'medium', { includeThoughts: true, thinkingLevel: 'high' }],
    ['gemini-3.1-pro-preview', 'medium', { includeThoughts: true, thinkingLevel: 'medium' }],
    ['gemini-3-flash-preview', 'minimal', { includeThoughts: true, thinkingLevel: 'minimal' }],
    ['gemini-3-flash-preview', 'high', { includeThoughts: true, thinkingLevel: 'high' }],
    ['gemini-3-pro-preview', 'high', { includeThoughts: true, thinkingBudget: 24576 }, 'budget'],
    ['gemini-flash-latest', 'low', { includeThoughts: true, thinkingLevel: 'low' }, 'level'],
    ['my-tuned-model', 'off', { thinkingBudget: 0 }, 'budget'],
  ]
  for (const [modelId, level, expected, parameter] of thinkingCases) {
    it(`thinking ${level} on ${modelId}${parameter === undefined ? '' : ` (${parameter})`} → ${JSON.stringify(expected)}`, () => {
      const model = modelSpec('google', modelId, { thinkingLevel: level })
      expect(googleThinkingConfig(model, parameter)).toEqual(expected)
      const config = googleRequestBody(request([userMessage('hi')], { model }), parameter === undefined ? {} : { thinkingParameter: parameter })['generationConfig'] as Json | undefined
      expect(config?.['thinkingConfig']).toEqual(expected)
    })
  }

  it('a model’s thinkingBudgets win over the defaults, even on Gemini 3', () => {
    expect(googleThinkingConfig(modelSpec('google', 'gemini-3-pro-preview', { thinkingLevel: 'high', thinkingBudgets: { high: 4000 } }))).toEqual({ includeThoughts: true, thinkingBudget: 4000 })
  })

  it('the same model’s turn replays with its thought parts and every signature on the part it came on', () => {
    const model = modelSpec('google', 'gemini-3-flash-preview')
    const message = fold(decodeWire(new GoogleDecoder(model.modelId), [fixture('thinking-tools.sse')]), model)
    const results = ['get_weather_rxThinkResp01_0', 'get_weather_rxThinkResp01_1'].map(
      (id): ToolResultMessage => ({ role: 'toolResult', toolCallId: id, toolName: 'get_weather', content: [text('18°C')], isError: false, timestamp: 0 }),
    )
    const contents = contentsOf(request([userMessage('Weather in Paris and Tōkyō?'), message, ...results], { model }))
    expect(contents[1]).toEqual({
      role: 'model',
      parts: [
        { text: '**Planning the lookup**\n\nThe user wants the weather in two cities — Paris and Tōkyō; one call each.', thought: true },
        { functionCall: { id: 'get_weather_rxThinkResp01_0', name: 'get_weather', args: { city: 'Paris', unit: 'celsius' } }, thoughtSignature: 'EiYKJGZha2Utc2lnbmF0dXJlLWZvci10aGUtZmlyc3QtY2FsbA==' },
        // The second parallel call came unsigned and stays so: only the first of a batch carries one.
        { functionCall: { id: 'get_weather_rxThinkResp01_1', name: 'get_weather', args: { city: 'Tōkyō', unit: 'celsius' } } },
      ],
    })
    expect(contents[2]!['parts']).toHaveLength(2)
  })

  it('model names: a versioned name is the same model, an alias or another model is not (its thinking becomes text)', () => {
    expect(sameGeminiModel('gemini-2.0-flash-001', 'gemini-2.0-flash')).toBe(true)
    expect(sameGeminiModel('models/gemini-2.5-flash', 'gemini-2.5-flash')).toBe(true)
    expect(sameGeminiModel('gemini-2.5-flash-preview-09-2025', 'gemini-flash-latest')).toBe(false)
    expect(sameGeminiModel('gemini-2.5-flash-lite', 'gemini-2.5-flash')).toBe(false)
    const thought = assistantMessage([{ type: 'thinking', thinking: 'hmm', signature: 'sig' }, text('ok')], { provider: 'google', model: 'gemini-2.0-flash-001' })
    expect(contentsOf(request([userMessage('a'), thought], { model: modelSpec('google', 'gemini-2.0-flash') }))[1]).toEqual({
      role: 'model',
      parts: [{ text: 'hmm', thought: true, thoughtSignature: 'sig' }, { text: 'ok' }],
    })
    expect(contentsOf(request([userMessage('a'), thought], { model: modelSpec('google', 'gemini-2.5-pro') }))[1]).toEqual({
      role: 'model',
      parts: [{ text: 'hmm' }, { text: 'ok' }],
    })
  })

  it('switching from another provider: foreign thinking → text, redacted dropped, ids normalized, unanswered call settled, failed turn dropped, Gemini 3 skip signature', () => {
    const claude = assistantMessage(
      [
        { type: 'thinking', thinking: 'Let me add them.', signature: 'sig-anthropic' },
        { type: 'thinking', thinking: '', signature: 'encrypted', redacted: true },
        text('Adding.'),
        { type: 'toolCall', id: 'toolu_01|weird.id', name: 'add', arguments: { a: 1, b: 2 } },
        { type: 'toolCall', id: 'toolu_02', name: 'add', arguments: { a: 3, b: 4 } },
      ],
      { provider: 'anthropic', model: 'claude-sonnet-4-5', stopReason: 'toolUse' },
    )
    const failed = assistantMessage([{ type: 'toolCall', id: 'toolu_03', name: 'add', arguments: {} }], { provider: 'anthropic', model: 'claude-sonnet-4-5', stopReason: 'error', errorMessage: 'overloaded' })
    const messages: LlmMessage[] = [
      userMessage('add things'),
      claude,
      { role: 'toolResult', toolCallId: 'toolu_01|weird.id', toolName: 'add', content: [text('3')], isError: false, timestamp: 0 },
      failed,
      { role: 'toolResult', toolCallId: 'toolu_03', toolName: 'add', content: [text('?')], isError: false, timestamp: 0 },
      userMessage('continue'),
    ]
    const contents = contentsOf(request(messages, { model: modelSpec('google', 'gemini-3-pro-preview') }))
    expect(contents).toEqual([
      { role: 'user', parts: [{ text: 'add things' }] },
      {
        role: 'model',
        parts: [
          { text: 'Let me add them.' },
          { text: 'Adding.' },
          { functionCall: { id: 'toolu_01_weird_id', name: 'add', args: { a: 1, b: 2 } }, thoughtSignature: SKIP_THOUGHT_SIGNATURE },
          { functionCall: { id: 'toolu_02', name: 'add', args: { a: 3, b: 4 } }, thoughtSignature: SKIP_THOUGHT_SIGNATURE },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { id: 'toolu_01_weird_id', name: 'add', response: { output: '3' } } },
          { functionResponse: { id: 'toolu_02', name: 'add', response: { error: 'Tool call not executed: the conversation moved on before this tool call finished.' } } },
          { text: 'continue' },
        ],
      },
    ])
    // Gemini 2.5 does not check signatures: no placeholder there.
    const older = contentsOf(request(messages, { model: flash }))
    expect(JSON.stringify(older)).not.toContain(SKIP_THOUGHT_SIGNATURE)
    // Long ids are shortened consistently in the call and its result.
    const long = `call_${'x'.repeat(80)}`
    const withLong = contentsOf(
      request([
        userMessage('q'),
        assistantMessage([{ type: 'toolCall', id: long, name: 'f', arguments: {} }], { provider: 'openai', model: 'gpt-5', stopReason: 'toolUse' }),
        { role: 'toolResult', toolCallId: long, toolName: 'f', content: [text('r')], isError: false, timestamp: 0 },
      ]),
    )
    const callId = ((withLong[1]!['parts'] as Json[])[0]!['functionCall'] as Json)['id'] as string
    const resultId = ((withLong[2]!['parts'] as Json[])[0]!['functionResponse'] as Json)['id']
    expect(callId.length).toBeLessThanOrEqual(64)
    expect(resultId).toBe(callId)
  })

  it('buildRequest: the model in the URL with alt=sse, the key only in x-goog-api-key, base URL and call headers', () => {
    const r = request([userMessage('hi')], { options: { headers: { 'x-trace': 't1' } } })
    const http = googleProtocol.buildRequest(r, { baseUrl: 'https://proxy.example/v1beta/' }, KEY)
    expect(http.url).toBe('https://proxy.example/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse')
    expect(http.headers).toEqual({ 'x-trace': 't1', 'x-goog-api-key': KEY })
    expect(http.url).not.toContain(KEY)
    expect(JSON.stringify(http.body)).not.toContain(KEY)
    expect(googleProtocol.buildRequest(r, {}, KEY).url).toBe('https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse')
    const tuned = request([userMessage('hi')], { model: modelSpec('google', 'tunedModels/my-model-42') })
    expect(googleProtocol.buildRequest(tuned, {}, KEY).url).toBe('https://generativelanguage.googleapis.com/v1beta/tunedModels/my-model-42:streamGenerateContent?alt=sse')
  })
})

// ---------------------------------------------------------------------------

let server: ReplayServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const sse = (name: string): ScriptedHttpResponse => ({ chunks: splitBytes(fixture(name), 37) })

async function run(responses: readonly ScriptedHttpResponse[], settings: GoogleSettings = {}): Promise<{ events: AgentEvent[]; last: AssistantMessage; s: ReplayServer }> {
  const s = await startReplayServer(responses)
  server = s
  const streamFn = google({ baseUrl: `${s.url}/v1beta`, apiKey: KEY, ...settings })
  const events = await lastValueFrom(agentLoop(userMessage('what is 2 + 3?'), { systemPrompt: 'Use tools.', messages: [], tools: [addTool] }, { model: flash, streamFn, retry: false }).pipe(toArray()))
  const ends = events.flatMap((e) => (e.type === 'messageEnd' && e.message.role === 'assistant' ? [e.message] : []))
  return { events, last: ends.at(-1)!, s }
}

describe('google: over HTTP', () => {
  it('an agent run with a tool round trip: the second request carries the signed call and its result', async () => {
    const { events, last, s } = await run([sse('add-tool.sse'), sse('final-answer.sse')])
    expect(last).toMatchObject({ stopReason: 'stop', content: [{ type: 'text', text: '2 + 3 = 5.' }], responseId: 'rxFinalResp01' })
    expect(s.requests).toHaveLength(2)
    const [first, second] = s.requests
    expect(first).toMatchObject({ method: 'POST', url: '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse' })
    expect(first!.headers['x-goog-api-key']).toBe(KEY)
    expect(first!.url).not.toContain(KEY)
    expect(first!.body).toMatchObject({
      systemInstruction: { parts: [{ text: 'Use tools.' }] },
      tools: [{ functionDeclarations: [{ name: 'add', parameters: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } } } }] }],
    })
    expect(JSON.stringify(first!.body)).not.toContain('additionalProperties')
    expect((second!.body as Json)['contents']).toEqual([
      { role: 'user', parts: [{ text: 'what is 2 + 3?' }] },
      {
        role: 'model',
        parts: [{ functionCall: { id: 'add_rxAddResp01_0', name: 'add', args: { a: 2, b: 3 } }, thoughtSignature: 'CikBjz1rX2FkZC10b29sLWNhbGwtc2lnbmF0dXJlLWZvci10ZXN0cw==' }],
      },
      { role: 'user', parts: [{ functionResponse: { id: 'add_rxAddResp01_0', name: 'add', response: { output: '5' } } }] },
    ])
    expect(transcriptFromEvents(events).map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant'])
    expect(events.at(-1)).toMatchObject({ type: 'agentEnd', result: { stopReason: 'stop' } })
  })

  it('a mid-stream error ends the message with stopReason error and its kind; the transcript stays valid', async () => {
    const { events, last } = await run([sse('overloaded-midstream.sse')])
    expect(last).toMatchObject({ stopReason: 'error', errorKind: 'overloaded', content: [{ type: 'text', text: 'Partial answ' }] })
    expect(last.errorMessage).toContain('overloaded')
    expect(last.usage.input).toBe(12)
    expect(transcriptFromEvents(events).map((m) => m.role)).toEqual(['user', 'assistant'])
  })

  const body = (code: number, status: string, message: string, details: readonly Json[] = []): string => JSON.stringify({ error: { code, message, status, details } })
  const retryInfo = { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '34.4s' }
  const quota = { '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [{ quotaId: 'GenerateRequestsPerMinutePerProjectPerModel' }] }
  const badKey = { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' }
  const statuses: [string, number, Record<string, string>, string, string, readonly Json[], string, boolean, number | undefined][] = [
    ['invalid key', 400, {}, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [badKey], 'auth', false, undefined],
    ['unauthenticated', 401, {}, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.', [], 'auth', false, undefined],
    ['permission denied', 403, {}, 'PERMISSION_DENIED', 'Your API key was reported as leaked.', [], 'auth', false, undefined],
    ['unknown model', 404, {}, 'NOT_FOUND', 'models/gemini-9 is not found for API version v1beta', [], 'modelNotFound', false, undefined],
    ['prompt too long', 400, {}, 'INVALID_ARGUMENT', 'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).', [], 'contextOverflow', false, undefined],
    ['bad request', 400, {}, 'INVALID_ARGUMENT', 'Invalid JSON payload received. Unknown name "foo".', [], 'invalidRequest', false, undefined],
    ['quota with RetryInfo', 429, {}, 'RESOURCE_EXHAUSTED', 'You exceeded your current quota.', [quota, retryInfo], 'rateLimit', true, 34_400],
    ['quota without a delay', 429, {}, 'RESOURCE_EXHAUSTED', 'Resource has been exhausted (e.g. check quota).', [], 'rateLimit', true, undefined],
    ['quota with Retry-After', 429, { 'retry-after': '20' }, 'RESOURCE_EXHAUSTED', 'Resource has been exhausted (e.g. check quota).', [], 'rateLimit', true, 20_000],
    ['internal', 500, {}, 'INTERNAL', 'An internal error has occurred.', [], 'server', true, undefined],
    ['overloaded', 503, {}, 'UNAVAILABLE', 'The model is overloaded. Please try again later.', [], 'overloaded', true, undefined],
    ['deadline', 504, {}, 'DEADLINE_EXCEEDED', 'The request timed out.', [], 'timeout', true, undefined],
  ]
  for (const [what, status, headers, rpc, message, details, kind, retryable, retryAfterMs] of statuses) {
    it(`HTTP ${status} ${rpc} (${what}) → ${kind}`, async () => {
      const s = await startReplayServer([{ status, headers: { 'content-type': 'application/json', ...headers }, chunks: [body(status, rpc, message, details)] }])
      server = s
      const error = await firstValueFrom(google({ baseUrl: s.url, apiKey: KEY })(request([userMessage('hi')]))).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(ProviderError)
      const info = (error as ProviderError).info
      expect(info).toMatchObject({ kind, retryable, status, code: rpc, provider: 'google' })
      expect(info.retryAfterMs).toBe(retryAfterMs)
      expect(info.message).toContain(message)
      expect(JSON.stringify(info)).not.toContain(KEY)
      expect(s.requests[0]!.url).not.toContain(KEY)
    })
  }

  it('googleErrorFromBody reads the array-wrapped form too, and a non-JSON body classifies by status', async () => {
    const wrapped = `[${body(429, 'RESOURCE_EXHAUSTED', 'slow down', [retryInfo])}]`
    expect(googleErrorFromBody(429, new Headers(), wrapped).info).toMatchObject({ kind: 'rateLimit', retryAfterMs: 34_400, code: 'RESOURCE_EXHAUSTED' })
    const s = await startReplayServer([{ status: 502, headers: { 'content-type': 'text/html' }, chunks: ['<html>Bad gateway</html>'] }])
    server = s
    const error = await firstValueFrom(google({ baseUrl: s.url, apiKey: KEY })(request([userMessage('hi')]))).catch((e: unknown) => e)
    expect((error as ProviderError).info).toMatchObject({ kind: 'server', retryable: true, status: 502 })
  })

  it('the key comes from GEMINI_API_KEY, then GOOGLE_API_KEY; without one the call fails at once with an auth error', async () => {
    const s = await startReplayServer([sse('final-answer.sse')])
    server = s
    const call = (env: Record<string, string>) => lastValueFrom(google({ baseUrl: s.url, env })(request([userMessage('hi')])).pipe(toArray()))
    await call({ GEMINI_API_KEY: 'from-gemini', GOOGLE_API_KEY: 'from-google' })
    await call({ GOOGLE_API_KEY: 'from-google' })
    expect(s.requests.map((r) => r.headers['x-goog-api-key'])).toEqual(['from-gemini', 'from-google'])
    const error = await firstValueFrom(google({ baseUrl: s.url, env: {} })(request([userMessage('hi')]))).catch((e: unknown) => e)
    expect((error as ProviderError).info).toMatchObject({ kind: 'auth', retryable: false })
    expect((error as ProviderError).message).toContain('GEMINI_API_KEY')
    expect(s.requests).toHaveLength(2)
  })
})

describe('google: structured output', () => {
  it('a responseFormat asks for JSON with the schema as responseJsonSchema', async () => {
    const { googleRequestBody } = await import('../../src/providers/google-request.js')
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }
    const body = googleRequestBody(
      { model: { provider: 'google', modelId: 'gemini-2.5-flash', thinkingLevel: 'off' }, systemPrompt: '', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }], timestamp: 0 }], tools: [], options: { responseFormat: { name: 'respond', schema } } },
      {},
    )
    expect(body['generationConfig']).toMatchObject({ responseMimeType: 'application/json', responseJsonSchema: schema })
  })
})
