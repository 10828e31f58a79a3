// Request bodies assembled from cached per-message JSON text (src/providers/wire-cache.ts): the same
// text as serializing the uncached body, whatever the transcript, and a message that can change is
// never served from the cache.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { anthropicRequestBody } from '../../src/providers/anthropic-request.js'
import { anthropicRequestText } from '../../src/providers/anthropic-request-text.js'
import { openaiChatRequestBody } from '../../src/providers/openai-chat-request.js'
import { openaiCompat, type Compat } from '../../src/providers/openai-chat-compat.js'
import { openaiChatRequestText } from '../../src/providers/openai-chat-request-text.js'
import { compatFor } from '../../src/providers/openai-compatible.js'
import { isFrozenData, isFrozenMessage, JsonText } from '../../src/providers/wire-cache.js'
import { imageBase64, text } from '../../src/types/content.js'
import { deepFreeze } from '../../src/types/deep-freeze.js'
import { assistantMessage, userMessage, type LlmMessage, type ToolResultMessage } from '../../src/types/message.js'
import { modelSpec, type ModelSpec } from '../../src/types/model.js'
import type { LlmRequest, StreamOptions } from '../../src/types/request.js'
import { arbLlmMessage } from '../arbitraries.js'

const models: readonly ModelSpec[] = [
  modelSpec('anthropic', 'claude-sonnet-4-5'),
  modelSpec('anthropic', 'claude-opus-4-6', { thinkingLevel: 'high' }),
  modelSpec('openai', 'gpt-4.1-nano'),
  modelSpec('mistral', 'mistral-large-latest'),
]
const authors = fc.constantFrom(['anthropic', 'claude-sonnet-4-5-20250929'], ['anthropic', 'claude-opus-4-6'], ['openai', 'gpt-4.1-nano'], ['google', 'gemini-2.5-flash'])

/** Transcripts whose results often answer earlier calls, written by the test's models, some messages deep-frozen. */
const arbTranscript: fc.Arbitrary<LlmMessage[]> = fc
  .array(fc.tuple(arbLlmMessage, authors, fc.nat(), fc.boolean()), { maxLength: 8 })
  .map((rows) => {
    const ids: string[] = []
    return rows.map(([m, [provider, model], pick, freeze]) => {
      let out: LlmMessage = m
      if (m.role === 'assistant') {
        out = { ...m, provider, model }
        for (const b of m.content) if (b.type === 'toolCall') ids.push(b.id)
      } else if (m.role === 'toolResult' && ids.length > 0 && pick % 3 !== 0) out = { ...m, toolCallId: ids[pick % ids.length]! }
      if (freeze) {
        out = structuredClone(out)
        deepFreeze(out)
      }
      return out
    })
  })

const arbOptions: fc.Arbitrary<StreamOptions> = fc.record(
  { cacheRetention: fc.constantFrom('none', 'short', 'long'), maxTokens: fc.integer({ min: 1, max: 9000 }), stopSequences: fc.array(fc.string(), { maxLength: 2 }) },
  { requiredKeys: [] },
)

const request = (messages: readonly LlmMessage[], model: ModelSpec, options?: StreamOptions): LlmRequest => ({
  model,
  systemPrompt: 'Be brief.',
  messages,
  tools: [{ name: 'echo', description: 'Echoes.', parameters: { type: 'object' } }],
  ...(options === undefined ? {} : { options }),
})

const compats: readonly Compat[] = [openaiCompat, compatFor('mistral'), compatFor('deepseek'), compatFor('openrouter')]

/** Every way a body can be built for `r`: the text, from the cache or not, equals the uncached body serialized. */
function expectSameBodies(r: LlmRequest): void {
  const anthropic = JSON.stringify(anthropicRequestBody(r))
  expect(anthropicRequestText(r).text).toBe(anthropic)
  for (const compat of compats) expect(openaiChatRequestText(r, {}, compat).text).toBe(JSON.stringify(openaiChatRequestBody(r, {}, compat)))
  // Again: now from the cache.
  expect(anthropicRequestText(r).text).toBe(anthropic)
  expect(openaiChatRequestText(r, {}, openaiCompat).text).toBe(JSON.stringify(openaiChatRequestBody(r, {}, openaiCompat)))
}

describe('wire text cache: the same bytes as the uncached body', () => {
  it('for any transcript, model, options and compat row, built fresh, from the cache, and after switching model', () => {
    fc.assert(
      fc.property(arbTranscript, fc.constantFrom(...models), fc.constantFrom(...models), arbOptions, (messages, model, other, options) => {
        expectSameBodies(request(messages, model, options))
        expectSameBodies(request(messages, other, options))
        expectSameBodies(request(messages, model, options))
        // A transcript that grows by appending, as a conversation does.
        expectSameBodies(request([...messages, userMessage('next')], model, options))
      }),
      { numRuns: 200 },
    )
  })

  it('a tool result with images, a user message after it, and an empty assistant message (OpenAI assembly)', () => {
    const assistant = assistantMessage([{ type: 'toolCall', id: 'call_1', name: 'shot', arguments: {} }], { provider: 'openai', model: 'gpt-4.1-nano', stopReason: 'toolUse' })
    const result: ToolResultMessage = { role: 'toolResult', toolCallId: 'call_1', toolName: 'shot', content: [text('here'), imageBase64('AAAA', 'image/png')], isError: false, timestamp: 0 }
    const messages = [userMessage('go'), assistant, result, userMessage('and?'), assistantMessage([], { provider: 'openai', model: 'gpt-4.1-nano' })]
    for (const m of messages) deepFreeze(m)
    for (const model of models) expectSameBodies(request(messages, model))
  })

  it('a redacted message (a new object) is sent as redacted; the original is unchanged', () => {
    const secret = userMessage('my password is hunter2')
    const messages = [secret, assistantMessage('noted', { provider: 'anthropic', model: 'claude-sonnet-4-5' })]
    for (const m of messages) deepFreeze(m)
    const model = models[0]!
    expect(anthropicRequestText(request(messages, model)).text).toContain('hunter2')
    const edited = [userMessage('my password is [redacted]'), messages[1]!]
    deepFreeze(edited[0])
    const r = request(edited, model)
    expect(anthropicRequestText(r).text).toBe(JSON.stringify(anthropicRequestBody(r)))
    expect(anthropicRequestText(r).text).not.toContain('hunter2')
    expect(openaiChatRequestText(r, {}, openaiCompat).text).not.toContain('hunter2')
    expect(anthropicRequestText(request(messages, model)).text).toContain('hunter2')
  })
})

describe('wire text cache: only what cannot change is cached', () => {
  const model = models[0]!
  const mutate = (m: LlmMessage, value: string): void => {
    ;(m.content[0] as { text: string }).text = value
  }

  it('an unfrozen message is converted afresh every time', () => {
    const m = userMessage('first')
    const r = request([m], model)
    expect(anthropicRequestText(r).text).toContain('first')
    expect(openaiChatRequestText(r, {}, openaiCompat).text).toContain('first')
    mutate(m, 'second')
    expect(anthropicRequestText(r).text).toBe(JSON.stringify(anthropicRequestBody(r)))
    expect(anthropicRequestText(r).text).toContain('second')
    expect(openaiChatRequestText(r, {}, openaiCompat).text).toContain('second')
  })

  it('a frozen message whose content block is not frozen is converted afresh every time', () => {
    const m = userMessage('first')
    Object.freeze(m.content)
    Object.freeze(m)
    expect(isFrozenMessage(m)).toBe(false)
    const r = request([m], model)
    expect(anthropicRequestText(r).text).toContain('first')
    mutate(m, 'second')
    expect(anthropicRequestText(r).text).toContain('second')
    expect(openaiChatRequestText(r, {}, openaiCompat).text).toContain('second')
  })

  it('isFrozenData: frozen plain data only, all the way down (no getters, no class instances)', () => {
    const plain = { a: [1, { b: 'c' }], d: null }
    deepFreeze(plain)
    expect(isFrozenData(plain)).toBe(true)
    expect(isFrozenData(Object.freeze({ a: { b: 1 } }))).toBe(false)
    expect(isFrozenData(Object.freeze({ when: Object.freeze(new Date(0)) }))).toBe(false)
    let n = 0
    expect(isFrozenData(Object.freeze({ get v() { return n++ } }))).toBe(false)
    expect(isFrozenData(Object.freeze({ f: () => 1 }))).toBe(false)
    expect(isFrozenData('text')).toBe(true)
  })

  it('a tool result is judged by its content, not its details (never sent)', () => {
    const result: ToolResultMessage = { role: 'toolResult', toolCallId: 'c', toolName: 't', content: [text('ok')], isError: false, timestamp: 0, details: { mutable: new Date(0) } }
    deepFreeze(result.content)
    Object.freeze(result)
    expect(isFrozenMessage(result)).toBe(true)
  })

  it('JsonText: JSON.stringify of it gives its text', () => {
    const body = new JsonText('{"a":[1,"x"],"b":{"c":null}}')
    expect(JSON.stringify(body)).toBe(body.text)
    expect(JSON.stringify({ body })).toBe(`{"body":${body.text}}`)
  })
})
