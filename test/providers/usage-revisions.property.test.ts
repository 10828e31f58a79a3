/**
 * Usage a provider revises: whatever sequence of cumulative reports a stream
 * carries (counts may go up or down from one report to the next), every
 * adapter's message ends with the provider's LAST report, in the runtime's
 * terms, and the usage invariants of `types/usage.ts` hold on it and on
 * every streamed snapshot.
 */
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { foldChunks } from '../../marbles/fold-chunks.js'
import { AnthropicDecoder } from '../../src/providers/anthropic-decoder.js'
import { GoogleDecoder } from '../../src/providers/google-decoder.js'
import { OpenAIChatDecoder } from '../../src/providers/openai-chat-decoder.js'
import { OpenAIResponsesDecoder } from '../../src/providers/openai-responses-decoder.js'
import { decodeWire, type WireDecoder } from '../../src/providers/protocol.js'
import type { ProviderChunk } from '../../src/types/chunk.js'
import { modelSpec } from '../../src/types/model.js'
import { usage as usageOf, type Usage } from '../../src/types/usage.js'
import { arbTokenCount } from '../arbitraries.js'
import { sseBody, splitBytes } from './replay-server.js'

/** One cumulative report as a provider sees it: the whole prompt (cached part included) and the whole output (reasoning included). */
interface Report {
  readonly prompt: number
  readonly cached: number
  readonly output: number
  readonly reasoning: number
}

const small = fc.integer({ min: 0, max: 50_000 })
const arbReport: fc.Arbitrary<Report> = fc
  .record({ prompt: small, cachedShare: fc.double({ min: 0, max: 1, noNaN: true }), output: arbTokenCount.map((n) => n % 20_000), reasoningShare: fc.double({ min: 0, max: 1, noNaN: true }) })
  .map(({ prompt, cachedShare, output, reasoningShare }) => ({ prompt, cached: Math.floor(prompt * cachedShare), output, reasoning: Math.floor(output * reasoningShare) }))
const arbReports = fc.array(arbReport, { minLength: 1, maxLength: 5 })

/** The runtime's usage for a report: input excludes cache reads, reasoning is inside output. */
const expected = (r: Report): Usage => usageOf({ input: r.prompt - r.cached, output: r.output, reasoning: r.reasoning, cacheRead: r.cached })

type Wire = (reports: readonly Report[]) => { decoder: WireDecoder; wire: string; hasReasoning: boolean }

const text = (i: number): string => `part ${i}. `

const adapters: Record<string, Wire> = {
  anthropic: (reports) => {
    const usage = (r: Report) => ({ input_tokens: r.prompt - r.cached, cache_read_input_tokens: r.cached, cache_creation_input_tokens: 0, output_tokens: r.output })
    const [first, ...rest] = reports
    const events: { event: string; data: unknown }[] = [
      { event: 'message_start', data: { type: 'message_start', message: { id: 'msg_p', type: 'message', role: 'assistant', model: 'claude-x', content: [], usage: usage(first!) } } },
      { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
    ]
    rest.forEach((r, i) => {
      events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: text(i) } } })
      events.push({ event: 'message_delta', data: { type: 'message_delta', delta: i === rest.length - 1 ? { stop_reason: 'end_turn' } : {}, usage: usage(r) } })
    })
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } }, { event: 'message_stop', data: { type: 'message_stop' } })
    // Anthropic reports no reasoning count: thinking is inside output_tokens.
    return { decoder: new AnthropicDecoder(), wire: sseBody(events), hasReasoning: false }
  },
  google: (reports) => {
    const events = reports.map((r, i) => ({
      data: {
        candidates: [{ content: { role: 'model', parts: [{ text: text(i) }] }, index: 0, ...(i === reports.length - 1 || i % 2 === 1 ? { finishReason: 'STOP' } : {}) }],
        usageMetadata: {
          promptTokenCount: r.prompt,
          cachedContentTokenCount: r.cached,
          candidatesTokenCount: r.output - r.reasoning,
          thoughtsTokenCount: r.reasoning,
          totalTokenCount: r.prompt + r.output,
        },
        modelVersion: 'gemini-x',
        responseId: 'resp_p',
      },
    }))
    return { decoder: new GoogleDecoder('gemini-x'), wire: sseBody(events), hasReasoning: true }
  },
  'openai-chat': (reports) => {
    const usage = (r: Report) => ({
      prompt_tokens: r.prompt,
      completion_tokens: r.output,
      total_tokens: r.prompt + r.output,
      prompt_tokens_details: { cached_tokens: r.cached },
      completion_tokens_details: { reasoning_tokens: r.reasoning },
    })
    // Some servers put a cumulative usage on every chunk; the last one is final.
    const events = reports.map((r, i) => ({
      data: {
        id: 'chatcmpl-p',
        model: 'gpt-x',
        choices: [{ index: 0, delta: { content: text(i) }, finish_reason: i === reports.length - 1 ? 'stop' : null }],
        usage: usage(r),
      },
    }))
    return { decoder: new OpenAIChatDecoder(), wire: `${sseBody(events)}data: [DONE]\n\n`, hasReasoning: true }
  },
  'openai-responses': (reports) => {
    // The Responses API reports usage once, in the terminal event: the last report.
    const r = reports.at(-1)!
    const events = [
      { type: 'response.created', response: { id: 'resp_p', model: 'gpt-x', status: 'in_progress' } },
      { type: 'response.output_text.delta', output_index: 0, item_id: 'msg_p', delta: text(0) },
      {
        type: 'response.completed',
        response: {
          id: 'resp_p',
          status: 'completed',
          usage: {
            input_tokens: r.prompt,
            input_tokens_details: { cached_tokens: r.cached },
            output_tokens: r.output,
            output_tokens_details: { reasoning_tokens: r.reasoning },
            total_tokens: r.prompt + r.output,
          },
        },
      },
    ].map((data) => ({ event: data.type, data }))
    return { decoder: new OpenAIResponsesDecoder(), wire: sseBody(events), hasReasoning: true }
  },
}

/** The running sums of the usage chunks: what every snapshot of the streaming message shows. */
function runningSums(chunks: readonly ProviderChunk[]): Usage[] {
  const sums: Usage[] = []
  let u = usageOf({ total: 0 })
  for (const c of chunks) {
    if (c.type !== 'usage') continue
    const add = (a: number, b: number | undefined): number => a + (b ?? 0)
    u = { ...u, input: add(u.input, c.input), output: add(u.output, c.output), reasoning: add(u.reasoning, c.reasoning), cacheRead: add(u.cacheRead, c.cacheRead), cacheWrite: add(u.cacheWrite, c.cacheWrite), total: add(u.total, c.total) }
    sums.push(u)
  }
  return sums
}

describe('usage revised by the provider: its last report wins, for every adapter', () => {
  for (const [name, build] of Object.entries(adapters)) {
    it(`${name}: the message's usage is the last report; input + output + cache = total; reasoning ≤ output; no count below 0`, () => {
      fc.assert(
        fc.property(arbReports, fc.integer({ min: 1, max: 64 }), (reports, split) => {
          const { decoder, wire, hasReasoning } = build(reports)
          const chunks = decodeWire(decoder, splitBytes(wire, split))
          const message = foldChunks(chunks, modelSpec('p', 'm'))
          expect(message.errorMessage).toBeUndefined()
          const last = expected(reports.at(-1)!)
          const u = message.usage
          expect({ input: u.input, output: u.output, cacheRead: u.cacheRead, cacheWrite: u.cacheWrite }).toEqual({
            input: last.input,
            output: last.output,
            cacheRead: last.cacheRead,
            cacheWrite: 0,
          })
          if (hasReasoning) expect(u.reasoning).toBe(last.reasoning)
          expect(u.total).toBe(u.input + u.output + u.cacheRead + u.cacheWrite)
          expect(u.reasoning).toBeLessThanOrEqual(u.output)
          // The chunks never take a count below 0 on the way (a snapshot shown mid-stream is a real usage).
          for (const s of runningSums(chunks)) {
            for (const v of [s.input, s.output, s.reasoning, s.cacheRead, s.cacheWrite, s.total]) expect(v).toBeGreaterThanOrEqual(0)
          }
        }),
        { numRuns: 150 },
      )
    })
  }
})
