// Request bodies of a growing conversation (src/providers/*-request-text.ts): a transcript that extends
// one built before goes on from the assembly that one reached. Every body must be the bytes of the
// uncached builder, turn after turn, whatever changes between turns (options, model, compat row) and
// however the transcript grows (the loop's growing arrays, plain frozen copies, unfrozen messages,
// failed answers dropped from the replay).
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { anthropicRequestBody } from '../../src/providers/anthropic-request.js'
import { anthropicRequestText } from '../../src/providers/anthropic-request-text.js'
import { openaiChatRequestBody } from '../../src/providers/openai-chat-request.js'
import { openaiCompat, type Compat } from '../../src/providers/openai-chat-compat.js'
import { openaiChatRequestText } from '../../src/providers/openai-chat-request-text.js'
import { compatFor } from '../../src/providers/openai-compatible.js'
import { imageBase64, text } from '../../src/types/content.js'
import { deepFreeze } from '../../src/types/deep-freeze.js'
import { appendMessages } from '../../src/types/growing-transcript.js'
import { assistantMessage, userMessage, type LlmMessage, type ToolResultMessage } from '../../src/types/message.js'
import { modelSpec, type ModelSpec } from '../../src/types/model.js'
import type { LlmRequest, StreamOptions } from '../../src/types/request.js'

const models: readonly ModelSpec[] = [modelSpec('anthropic', 'claude-sonnet-4-5'), modelSpec('openai', 'gpt-4.1-nano'), modelSpec('mistral', 'mistral-large-latest')]
// The last row differs from api.openai.com's only in the assembly: an assistant message between tool results and a user message.
const compats: readonly Compat[] = [openaiCompat, compatFor('mistral'), compatFor('deepseek'), { ...openaiCompat, requiresAssistantAfterToolResult: true }]

const request = (messages: readonly LlmMessage[], model: ModelSpec, options?: StreamOptions, systemPrompt = 'Be brief.'): LlmRequest => ({
  model,
  systemPrompt,
  messages,
  tools: [{ name: 'echo', description: 'Echoes.', parameters: { type: 'object' } }],
  ...(options === undefined ? {} : { options }),
})

/** Every builder's text equals its uncached body serialized. */
function expectSameBodies(r: LlmRequest, compat: Compat): void {
  expect(anthropicRequestText(r).text).toBe(JSON.stringify(anthropicRequestBody(r)))
  expect(openaiChatRequestText(r, {}, compat).text).toBe(JSON.stringify(openaiChatRequestBody(r, {}, compat)))
}

/** One turn of a tool conversation: what the model answered (by `author`), and the messages after it. */
function turn(n: number, kind: number, author: readonly [string, string]): LlmMessage[] {
  const [provider, model] = author
  const id = `call_${n}_${kind}`
  const call = { type: 'toolCall' as const, id, name: 'echo', arguments: { value: `v${n}`, n, tags: ['a', 'b'] } }
  const result = (content: ToolResultMessage['content']): ToolResultMessage => ({ role: 'toolResult', toolCallId: id, toolName: 'echo', content, isError: false, timestamp: n })
  switch (kind % 7) {
    case 0:
      return [assistantMessage([text(`turn ${n}`), call], { provider, model, stopReason: 'toolUse' }), result([text(`v${n}`)])]
    case 1:
      // Images a tool returned: a user message after the results (OpenAI), then a user message.
      return [assistantMessage([call], { provider, model, stopReason: 'toolUse' }), result([text('shot'), imageBase64('AAAA', 'image/png')]), userMessage(`look ${n}`)]
    case 2:
      // A failed answer: dropped from the replay with its result.
      return [assistantMessage([call], { provider, model, stopReason: 'error' }), result([text('late')])]
    case 3:
      // A call the next request answers with a synthetic result (not yet run).
      return [assistantMessage([call], { provider, model, stopReason: 'toolUse' })]
    case 4:
      return [assistantMessage(`plain ${n}`, { provider, model }), userMessage(`more ${n}`)]
    case 5:
      // Thinking, replayed only to the model that wrote it.
      return [assistantMessage([{ type: 'thinking', thinking: `hmm ${n}`, signature: 'sig' }, call], { provider, model, stopReason: 'toolUse' }), result([text(`v${n}`)])]
    default:
      // An empty answer (not sent) and a user message.
      return [assistantMessage([], { provider, model }), userMessage(`again ${n}`)]
  }
}

const authors = fc.constantFrom(['anthropic', 'claude-sonnet-4-5'] as const, ['openai', 'gpt-4.1-nano'] as const, ['mistral', 'mistral-large-latest'] as const)
const arbOptions: fc.Arbitrary<StreamOptions | undefined> = fc.option(
  fc.record({ cacheRetention: fc.constantFrom('none', 'short', 'long'), maxTokens: fc.integer({ min: 1, max: 9000 }) }, { requiredKeys: [] }),
  { nil: undefined },
)
/** How the transcript grows: the loop's growing array, a frozen copy, or a plain array. */
const arbGrowth = fc.constantFrom('growing', 'frozen', 'plain')

/** Per turn: the turn's kind and author, whether its messages are frozen, and the request's model, options and compat row. */
const arbTurns = fc.array(
  fc.record({ kind: fc.nat(6), author: authors, freeze: fc.boolean(), model: fc.nat(models.length - 1), options: arbOptions, compat: fc.nat(compats.length - 1), system: fc.boolean() }),
  { minLength: 1, maxLength: 12 },
)

describe('request text of a growing conversation: the bytes of the uncached body, every turn', () => {
  it('whatever changes between turns and however the transcript grows', () => {
    fc.assert(
      fc.property(arbTurns, arbGrowth, fc.boolean(), (turns, growth, sameModel) => {
        const first = userMessage('go')
        deepFreeze(first)
        let messages: readonly LlmMessage[] = Object.freeze([first])
        turns.forEach((t, n) => {
          const more = turn(n, t.kind, t.author)
          if (t.freeze) for (const m of more) deepFreeze(m)
          messages = growth === 'growing' ? (appendMessages(messages, more) as readonly LlmMessage[]) : growth === 'frozen' ? Object.freeze([...messages, ...more]) : [...messages, ...more]
          const model = sameModel ? models[0]! : models[t.model]!
          const r = request(messages, model, t.options, t.system ? 'Be brief.' : '')
          expectSameBodies(r, sameModel ? compats[0]! : compats[t.compat]!)
          // Asked again (a retry: the same transcript), and with another option.
          expectSameBodies(r, sameModel ? compats[0]! : compats[t.compat]!)
          expectSameBodies(request(messages, model, { cacheRetention: t.options?.cacheRetention === 'long' ? 'none' : 'long', maxTokens: 7 }), compats[0]!)
        })
      }),
      { numRuns: 300 },
    )
  })

  it('a 50-turn tool conversation, frozen as the loop keeps it, with the cache option switched between turns', () => {
    const first = userMessage('go')
    deepFreeze(first)
    let messages: readonly LlmMessage[] = Object.freeze([first])
    for (let n = 0; n < 50; n++) {
      const more = turn(n, 0, ['anthropic', 'claude-sonnet-4-5'])
      for (const m of more) deepFreeze(m)
      messages = appendMessages(messages, more) as readonly LlmMessage[]
      const options: StreamOptions = { cacheRetention: n % 3 === 0 ? 'none' : n % 3 === 1 ? 'short' : 'long' }
      for (const model of models) expectSameBodies(request(messages, model, options), openaiCompat)
    }
  })

  it('a shorter transcript of the same conversation (an edit that cut the end) gets its own body', () => {
    const first = userMessage('go')
    deepFreeze(first)
    let messages: readonly LlmMessage[] = Object.freeze([first])
    const all: (readonly LlmMessage[])[] = []
    for (let n = 0; n < 6; n++) {
      const more = turn(n, n, ['openai', 'gpt-4.1-nano'])
      for (const m of more) deepFreeze(m)
      messages = appendMessages(messages, more) as readonly LlmMessage[]
      all.push(messages)
      expectSameBodies(request(messages, models[1]!), openaiCompat)
    }
    for (const earlier of all.reverse()) expectSameBodies(request(earlier, models[1]!), compatFor('mistral'))
    for (const earlier of all) expectSameBodies(request(earlier, models[0]!), openaiCompat)
  })

  it('a message that is not frozen, changed in place between turns, is sent as it is now', () => {
    const first = userMessage('go')
    deepFreeze(first)
    const mutable = { role: 'user' as const, content: [text('draft')], timestamp: 0 }
    let messages: readonly LlmMessage[] = Object.freeze([first, mutable])
    for (let n = 0; n < 4; n++) {
      const more = turn(n, 0, ['openai', 'gpt-4.1-nano'])
      for (const m of more) deepFreeze(m)
      messages = appendMessages(messages, more) as readonly LlmMessage[]
      mutable.content = [text(`draft ${n}`)]
      for (const model of models) expectSameBodies(request(messages, model, { cacheRetention: 'none' }), openaiCompat)
      expect(openaiChatRequestText(request(messages, models[1]!), {}, openaiCompat).text).toContain(`draft ${n}`)
    }
  })
})
