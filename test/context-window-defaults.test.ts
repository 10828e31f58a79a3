/**
 * Context overflow with the defaults: the phrasings servers use are
 * recognized, and the Agent's default sliding window takes its budgets from
 * the model's `contextWindow`, so a small local model that silently
 * truncates a long prompt is redone with a context that fits.
 */
import { describe, expect, it } from 'vitest'
import { Agent } from '../src/agent/index.js'
import { slidingWindow } from '../src/context/sliding-window.js'
import { anthropicHttpError } from '../src/providers/anthropic.js'
import { streamError } from '../src/providers/errors.js'
import { googleErrorFromBody } from '../src/providers/google-errors.js'
import { openaiHttpError } from '../src/providers/openai-responses.js'
import type { ProviderErrorKind } from '../src/types/provider-error.js'
import { userMessage, assistantMessage, type AgentMessage } from '../src/types/message.js'
import { modelSpec } from '../src/types/model.js'
import { reply, scriptedModel } from '../marbles/index.js'

/** The error kind each adapter's classifier gives an HTTP 400 body (and an in-stream error) carrying `message`. */
function classifyOverflowProbe(message: string): ProviderErrorKind[] {
  const json = (error: unknown): string => JSON.stringify(error)
  return [
    anthropicHttpError(400, new Headers(), json({ type: 'error', error: { type: 'invalid_request_error', message } })).info.kind,
    openaiHttpError(400, new Headers(), json({ error: { message, type: 'invalid_request_error', code: null } })).info.kind,
    googleErrorFromBody(400, new Headers(), json({ error: { code: 400, message, status: 'INVALID_ARGUMENT' } })).info.kind,
    streamError('generic', undefined, message).info.kind,
  ]
}

describe('context overflow phrasings', () => {
  const phrasings = [
    ['llama-server / LM Studio', 'Context window exceeded: 9120 tokens requested, 8192 available'],
    ['vLLM-compatible gateways', 'context window exceeded'],
    ['Bedrock (via OpenAI-compatible proxies)', 'Input is too long for requested model.'],
  ] as const
  for (const [who, message] of phrasings) {
    it(`"${message}" (${who}) is a contextOverflow, for every adapter's classifier`, () => {
      for (const kind of classifyOverflowProbe(message)) expect(kind).toBe('contextOverflow')
    })
  }
})

describe("the Agent's default window follows the model's context window", () => {
  const long = (i: number): AgentMessage[] => [userMessage(`question ${i}: ${'lorem ipsum '.repeat(200)}`), assistantMessage(`answer ${i}: ${'dolor sit amet '.repeat(200)}`)]
  const history = Array.from({ length: 8 }, (_, i) => long(i)).flat()

  it('a window with a known context window uses budgets that fit it; without one the fixed defaults stay', () => {
    const window = slidingWindow()
    expect(window.compact(history, { turnIndex: 0 }).report).toBeUndefined()
    const fitted = window.compact(history, { turnIndex: 0, contextWindow: 4_096 })
    expect(fitted.report).toMatchObject({ overflow: false })
    expect(fitted.report!.budget).toBeLessThan(4_096)
    const overflow = window.compact(history, { turnIndex: 0, contextWindow: 4_096, overflow: true })
    expect(overflow.report!.budget).toBeLessThan(fitted.report!.budget)
    // Explicit budgets win over the derived ones; big windows keep the fixed defaults as a ceiling.
    expect(slidingWindow({ maxTokens: 50 }).compact(history, { turnIndex: 0, contextWindow: 4_096 }).report!.budget).toBe(50)
    expect(slidingWindow().compact(history, { turnIndex: 0, contextWindow: 1_000_000 }).report).toBeUndefined()
  })

  it('a small local model that silently truncated the prompt is redone with a context that fits its window (no options set)', async () => {
    const small = modelSpec('ollama', 'qwen3:0.6b', { contextWindow: 8_192 })
    // The server truncated the first prompt (usage at the window); the redone call fits.
    const model = scriptedModel([reply.text('garbled', { usage: { input: 8_192, output: 5 } }), reply.text('fine', { usage: { input: 2_000, output: 5 } })], { model: small })
    const agent = new Agent({ systemPrompt: '', model: small, streamFn: model.streamFn, messages: history })
    const events: string[] = []
    agent.subscribe((e) => {
      if (e.type === 'compaction') events.push(`compaction:${e.reason}`)
    })
    const result = await agent.prompt('and now?')
    expect(result.messages.at(-1)).toMatchObject({ role: 'assistant', stopReason: 'stop', content: [{ type: 'text', text: 'fine' }] })
    expect(model.requests).toHaveLength(2)
    expect(model.requests[1]!.messages.length).toBeLessThan(model.requests[0]!.messages.length)
    expect(events).toContain('compaction:overflow')
  })
})

describe("the loop tells a context transform the turn's model's context window", () => {
  it('agentLoop passes contextWindow to transformContext when the model has one, and not otherwise', async () => {
    const { agentLoop } = await import('../src/loop/agent-loop.js')
    const { lastValueFrom } = await import('rxjs')
    const seen: unknown[] = []
    for (const contextWindow of [8_192, undefined]) {
      const model = scriptedModel([reply.text('ok')], { model: modelSpec('local', 'small', contextWindow === undefined ? {} : { contextWindow }) })
      await lastValueFrom(
        agentLoop(userMessage('hi'), { systemPrompt: 's', messages: [], tools: [] }, {
          model: model.model,
          streamFn: model.streamFn,
          transformContext: (messages, info) => (seen.push(info), messages),
        }),
      )
    }
    expect(seen).toEqual([{ turnIndex: 0, contextWindow: 8_192 }, { turnIndex: 0 }])
  })
})
