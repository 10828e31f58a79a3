import { describe, expect, it, vi } from 'vitest'
import fc from 'fast-check'
import { lastValueFrom, toArray } from 'rxjs'
import * as t from 'io-ts'
import {
  cachedEstimate,
  estimateContextTokens,
  estimateTokens,
  IMAGE_TOKENS,
  MESSAGE_OVERHEAD_TOKENS,
  type EstimateTokens,
} from '../src/context/estimate-tokens.js'
import { compactionEventOf, compactionOf, slidingWindow, slidingWindowRecovery } from '../src/context/sliding-window.js'
import { agentLoop } from '../src/loop/agent-loop.js'
import { defineTool } from '../src/tools/define-tool.js'
import { imageBase64, imageUrl, text, type AssistantContent, type ToolCallContent } from '../src/types/content.js'
import { CompactionEvent } from '../src/types/event.js'
import { assistantMessage, userMessage, type AgentMessage, type CustomMessage, type ToolResultMessage } from '../src/types/message.js'
import { ProviderError } from '../src/types/provider-error.js'
import { usage } from '../src/types/usage.js'
import { reply, scriptedModel } from '../marbles/index.js'
import { addTool, context, resultOf } from './helpers.js'

const user = (body = 'u'): AgentMessage => userMessage(body)
const say = (body = 'a'): AgentMessage => assistantMessage(body)
const toolCall = (id: string, name = 'add', args: Record<string, unknown> = {}): ToolCallContent => ({ type: 'toolCall', id, name, arguments: args })
const calls = (...ids: string[]): AgentMessage => assistantMessage(ids.map((id) => toolCall(id)), { stopReason: 'toolUse' })
const result = (toolCallId: string, body = 'r'): ToolResultMessage => ({
  role: 'toolResult',
  toolCallId,
  toolName: 'add',
  content: [text(body)],
  isError: false,
  timestamp: 0,
})
const custom = (kind = 'note'): CustomMessage => ({ role: 'custom', kind, data: { big: 'x'.repeat(10_000) } })

/** Every message sent costs 10, custom messages nothing: budgets read as message counts. */
const tens: EstimateTokens = (m) => (m.role === 'custom' ? 0 : 10)
const turn0 = { turnIndex: 0 }

describe('estimateTokens', () => {
  it('counts ceil(characters / 4) per text block plus a per-message overhead', () => {
    expect(estimateTokens(text('abcde'))).toBe(2)
    expect(estimateTokens(text(''))).toBe(0)
    expect(estimateTokens(userMessage('abcd'))).toBe(1 + MESSAGE_OVERHEAD_TOKENS)
    expect(estimateTokens(userMessage([text('abcde'), text('abc')]))).toBe(2 + 1 + MESSAGE_OVERHEAD_TOKENS)
  })

  it('counts thinking text, and the payload of redacted thinking, not signatures', () => {
    expect(estimateTokens({ type: 'thinking', thinking: 'x'.repeat(40), signature: 's'.repeat(400) })).toBe(10)
    expect(estimateTokens({ type: 'thinking', thinking: '', signature: 'e'.repeat(80), redacted: true })).toBe(20)
  })

  it('counts a tool call as its name plus its JSON arguments', () => {
    const block = toolCall('c1', 'search', { q: 'cats' })
    expect(estimateTokens(block)).toBe(Math.ceil(('search'.length + JSON.stringify({ q: 'cats' }).length) / 4))
  })

  it('counts every image, inline or by URL, as a fixed amount', () => {
    expect(IMAGE_TOKENS).toBe(1_200)
    expect(estimateTokens(imageBase64('A'.repeat(100_000), 'image/png'))).toBe(IMAGE_TOKENS)
    expect(estimateTokens(imageUrl('https://example.com/cat.png'))).toBe(IMAGE_TOKENS)
    const withImages: ToolResultMessage = { ...result('c1', 'abcd'), content: [text('abcd'), imageUrl('https://example.com/a.png')] }
    expect(estimateTokens(withImages)).toBe(1 + IMAGE_TOKENS + MESSAGE_OVERHEAD_TOKENS)
  })

  it('counts extension data as JSON, and unencodable data as nothing', () => {
    expect(estimateTokens({ type: 'extension', typeName: 'citation', data: { url: 'https://a.b' } })).toBe(
      Math.ceil(JSON.stringify({ url: 'https://a.b' }).length / 4),
    )
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    expect(estimateTokens({ type: 'extension', typeName: 'x', data: cyclic })).toBe(0)
    expect(estimateTokens({ type: 'extension', typeName: 'x', data: undefined })).toBe(0)
  })

  it('counts custom messages as nothing: they are never sent', () => {
    expect(estimateTokens(custom())).toBe(0)
  })

  it("ignores an assistant message's reported usage: the estimate is local", () => {
    const content: AssistantContent[] = [text('x'.repeat(40))]
    const small = assistantMessage(content)
    const reported = assistantMessage(content, { usage: usage({ input: 90_000, output: 5_000 }) })
    expect(estimateTokens(reported)).toBe(estimateTokens(small))
    expect(estimateTokens(small)).toBe(10 + MESSAGE_OVERHEAD_TOKENS)
  })

  it('estimates a context: the messages plus the system prompt', () => {
    const messages = [userMessage('abcd'), custom(), say('abcdefgh')]
    expect(estimateContextTokens(messages, 'x'.repeat(12))).toBe(3 + (1 + 4) + 0 + (2 + 4))
    expect(estimateContextTokens(messages)).toBe(5 + 6)
  })

  it('caches estimates per message object', () => {
    const estimate = vi.fn(tens)
    const cached = cachedEstimate(estimate)
    const m = user()
    expect(cached(m) + cached(m)).toBe(20)
    expect(cachedEstimate(estimate)(m)).toBe(10)
    expect(estimate).toHaveBeenCalledTimes(1)
    expect(cached(user())).toBe(10)
    expect(estimate).toHaveBeenCalledTimes(2)
  })
})

describe('slidingWindow: rules', () => {
  it('returns the same array, and reports nothing, when the context fits', () => {
    const onCompaction = vi.fn()
    const window = slidingWindow({ maxTokens: 40, estimate: tens, onCompaction })
    const messages = [user(), say(), user(), say()]
    expect(window(messages, turn0)).toBe(messages)
    expect(window.compact(messages)).toEqual({ messages })
    expect(window([], turn0)).toEqual([])
    expect(onCompaction).not.toHaveBeenCalled()
  })

  it('keeps the first messages and the newest that fit, dropping the oldest in between', () => {
    const onCompaction = vi.fn()
    const window = slidingWindow({ maxTokens: 50, estimate: tens, onCompaction })
    const messages = Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? user(`u${i}`) : say(`a${i}`)))
    const kept = window(messages, turn0)
    expect(kept).toEqual([messages[0], messages[1], messages[7], messages[8], messages[9]])
    expect(kept[2]).toBe(messages[7])
    expect(onCompaction).toHaveBeenCalledExactlyOnceWith({
      droppedMessages: 5,
      droppedTokens: 50,
      keptMessages: 5,
      keptTokens: 50,
      budget: 50,
      overflow: false,
      overBudget: false,
    })
  })

  it('honours keepFirst, including none', () => {
    const messages = Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? user(`u${i}`) : say(`a${i}`)))
    expect(slidingWindow({ maxTokens: 40, keepFirst: 3, estimate: tens })(messages, turn0)).toEqual([messages[0], messages[1], messages[2], messages[7]])
    expect(slidingWindow({ maxTokens: 40, keepFirst: 0, estimate: tens })(messages, turn0)).toEqual(messages.slice(4))
    // Without a head, an opening of orphan results and custom messages goes with the oldest unit, never alone.
    const orphans = [custom(), result('gone'), user(), say(), user()]
    expect(slidingWindow({ maxTokens: 10, keepFirst: 0, estimate: tens })(orphans, turn0)).toEqual([orphans[4]])
    const lone = [custom(), result('gone'), user()]
    expect(slidingWindow({ maxTokens: 5, keepFirst: 0, estimate: tens })(lone, turn0)).toBe(lone)
    // Fewer messages than keepFirst: nothing can be dropped.
    const two = [user(), say()]
    expect(slidingWindow({ maxTokens: 5, keepFirst: 4, estimate: tens })(two, turn0)).toBe(two)
  })

  it('keeps a tool call and all its results together: several calls, several results', () => {
    const messages = [user('task'), say('ok'), user(), calls('c1', 'c2', 'c3'), result('c1'), result('c2'), result('c3'), say('done'), user('more'), calls('d1'), result('d1')]
    // Budget for head + the d unit + 'more' + 'done' + part of the c unit: the c unit must go whole.
    const kept = slidingWindow({ maxTokens: 80, estimate: tens })(messages, turn0)
    expect(kept).toEqual([messages[0], messages[1], messages[7], messages[8], messages[9], messages[10]])
    // With room for all of it, the c unit is kept whole.
    const roomy = slidingWindow({ maxTokens: 100, estimate: tens })(messages, turn0)
    expect(roomy).toEqual([messages[0], messages[1], ...messages.slice(3)])
  })

  it('never starts the kept tail with tool results, even those of parallel calls', () => {
    // Results 2 and 3 alone would fit; without their call they must not lead.
    const messages = [user(), say(), user(), calls('p1', 'p2', 'p3'), result('p1'), result('p2'), result('p3')]
    const kept = slidingWindow({ maxTokens: 50, estimate: tens })(messages, turn0)
    expect(kept).toEqual([messages[0], messages[1], ...messages.slice(3)])
    expect(kept[2]?.role).toBe('assistant')
  })

  it('keeps the results of a tool call that ends the kept head', () => {
    const messages = [user(), calls('h1', 'h2'), result('h1'), result('h2'), say(), user(), say(), user()]
    const kept = slidingWindow({ maxTokens: 50, estimate: tens })(messages, turn0)
    expect(kept).toEqual([messages[0], messages[1], messages[2], messages[3], messages[7]])
  })

  it('always keeps the newest unit, saying so when it alone is over budget', () => {
    const onCompaction = vi.fn()
    const messages = [user(), say(), user(), say(), user(), calls('c1', 'c2'), result('c1'), result('c2')]
    const kept = slidingWindow({ maxTokens: 25, estimate: tens, onCompaction })(messages, turn0)
    expect(kept).toEqual([messages[0], messages[1], ...messages.slice(5)])
    expect(onCompaction).toHaveBeenCalledExactlyOnceWith(expect.objectContaining({ keptTokens: 50, budget: 25, overBudget: true, droppedMessages: 3 }))
    // Nothing between the head and the newest unit: the same array, nothing reported.
    const tight = [user(), say(), user()]
    expect(slidingWindow({ maxTokens: 1, estimate: tens, onCompaction })(tight, turn0)).toBe(tight)
    expect(onCompaction).toHaveBeenCalledTimes(1)
  })

  it('applies the smaller budget in overflow mode', () => {
    const messages = Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? user() : say()))
    const window = slidingWindow({ maxTokens: 100, overflowMaxTokens: 40, estimate: tens })
    expect(window(messages, turn0)).toBe(messages)
    const { messages: kept, report } = window.compact(messages, { turnIndex: 3, overflow: true })
    expect(kept).toEqual([messages[0], messages[1], messages[8], messages[9]])
    expect(report).toMatchObject({ budget: 40, overflow: true, droppedMessages: 6, keptTokens: 40 })
    expect(compactionEventOf(report!)).toEqual({
      type: 'compaction',
      reason: 'overflow',
      droppedMessages: 6,
      droppedTokens: 60,
      keptMessages: 4,
      keptTokens: 40,
      budget: 40,
    })
    expect(CompactionEvent.is(compactionEventOf(report!))).toBe(true)
    expect([window.maxTokens, window.overflowMaxTokens, window.keepFirst]).toEqual([100, 40, 2])
  })

  it('has the documented defaults', () => {
    const { maxTokens, overflowMaxTokens, keepFirst } = slidingWindow()
    expect({ maxTokens, overflowMaxTokens, keepFirst }).toEqual({ maxTokens: 100_000, overflowMaxTokens: 50_000, keepFirst: 2 })
  })

  it('counts images with the default estimate', () => {
    const photo = userMessage([text('look'), imageUrl('https://example.com/a.png')])
    const messages = [user(), say(), photo, say('nice'), user('and now?')]
    const kept = slidingWindow({ maxTokens: 1_000 })(messages, turn0)
    expect(kept).toEqual([messages[0], messages[1], messages[3], messages[4]])
    expect(slidingWindow({ maxTokens: 1_300 })(messages, turn0)).toBe(messages)
  })

  it('ignores custom messages: they cost nothing and never lead the tail', () => {
    const messages = [user(), say(), custom(), user(), custom(), calls('c1'), custom(), result('c1'), say(), custom()]
    expect(slidingWindow({ maxTokens: 70 })(messages, turn0)).toBe(messages)
    // A custom message belongs to the unit before it: the one after the head is kept with the head.
    const kept = slidingWindow({ maxTokens: 40, estimate: tens })(messages, turn0)
    expect(kept).toEqual([messages[0], messages[1], messages[2], messages[8], messages[9]])
    // The c1 unit carries the custom message inside it; the tail starts at its assistant message.
    const wider = slidingWindow({ maxTokens: 50, estimate: tens })(messages, turn0)
    expect(wider).toEqual([messages[0], messages[1], messages[2], ...messages.slice(5)])
  })

  it('reports through onCompaction only when called as a transform, not from compact', () => {
    const onCompaction = vi.fn()
    const window = slidingWindow({ maxTokens: 30, estimate: tens, onCompaction })
    const messages = [user(), say(), user(), say(), user()]
    expect(window.compact(messages).report).toMatchObject({ droppedMessages: 2 })
    expect(onCompaction).not.toHaveBeenCalled()
    window(messages, turn0)
    expect(onCompaction).toHaveBeenCalledTimes(1)
  })

  it('estimates a long history once, not every turn', () => {
    const estimate = vi.fn(tens)
    const window = slidingWindow({ maxTokens: 1_000, estimate })
    let messages: AgentMessage[] = Array.from({ length: 5_000 }, (_, i) => (i % 2 === 0 ? user() : say()))
    const first = window(messages, turn0)
    expect(first).toHaveLength(100)
    expect(estimate).toHaveBeenCalledTimes(5_000)
    messages = [...messages, user(), say()]
    window(messages, { turnIndex: 1 })
    expect(estimate).toHaveBeenCalledTimes(5_002)
  })

  it('compactionOf reports any subsequence the same way', () => {
    const messages = [user(), say(), user(), say(), user()]
    expect(compactionOf(messages, messages, { budget: 10 })).toBeUndefined()
    expect(compactionOf(messages, [messages[0]!, messages[4]!], { budget: 25, estimate: tens })).toEqual({
      droppedMessages: 3,
      droppedTokens: 30,
      keptMessages: 2,
      keptTokens: 20,
      budget: 25,
      overflow: false,
      overBudget: false,
    })
    const window = slidingWindow({ maxTokens: 30, estimate: tens })
    const { messages: kept, report } = window.compact(messages)
    expect(compactionOf(messages, kept, { budget: 30, estimate: tens })).toEqual(report)
    expect(compactionEventOf(report!).reason).toBe('window')
  })
})

// --- property: random transcripts of valid structure -------------------------------------------

type Unit = { readonly kind: 'user' | 'text'; readonly size: number } | { readonly kind: 'tools'; readonly calls: number; readonly size: number }

const unitArb: fc.Arbitrary<Unit> = fc.oneof(
  fc.record({ kind: fc.constantFrom('user' as const, 'text' as const), size: fc.nat({ max: 200 }) }),
  fc.record({ kind: fc.constant('tools' as const), calls: fc.integer({ min: 1, max: 3 }), size: fc.nat({ max: 200 }) }),
)

/** A transcript: a user message first, then units, with custom messages sprinkled in (also inside tool units). */
function transcriptOf(units: readonly Unit[], customs: readonly boolean[]): AgentMessage[] {
  const out: AgentMessage[] = [userMessage('start')]
  let c = 0
  const maybeCustom = (): void => {
    if (customs[c++ % Math.max(1, customs.length)] === true) out.push(custom())
  }
  units.forEach((unit, u) => {
    maybeCustom()
    if (unit.kind === 'user') out.push(userMessage('x'.repeat(unit.size)))
    else if (unit.kind === 'text') out.push(assistantMessage('y'.repeat(unit.size)))
    else if ('calls' in unit) {
      const ids = Array.from({ length: unit.calls }, (_, i) => `u${u}c${i}`)
      out.push(assistantMessage(ids.map((id) => toolCall(id, 'add', { pad: 'z'.repeat(unit.size) })), { stopReason: 'toolUse' }))
      for (const id of ids) {
        maybeCustom()
        out.push(result(id, 'w'.repeat(unit.size)))
      }
    }
  })
  return out
}

const isStart = (m: AgentMessage): boolean => m.role === 'user' || m.role === 'assistant'
const sum = (ms: readonly AgentMessage[]): number => ms.reduce((n, m) => n + estimateTokens(m), 0)

describe('slidingWindow: property', () => {
  it('keeps units whole, the head, the order; stays within budget unless only the newest unit is left', () => {
    fc.assert(
      fc.property(
        fc.array(unitArb, { maxLength: 25 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 7 }),
        fc.nat({ max: 4 }),
        fc.integer({ min: 0, max: 1_500 }),
        (units, customs, keepFirst, budget) => {
          const messages = transcriptOf(units, customs)
          const { messages: kept, report } = slidingWindow({ maxTokens: budget, keepFirst }).compact(messages)

          // Order preserved: the kept messages are a subsequence, by identity.
          const indices = kept.map((m) => messages.indexOf(m))
          indices.forEach((index, i) => expect(index).toBeGreaterThan(i === 0 ? -1 : indices[i - 1]!))
          expect(report === undefined).toBe(kept === messages)
          if (report !== undefined) expect(report).toEqual(compactionOf(messages, kept, { budget }))

          // The first keepFirst messages are kept.
          expect(kept.slice(0, Math.min(keepFirst, messages.length))).toEqual(messages.slice(0, keepFirst))

          // Tool calls and their results: kept together or not at all.
          const keptSet = new Set(kept)
          const callIds = new Set(kept.flatMap((m) => (m.role === 'assistant' ? m.content.flatMap((b) => (b.type === 'toolCall' ? [b.id] : [])) : [])))
          const resultIds = new Set(kept.flatMap((m) => (m.role === 'toolResult' ? [m.toolCallId] : [])))
          expect(resultIds).toEqual(callIds)

          // After every gap, the tail resumes at a user or assistant message.
          indices.forEach((index, i) => {
            if (i > 0 && index !== indices[i - 1]! + 1) expect(isStart(messages[index]!)).toBe(true)
          })

          // Within budget, unless all that is kept past the head (and its tool results) is the newest unit.
          const keptTokens = sum(kept)
          let newest = messages.length - 1
          while (newest > 0 && !isStart(messages[newest]!)) newest--
          if (keptTokens > budget) {
            let head = Math.min(keepFirst, messages.length)
            if (head > 0) while (head < messages.length && !isStart(messages[head]!)) head++
            for (const index of indices) expect(index < head || index >= newest).toBe(true)
          }

          // Maximal: the last dropped unit would not have fitted.
          const gap = indices.findIndex((index, i) => i > 0 && index !== indices[i - 1]! + 1)
          if (gap !== -1) {
            const resume = indices[gap]!
            let start = resume - 1
            while (!isStart(messages[start]!)) start--
            expect(keptSet.has(messages[start]!)).toBe(false)
            expect(keptTokens + sum(messages.slice(start, resume))).toBeGreaterThan(budget)
          }
        },
      ),
      { numRuns: 300 },
    )
  })
})

// --- through the loop ------------------------------------------------------------------------

const lookup = defineTool({
  name: 'lookup',
  description: 'Returns a long text.',
  parameters: t.type({}),
  execute: () => 'L'.repeat(400),
})

describe('slidingWindow in agentLoop', () => {
  it('bounds what the model receives each turn, keeping the tool round trip whole', async () => {
    const history: AgentMessage[] = [userMessage('the task: ' + 'T'.repeat(36)), assistantMessage('understood')]
    for (let i = 0; i < 8; i++) history.push(userMessage(`old question ${i} ` + 'q'.repeat(200)), assistantMessage(`old answer ${i} ` + 'a'.repeat(200)))
    const reports: unknown[] = []
    const window = slidingWindow({ maxTokens: 200, onCompaction: (r) => reports.push(r) })
    const model = scriptedModel([reply.toolCalls([{ id: 'k1', name: 'lookup', args: {} }, { id: 'k2', name: 'add', args: { a: 1, b: 2 } }]), reply.text('done')])
    const prompt = userMessage('new question')
    const events = await lastValueFrom(
      agentLoop(prompt, context([lookup, addTool], history), { model: model.model, streamFn: model.streamFn, transformContext: window }).pipe(toArray()),
    )
    expect(resultOf(events).messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'toolResult', 'assistant'])

    const [first, second] = model.requests
    // Turn 0: the head, the newest old exchange that fits, and the prompt.
    expect(first?.messages).toEqual([history[0], history[1], history[16], history[17], prompt])
    // Turn 1: the tool unit (call + both results) is large, so every old exchange goes; the unit stays whole.
    expect(second?.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'toolResult', 'toolResult'])
    expect(second?.messages.slice(0, 3)).toEqual([history[0], history[1], prompt])
    expect(second?.messages.slice(4)).toMatchObject([
      { role: 'toolResult', toolCallId: 'k1', content: [{ type: 'text', text: 'L'.repeat(400) }] },
      { role: 'toolResult', toolCallId: 'k2', content: [{ type: 'text', text: '3' }] },
    ])
    expect(reports).toEqual([
      expect.objectContaining({ droppedMessages: 14, overflow: false, overBudget: false }),
      expect.objectContaining({ droppedMessages: 16, overflow: false, overBudget: false }),
    ])
    // The transcript itself keeps everything.
    expect(resultOf(events).messages[0]).toBe(prompt)
  })

  it('recovers from a context overflow with the overflow budget and emits a compaction event', async () => {
    const history: AgentMessage[] = []
    for (let i = 0; i < 10; i++) history.push(userMessage(`q${i} ` + 'q'.repeat(100)), assistantMessage(`a${i} ` + 'a'.repeat(100)))
    const window = slidingWindow({ maxTokens: 100_000, overflowMaxTokens: 150 })
    const model = scriptedModel([ProviderError.of('contextOverflow', 'scripted', 'prompt is too long'), reply.text('fine')])
    const prompt = userMessage('now')
    const events = await lastValueFrom(
      agentLoop(prompt, context([], history), {
        model: model.model,
        streamFn: model.streamFn,
        transformContext: window,
        recoverOverflow: slidingWindowRecovery(window),
        retry: false,
      }).pipe(toArray()),
    )
    expect(model.requests[0]?.messages).toHaveLength(21)
    expect(model.requests[1]?.messages).toEqual([history[0], history[1], history[18], history[19], prompt])
    const compaction = events.find((e) => e.type === 'compaction')
    expect(compaction).toMatchObject({ type: 'compaction', reason: 'overflow', droppedMessages: 16, keptMessages: 5, budget: 150 })
    expect(CompactionEvent.is(compaction)).toBe(true)
    const answer = resultOf(events).messages.at(-1)
    expect(answer).toMatchObject({ role: 'assistant', stopReason: 'stop' })
  })
})
