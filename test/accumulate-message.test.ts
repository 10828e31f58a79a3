/**
 * accumulateMessage: provider chunks → messageStart / messageUpdate* / messageEnd.
 *
 * Marble tests pin the event order (as `eventLabel` labels) and when the
 * source is unsubscribed; synchronous tests over `from(chunks)` check the
 * folded message itself and the lazily produced, frozen snapshots.
 */
import { describe, expect, it } from 'vitest'
import { Observable, concat, config, from, interval, map, of, take, tap, toArray } from 'rxjs'
import { accumulateMessage, type AccumulateMessageOptions } from '../operators/accumulate-message.js'
import { chunk, eventLabel, runAgentMarbles, splitText, toolCallChunks } from '../marbles/index.js'
import type { ChunkStopReason, ProviderChunk } from '../src/types/chunk.js'
import { AgentEvent, type AssistantStreamEvent, type MessageUpdateEvent } from '../src/types/event.js'
import type { AssistantContent } from '../src/types/content.js'
import type { AssistantMessage } from '../src/types/message.js'
import { modelSpec } from '../src/types/model.js'
import type { StopReason } from '../src/types/stop-reason.js'

const rates = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }
const model = modelSpec('p', 'm', { cost: rates })

/** Runs the operator over `chunks`, synchronously, and returns every event. */
function collect(chunks: Iterable<ProviderChunk>, options: Partial<AccumulateMessageOptions> = {}): AssistantStreamEvent[] {
  let events: AssistantStreamEvent[] | undefined
  from(chunks)
    .pipe(accumulateMessage({ model, now: () => 0, ...options }), toArray())
    .subscribe({
      next: (e) => (events = e),
      error: (e: unknown) => {
        throw e
      },
    })
  if (events === undefined) throw new Error('the operator did not complete synchronously')
  return events
}

/** The message of the last event, which must be `messageEnd`. */
function endOf(events: readonly AssistantStreamEvent[]): AssistantMessage {
  const last = events.at(-1)
  if (last?.type !== 'messageEnd') throw new Error(`last event is ${String(last?.type)}, not messageEnd`)
  return last.message
}

const finalOf = (chunks: Iterable<ProviderChunk>, options: Partial<AccumulateMessageOptions> = {}): AssistantMessage =>
  endOf(collect(chunks, options))

const updates = (events: readonly AssistantStreamEvent[]): MessageUpdateEvent[] =>
  events.filter((e): e is MessageUpdateEvent => e.type === 'messageUpdate')

const textOf = (m: AssistantMessage): string =>
  m.content.map((b) => (b.type === 'text' ? b.text : '')).join('')

function isDeepFrozen(u: unknown, seen = new Set<unknown>()): boolean {
  if (u === null || typeof u !== 'object' || seen.has(u)) return true
  seen.add(u)
  if (!Object.isFrozen(u)) return false
  return Object.values(u).every((v) => isDeepFrozen(v, seen))
}

/** Chunks for marble value maps. */
const V = {
  s: chunk.start(),
  a: chunk.text('Hel'),
  b: chunk.text('lo'),
  c: chunk.text('!'),
  p: chunk.stop(),
  t: chunk.toolStart('t1', 'add'),
  f: chunk.args('t1', '{"a":1}'),
  e: chunk.toolEnd('t1'),
} satisfies Record<string, ProviderChunk>

const L = {
  S: 'msgStart:assistant',
  a: 'textDelta:"Hel"',
  b: 'textDelta:"lo"',
  c: 'textDelta:"!"',
  u: 'usage',
  t: 'toolUseStart:t1',
  f: 'toolUseArgsDelta:t1:{"a":1}',
  e: 'toolUseEnd:t1',
  E: 'msgEnd:assistant:stop',
  X: 'msgEnd:assistant:error',
  A: 'msgEnd:assistant:aborted',
}

describe('accumulateMessage: happy path', () => {
  it('emits messageStart, one update per content chunk, and messageEnd on completion', () => {
    const seen: AssistantStreamEvent[] = []
    runAgentMarbles(({ cold, expectEvents, expectSubscriptions }) => {
      const source = cold<ProviderChunk>('-s-a-b-c-p-|', V)
      const out$ = source.pipe(accumulateMessage({ model, now: () => 0 }), tap((e) => seen.push(e)))
      expectEvents(out$).toBe('-S-a-b-c---(E|)', L)
      expectSubscriptions(source.subscriptions).toBe('^----------!')
    })
    const end = endOf(seen)
    expect(end.content).toEqual([{ type: 'text', text: 'Hello!' }])
    expect(end.stopReason).toBe('stop')
    expect(end.errorMessage).toBeUndefined()
    expect(end).toMatchObject({ role: 'assistant', provider: 'p', model: 'm', responseId: 'msg', timestamp: 0 })
  })

  it('accumulates usage field by field before and after stop, computes total and cost', () => {
    const values = {
      ...V,
      u: chunk.usage({ input: 100, cacheRead: 1000, cacheWrite: 10 }),
      v: chunk.usage({ output: 50, reasoning: 20 }),
      w: chunk.usage({ input: 5, output: 30 }),
    }
    const seen: AssistantStreamEvent[] = []
    runAgentMarbles(({ cold, expectEvents, expectSubscriptions }) => {
      const source = cold<ProviderChunk>('-s-u-a-p-v-w-|', values)
      const out$ = source.pipe(accumulateMessage({ model, now: () => 0 }), tap((e) => seen.push(e)))
      // Usage before stop is an update; usage after stop emits nothing but still counts.
      expectEvents(out$).toBe('-S-u-a-------(E|)', L)
      expectSubscriptions(source.subscriptions).toBe('^------------!')
    })
    const usageUpdate = updates(seen)[0]!
    expect(usageUpdate.chunk.type).toBe('usage')
    expect(usageUpdate.message.usage).toMatchObject({ input: 100, cacheRead: 1000, cacheWrite: 10, output: 0 })

    const end = endOf(seen)
    expect(end.stopReason).toBe('stop')
    expect(end.content).toEqual([{ type: 'text', text: 'Hel' }])
    expect(end.usage).toEqual({
      input: 105,
      output: 80,
      reasoning: 20,
      cacheRead: 1000,
      cacheWrite: 10,
      total: 105 + 80 + 1000 + 10,
      extra: {},
    })
    const cost = end.cost
    expect(cost.input).toBeCloseTo((105 * 3) / 1e6, 12)
    expect(cost.output).toBeCloseTo((80 * 15) / 1e6, 12)
    expect(cost.cacheRead).toBeCloseTo((1000 * 0.3) / 1e6, 12)
    expect(cost.cacheWrite).toBeCloseTo((10 * 3.75) / 1e6, 12)
    expect(cost.total).toBeCloseTo((105 * 3 + 80 * 15 + 1000 * 0.3 + 10 * 3.75) / 1e6, 12)
  })

  it('keeps a reported total (summed) instead of computing it', () => {
    const end = finalOf([
      chunk.start(),
      chunk.usage({ input: 10, total: 12 }),
      chunk.stop(),
      chunk.usage({ output: 5, total: 6 }),
    ])
    expect(end.usage).toMatchObject({ input: 10, output: 5, total: 18 })
  })

  it('leaves usage and cost zero when no usage arrives, and prices nothing without rates', () => {
    expect(finalOf(textReply('hi')).usage.total).toBe(0)
    const noRates = finalOf([chunk.start(), chunk.text('x'), chunk.stop(), chunk.usage({ input: 1000 })], {
      model: modelSpec('p', 'm'),
    })
    expect(noRates.usage).toMatchObject({ input: 1000, total: 1000 })
    expect(noRates.cost.total).toBe(0)
  })

  it('takes model and responseId from messageStart, falling back to the model spec', () => {
    expect(finalOf([chunk.start('resp-1', 'm-2025'), chunk.stop()])).toMatchObject({ model: 'm-2025', responseId: 'resp-1' })
    const bare = finalOf([chunk.start('', ''), chunk.stop()])
    expect(bare.model).toBe('m')
    expect('responseId' in bare).toBe(false)
  })

  it.each<[ChunkStopReason, StopReason]>([
    ['endTurn', 'stop'],
    ['stopSequence', 'stop'],
    ['maxTokens', 'length'],
    ['toolUse', 'toolUse'],
    ['refusal', 'refusal'],
  ])('maps stop reason %s to %s', (reason, expected) => {
    const end = finalOf([chunk.start(), chunk.text('x'), chunk.stop(reason)])
    expect(end.stopReason).toBe(expected)
    expect(end.errorMessage).toBeUndefined()
  })

  it('every event, serialized, is a valid AgentEvent', () => {
    const events = collect([
      chunk.start(),
      chunk.thinking('hmm'),
      chunk.signature('sig'),
      chunk.text('a'),
      ...toolCallChunks('c1', 'f', { x: 1 }, 3),
      chunk.toolStart('c2', 'g'),
      chunk.args('c2', '{oops'),
      chunk.toolEnd('c2'),
      chunk.usage({ input: 3 }),
      chunk.stop('toolUse'),
    ])
    for (const e of events) expect(AgentEvent.is(JSON.parse(JSON.stringify(e)))).toBe(true)
  })
})

function textReply(text: string): ProviderChunk[] {
  return [chunk.start(), chunk.text(text), chunk.stop()]
}

describe('accumulateMessage: thinking, redaction, extension blocks', () => {
  it('concatenates thinking deltas, attaches the signature, starts a new block after a signed one', () => {
    const events = collect([
      chunk.start(),
      chunk.thinking('Let me '),
      chunk.thinking('think.'),
      chunk.signature('sig-1'),
      chunk.thinking('More '),
      chunk.thinking('thought.'),
      chunk.text('Answer'),
      chunk.text('!'),
      chunk.stop(),
    ])
    expect(events.map(eventLabel)).toEqual([
      'msgStart:assistant',
      'thinkingDelta:"Let me "',
      'thinkingDelta:"think."',
      'thinkingSignature',
      'thinkingDelta:"More "',
      'thinkingDelta:"thought."',
      'textDelta:"Answer"',
      'textDelta:"!"',
      'msgEnd:assistant:stop',
    ])
    expect(updates(events).map((u) => u.contentIndex)).toEqual([0, 0, 0, 1, 1, 2, 2])
    expect(endOf(events).content).toEqual([
      { type: 'thinking', thinking: 'Let me think.', signature: 'sig-1' },
      { type: 'thinking', thinking: 'More thought.' },
      { type: 'text', text: 'Answer!' },
    ])
  })

  it('keeps a redacted thinking block with its payload in signature, and extension blocks', () => {
    const end = finalOf([
      chunk.start(),
      chunk.redacted('ENCRYPTED'),
      chunk.thinking('visible'),
      chunk.text('a'),
      { type: 'extension', typeName: 'citation', data: { url: 'https://x', n: [1, 2] } },
      chunk.text('b'),
      chunk.stop(),
    ])
    expect(end.content).toEqual([
      { type: 'thinking', thinking: '', signature: 'ENCRYPTED', redacted: true },
      { type: 'thinking', thinking: 'visible' },
      { type: 'text', text: 'a' },
      { type: 'extension', typeName: 'citation', data: { url: 'https://x', n: [1, 2] } },
      { type: 'text', text: 'b' },
    ])
  })

  it('text after thinking, and thinking after text, start new blocks', () => {
    const end = finalOf([chunk.start(), chunk.text('a'), chunk.thinking('t'), chunk.text('b'), chunk.stop()])
    expect(end.content).toEqual([
      { type: 'text', text: 'a' },
      { type: 'thinking', thinking: 't' },
      { type: 'text', text: 'b' },
    ])
  })
})

describe('accumulateMessage: tool calls', () => {
  it('concatenates fragments per id whatever the interleaving and parses at toolUseEnd', () => {
    const seen: AssistantStreamEvent[] = []
    const values = {
      s: chunk.start(),
      t: chunk.toolStart('a', 'fa'),
      T: chunk.toolStart('b', 'fb'),
      f: chunk.args('a', '{"x":'),
      F: chunk.args('b', '{"y":"'),
      g: chunk.args('a', '[1,2]}'),
      G: chunk.args('b', 'z"}'),
      e: chunk.toolEnd('a'),
      E: chunk.toolEnd('b'),
      p: chunk.stop('toolUse'),
    }
    runAgentMarbles(({ cold, expectEvents }) => {
      const out$ = cold<ProviderChunk>('-stTfFGgEep|', values).pipe(accumulateMessage({ model, now: () => 0 }), tap((e) => seen.push(e)))
      expectEvents(out$).toBe('-stTfFGgEe-(X|)', {
        s: 'msgStart:assistant',
        t: 'toolUseStart:a',
        T: 'toolUseStart:b',
        f: 'toolUseArgsDelta:a:{"x":',
        F: 'toolUseArgsDelta:b:{"y":"',
        g: 'toolUseArgsDelta:a:[1,2]}',
        G: 'toolUseArgsDelta:b:z"}',
        e: 'toolUseEnd:a',
        E: 'toolUseEnd:b',
        X: 'msgEnd:assistant:toolUse',
      })
    })
    expect(updates(seen).map((u) => u.contentIndex)).toEqual([0, 1, 0, 1, 1, 0, 1, 0])
    // Mid-stream, before its end, a call holds its raw fragments, and its arguments parsed from them so far.
    const beforeEnds = updates(seen)[5]!.message
    expect(beforeEnds.content).toEqual([
      { type: 'toolCall', id: 'a', name: 'fa', arguments: { x: [1, 2] }, partialJson: '{"x":[1,2]}' },
      { type: 'toolCall', id: 'b', name: 'fb', arguments: { y: 'z' }, partialJson: '{"y":"z"}' },
    ])
    expect(updates(seen)[3]!.message.content).toEqual([
      { type: 'toolCall', id: 'a', name: 'fa', arguments: {}, partialJson: '{"x":' },
      { type: 'toolCall', id: 'b', name: 'fb', arguments: { y: '' }, partialJson: '{"y":"' },
    ])
    const end = endOf(seen)
    expect(end.stopReason).toBe('toolUse')
    expect(end.content).toEqual([
      { type: 'toolCall', id: 'a', name: 'fa', arguments: { x: [1, 2] } },
      { type: 'toolCall', id: 'b', name: 'fb', arguments: { y: 'z' } },
    ])
    for (const block of end.content) expect(block).not.toHaveProperty('partialJson')
  })

  it('treats empty (or blank) arguments as {}', () => {
    const end = finalOf([
      chunk.start(),
      chunk.toolStart('a', 'f'),
      chunk.toolEnd('a'),
      chunk.toolStart('b', 'g'),
      chunk.args('b', '  '),
      chunk.toolEnd('b'),
      chunk.stop('toolUse'),
    ])
    expect(end.content).toEqual([
      { type: 'toolCall', id: 'a', name: 'f', arguments: {} },
      { type: 'toolCall', id: 'b', name: 'g', arguments: {} },
    ])
  })

  it('keeps partialJson and sets parseError for invalid JSON or non-object JSON', () => {
    const end = finalOf([
      chunk.start(),
      ...toolCallChunks('a', 'f', { ok: true }),
      chunk.toolStart('b', 'g'),
      chunk.args('b', '{"x": 1'),
      chunk.toolEnd('b'),
      chunk.toolStart('c', 'h'),
      chunk.args('c', '[1]'),
      chunk.toolEnd('c'),
      chunk.toolStart('d', 'i'),
      chunk.args('d', 'null'),
      chunk.toolEnd('d'),
      chunk.toolStart('e', 'j'),
      chunk.args('e', '"str"'),
      chunk.toolEnd('e'),
      chunk.stop('toolUse'),
    ])
    expect(end.stopReason).toBe('toolUse')
    const [a, b, c, d, e] = end.content
    expect(a).toEqual({ type: 'toolCall', id: 'a', name: 'f', arguments: { ok: true } })
    expect(b).toMatchObject({ type: 'toolCall', id: 'b', arguments: {}, partialJson: '{"x": 1', parseError: expect.stringContaining('not valid JSON') })
    expect(c).toMatchObject({ id: 'c', arguments: {}, partialJson: '[1]', parseError: expect.stringContaining('an array') })
    expect(d).toMatchObject({ id: 'd', arguments: {}, partialJson: 'null', parseError: expect.stringContaining('JSON object') })
    expect(e).toMatchObject({ id: 'e', arguments: {}, partialJson: '"str"', parseError: expect.stringContaining('JSON object') })
  })

  it('a call never ended keeps partialJson without parseError', () => {
    const end = finalOf([chunk.start(), chunk.toolStart('a', 'f'), chunk.args('a', '{"x":1}'), chunk.stop('toolUse')])
    expect(end.content).toEqual([{ type: 'toolCall', id: 'a', name: 'f', arguments: {}, partialJson: '{"x":1}' }])
    expect(end.stopReason).toBe('toolUse')
  })

  it('keeps own "__proto__" keys of the arguments as data', () => {
    const raw = '{"__proto__":{"polluted":true},"y":2}'
    const end = finalOf([chunk.start(), chunk.toolStart('a', 'f'), chunk.args('a', raw), chunk.toolEnd('a'), chunk.stop('toolUse')])
    const block = end.content[0]
    if (block?.type !== 'toolCall') throw new Error('expected a tool call')
    expect(Object.keys(block.arguments)).toEqual(['__proto__', 'y'])
    expect(Object.getPrototypeOf(block.arguments)).toBe(Object.prototype)
    expect(JSON.stringify(block.arguments)).toBe(raw)
  })

  it('text between tool calls stays in its own blocks, tool fragments in between do not split text', () => {
    const end = finalOf([
      chunk.start(),
      chunk.text('a'),
      chunk.toolStart('x', 'f'),
      chunk.text('b'),
      chunk.args('x', '{}'),
      chunk.text('c'),
      chunk.toolEnd('x'),
      chunk.text('d'),
      chunk.stop('toolUse'),
    ])
    expect(end.content).toEqual([
      { type: 'text', text: 'a' },
      { type: 'toolCall', id: 'x', name: 'f', arguments: {} },
      { type: 'text', text: 'bcd' },
    ])
  })
})

interface Violation {
  readonly name: string
  readonly source: string
  readonly values: Record<string, ProviderChunk>
  readonly out: string
  readonly subs: string
  readonly problem: string
  readonly content: readonly AssistantContent[]
}

const violations: Violation[] = [
  {
    name: 'first chunk is not messageStart',
    source: '-a-s-p-|',
    values: V,
    out: '-(SX|)',
    subs: '^!',
    problem: "the first chunk must be 'messageStart', got 'textDelta'",
    content: [],
  },
  {
    name: 'a second messageStart',
    source: '-s-a-s-b-p-|',
    values: V,
    out: '-S-a-(X|)',
    subs: '^----!',
    problem: "a second 'messageStart' arrived",
    content: [{ type: 'text', text: 'Hel' }],
  },
  {
    name: 'a non-usage chunk after stop',
    source: '-s-a-p-b-|',
    values: V,
    out: '-S-a---(X|)',
    subs: '^------!',
    problem: "'textDelta' arrived after 'stop'",
    content: [{ type: 'text', text: 'Hel' }],
  },
  {
    name: 'an args delta for an unknown id',
    source: '-s-a-t-x-e-p-|',
    values: { ...V, x: chunk.args('zz', '{}') },
    out: '-S-a-t-(X|)',
    subs: '^------!',
    problem: "'toolUseArgsDelta' for tool use 'zz', which never started",
    content: [
      { type: 'text', text: 'Hel' },
      { type: 'toolCall', id: 't1', name: 'add', arguments: {}, partialJson: '' },
    ],
  },
  {
    name: "an args delta after that id's end",
    source: '-s-t-f-e-x-p-|',
    values: { ...V, x: chunk.args('t1', '{}') },
    out: '-S-t-f-e-(X|)',
    subs: '^--------!',
    problem: "'toolUseArgsDelta' for tool use 't1' after its end",
    content: [{ type: 'toolCall', id: 't1', name: 'add', arguments: { a: 1 } }],
  },
  {
    name: 'toolUseEnd twice',
    source: '-s-t-f-e-e-p-|',
    values: V,
    out: '-S-t-f-e-(X|)',
    subs: '^--------!',
    problem: "'toolUseEnd' for tool use 't1' after its end",
    content: [{ type: 'toolCall', id: 't1', name: 'add', arguments: { a: 1 } }],
  },
  {
    name: 'toolUseStart with a duplicate id',
    source: '-s-t-f-t-e-p-|',
    values: V,
    out: '-S-t-f-(X|)',
    subs: '^------!',
    problem: "tool use 't1' started twice",
    content: [{ type: 'toolCall', id: 't1', name: 'add', arguments: {}, partialJson: '{"a":1}' }],
  },
  {
    name: 'an unknown chunk type',
    source: '-s-a-x-p-|',
    values: { ...V, x: { type: 'bogus' } as unknown as ProviderChunk },
    out: '-S-a-(X|)',
    subs: '^----!',
    problem: "unknown chunk type 'bogus'",
    content: [{ type: 'text', text: 'Hel' }],
  },
  {
    name: 'a stop with an unknown reason',
    source: '-s-a-x-p-|',
    values: { ...V, x: { type: 'stop', reason: 'sleepy' } as unknown as ProviderChunk },
    out: '-S-a-(X|)',
    subs: '^----!',
    problem: "'stop' has an unknown reason 'sleepy'",
    content: [{ type: 'text', text: 'Hel' }],
  },
]

describe('accumulateMessage: contract violations', () => {
  it.each(violations)('$name → error message, partial content kept, source dropped at once', (v) => {
    const seen: AssistantStreamEvent[] = []
    runAgentMarbles(({ cold, expectEvents, expectSubscriptions }) => {
      const source = cold<ProviderChunk>(v.source, v.values)
      const out$ = source.pipe(accumulateMessage({ model, now: () => 0 }), tap((e) => seen.push(e)))
      expectEvents(out$).toBe(v.out, { ...L, t: 'toolUseStart:t1' })
      expectSubscriptions(source.subscriptions).toBe(v.subs)
    })
    const end = endOf(seen)
    expect(end.stopReason).toBe('error')
    expect(end.errorMessage).toContain('stream contract violated')
    expect(end.errorMessage).toContain(v.problem)
    expect(end.content).toEqual(v.content)
  })

  it('drops a hot source at the violating frame', () => {
    runAgentMarbles(({ hot, expectEvents, expectSubscriptions }) => {
      const source = hot<ProviderChunk>('--^-s-a-s-b-p-|', V)
      expectEvents(source.pipe(accumulateMessage({ model, now: () => 0 }))).toBe('--S-a-(X|)', L)
      expectSubscriptions(source.subscriptions).toBe('^-----!')
    })
  })

  it("a stop whose reason is 'constructor' is a contract violation", () => {
    const end = finalOf([chunk.start(), chunk.text('x'), { type: 'stop', reason: 'constructor' } as unknown as ProviderChunk])
    expect(end.stopReason).toBe('error')
    expect(end.errorMessage).toContain("'stop' has an unknown reason 'constructor'")
  })
})

describe('accumulateMessage: a stream that ends badly', () => {
  it("completes without stop → error, saying it ended without a 'stop'", () => {
    const seen: AssistantStreamEvent[] = []
    runAgentMarbles(({ cold, expectEvents }) => {
      const out$ = cold<ProviderChunk>('-s-a-b-|', V).pipe(accumulateMessage({ model, now: () => 0 }), tap((e) => seen.push(e)))
      expectEvents(out$).toBe('-S-a-b-(X|)', L)
    })
    const end = endOf(seen)
    expect(end.stopReason).toBe('error')
    expect(end.errorMessage).toContain("without a 'stop'")
    expect(end.content).toEqual([{ type: 'text', text: 'Hello' }])
  })

  it('errors (#) → error with the error message, partial text kept, never errors itself', () => {
    const seen: AssistantStreamEvent[] = []
    runAgentMarbles(({ cold, expectEvents }) => {
      const out$ = cold<ProviderChunk>('-s-a-b-#', V, new Error('socket hang up')).pipe(
        accumulateMessage({ model, now: () => 0 }),
        tap((e) => seen.push(e)),
      )
      expectEvents(out$).toBe('-S-a-b-(X|)', L)
    })
    const end = endOf(seen)
    expect(end.stopReason).toBe('error')
    expect(end.errorMessage).toBe('socket hang up')
    expect(end.content).toEqual([{ type: 'text', text: 'Hello' }])
  })

  it("an error named 'AbortError' → aborted", () => {
    const seen: AssistantStreamEvent[] = []
    const abortError = Object.assign(new Error('user cancelled'), { name: 'AbortError' })
    runAgentMarbles(({ cold, expectEvents }) => {
      const out$ = cold<ProviderChunk>('-s-a-#', V, abortError).pipe(accumulateMessage({ model, now: () => 0 }), tap((e) => seen.push(e)))
      expectEvents(out$).toBe('-S-a-(A|)', L)
    })
    const end = endOf(seen)
    expect(end.stopReason).toBe('aborted')
    expect(end.errorMessage).toBe('user cancelled')
    expect(end.content).toEqual([{ type: 'text', text: 'Hel' }])
  })

  it('a DOMException AbortError → aborted too', () => {
    const events: AssistantStreamEvent[] = []
    concat(of(chunk.start(), chunk.text('x')), new Observable<ProviderChunk>((s) => s.error(new DOMException('gone', 'AbortError'))))
      .pipe(accumulateMessage({ model, now: () => 0 }))
      .subscribe((e) => events.push(e))
    expect(endOf(events)).toMatchObject({ stopReason: 'aborted', errorMessage: 'gone', content: [{ type: 'text', text: 'x' }] })
  })

  it('an error before any chunk → messageStart + messageEnd with empty content', () => {
    const seen: AssistantStreamEvent[] = []
    runAgentMarbles(({ cold, expectEvents }) => {
      const out$ = cold<ProviderChunk>('--#', V, new Error('refused')).pipe(accumulateMessage({ model, now: () => 0 }), tap((e) => seen.push(e)))
      expectEvents(out$).toBe('--(SX|)', L)
    })
    expect(seen[0]?.message.content).toEqual([])
    const end = endOf(seen)
    expect(end).toMatchObject({ stopReason: 'error', errorMessage: 'refused', content: [] })
  })

  it('an empty stream → messageStart + messageEnd with error', () => {
    const events = collect([])
    expect(events.map(eventLabel)).toEqual(['msgStart:assistant', 'msgEnd:assistant:error'])
    expect(endOf(events).errorMessage).toContain("without a 'stop'")
  })
})

describe('accumulateMessage: abort option', () => {
  it('a hot abort mid-stream ends the message as aborted at that frame and drops the source', () => {
    const seen: AssistantStreamEvent[] = []
    runAgentMarbles(({ cold, hot, expectEvents, expectSubscriptions }) => {
      const source = cold<ProviderChunk>('-s-a-b-c-p-|', V)
      const abort = hot('------x')
      const out$ = source.pipe(accumulateMessage({ model, now: () => 0, abort }), tap((e) => seen.push(e)))
      expectEvents(out$).toBe('-S-a-b(A|)', L)
      expectSubscriptions(source.subscriptions).toBe('^-----!')
      expectSubscriptions(abort.subscriptions).toBe('^-----!')
    })
    const end = endOf(seen)
    expect(end.stopReason).toBe('aborted')
    expect(end.errorMessage).toBeTruthy()
    expect(end.content).toEqual([{ type: 'text', text: 'Hello' }])
  })

  it('an abort after the end changes nothing, and the notifier is released at the end', () => {
    runAgentMarbles(({ cold, hot, expectEvents, expectSubscriptions }) => {
      const source = cold<ProviderChunk>('-s-a-p|', V)
      const abort = hot('----------x')
      expectEvents(source.pipe(accumulateMessage({ model, now: () => 0, abort }))).toBe('-S-a--(E|)', L)
      expectSubscriptions(abort.subscriptions).toBe('^-----!')
    })
  })

  it('an abort already signalled before subscribe → immediate aborted message, source never subscribed', () => {
    runAgentMarbles(({ cold, expectEvents, expectSubscriptions }) => {
      const source = cold<ProviderChunk>('-s-a-p-|', V)
      expectEvents(source.pipe(accumulateMessage({ model, now: () => 0, abort: of(1) }))).toBe('(SA|)', L)
      expectSubscriptions(source.subscriptions).toBe([])
    })
    const events = collect(textReply('never'), { abort: of('now') })
    expect(events.map(eventLabel)).toEqual(['msgStart:assistant', 'msgEnd:assistant:aborted'])
    expect(endOf(events)).toMatchObject({ content: [], stopReason: 'aborted' })
  })
})

describe('accumulateMessage: teardown', () => {
  it('unsubscribing the output mid-stream unsubscribes the source and emits nothing more', () => {
    runAgentMarbles(({ cold, expectEvents, expectSubscriptions }) => {
      const source = cold<ProviderChunk>('-s-a-b-c-p-|', V)
      expectEvents(source.pipe(accumulateMessage({ model, now: () => 0 })), '^----!').toBe('-S-a-', L)
      expectSubscriptions(source.subscriptions).toBe('^----!')
    })
  })

  it('leaves no scheduled action behind after unsubscribing from an endless source', () => {
    let pendingAfter: number | undefined
    let produced = 0
    runAgentMarbles(({ expectEvents, scheduler }) => {
      const endless$ = concat(
        of(chunk.start()),
        interval(2).pipe(
          take(100),
          map((i) => chunk.text(String(i))),
          tap(() => produced++),
        ),
      )
      expectEvents(endless$.pipe(accumulateMessage({ model, now: () => 0 })), '^------!').toBe('S-a-b-c', {
        S: 'msgStart:assistant',
        a: 'textDelta:"0"',
        b: 'textDelta:"1"',
        c: 'textDelta:"2"',
      })
      scheduler.schedule(() => (pendingAfter = scheduler.actions.length), 20)
    })
    expect(pendingAfter).toBe(0)
    expect(produced).toBe(3)
  })

  it('stops pulling a synchronous source at a contract violation', () => {
    let pulled = 0
    function* chunks(): Generator<ProviderChunk> {
      yield chunk.start()
      yield chunk.start()
      for (let i = 0; i < 100; i++) {
        pulled++
        yield chunk.text('x')
      }
    }
    expect(endOf(collect(chunks())).stopReason).toBe('error')
    expect(pulled).toBe(0)
  })

  it('stops pulling a synchronous source when the output is unsubscribed', () => {
    let pulled = 0
    function* chunks(): Generator<ProviderChunk> {
      yield chunk.start()
      for (let i = 0; i < 100; i++) {
        pulled++
        yield chunk.text('x')
      }
    }
    const got: AssistantStreamEvent[] = []
    from(chunks())
      .pipe(accumulateMessage({ model, now: () => 0 }), take(2))
      .subscribe((e) => got.push(e))
    expect(got).toHaveLength(2)
    expect(pulled).toBeLessThanOrEqual(2)
  })
})

describe('accumulateMessage: snapshots', () => {
  const script = [chunk.start(), ...splitText('abcdefghij', 10).map(chunk.text), chunk.stop(), chunk.usage({ input: 1 })]

  it('update, start and end messages are deeply frozen', () => {
    const events = collect([
      chunk.start(),
      chunk.thinking('t'),
      chunk.signature('s'),
      chunk.text('a'),
      ...toolCallChunks('c', 'f', { nested: { deep: [1, { x: 2 }] } }, 2),
      { type: 'extension', typeName: 'x', data: { a: { b: 1 } } },
      chunk.usage({ output: 3 }),
      chunk.stop(),
    ])
    for (const e of events) {
      expect(Object.isFrozen(e.message)).toBe(true)
      expect(Object.isFrozen(e.message.content)).toBe(true)
      for (const block of e.message.content) expect(Object.isFrozen(block)).toBe(true)
      expect(isDeepFrozen(e.message)).toBe(true)
    }
    const end = endOf(events)
    expect(() => {
      ;(end.content as AssistantContent[]).push({ type: 'text', text: 'no' })
    }).toThrow()
  })

  it('a call with no arguments (before parsing, and streamed as "") has frozen arguments', () => {
    const events = collect([
      chunk.start(),
      { type: 'toolUseStart', id: 'c', name: 'f' },
      { type: 'toolUseArgsDelta', id: 'c', fragment: '' },
      { type: 'toolUseEnd', id: 'c' },
      chunk.stop(),
    ])
    const calls = events.flatMap((e) => e.message.content).filter((b) => b.type === 'toolCall')
    expect(calls.length).toBeGreaterThan(0)
    for (const call of calls) {
      expect(call.arguments).toEqual({})
      expect(Object.isFrozen(call.arguments)).toBe(true)
    }
    for (const e of events) expect(isDeepFrozen(e.message)).toBe(true)
  })

  it('an old event read after later ones (in reverse) is the snapshot as of that event', () => {
    const events = collect(script)
    const ups = updates(events)
    expect(ups).toHaveLength(10)
    const text = 'abcdefghij'
    // Read the newest first, then go back in time.
    for (let i = ups.length - 1; i >= 0; i--) {
      expect(textOf(ups[i]!.message)).toBe(text.slice(0, i + 1))
      expect(ups[i]!.message.content).toHaveLength(1)
    }
    // And forwards again, interleaved with random access.
    for (const i of [3, 9, 0, 5, 5, 1]) expect(textOf(ups[i]!.message)).toBe(text.slice(0, i + 1))
    expect(textOf(endOf(events))).toBe(text)
    expect(endOf(events).usage.input).toBe(1)
  })

  it('a snapshot read during the stream stays as it was after later chunks', () => {
    const early: AssistantMessage[] = []
    const events: AssistantStreamEvent[] = []
    from(script)
      .pipe(accumulateMessage({ model, now: () => 0 }))
      .subscribe((e) => {
        events.push(e)
        if (e.type === 'messageUpdate') early.push(e.message)
      })
    const ups = updates(events)
    early.forEach((m, i) => expect(textOf(m)).toBe('abcdefghij'.slice(0, i + 1)))
    ups.forEach((u, i) => expect(u.message).toEqual(early[i]))
    // The latest read is memoized.
    const last = ups.at(-1)!
    expect(last.message).toBe(last.message)
  })

  it('reading the same event twice gives the same object', () => {
    const ups = updates(collect(script))
    const first = ups[0]!.message
    void ups[1]!.message
    expect(ups[0]!.message).toBe(first)
  })

  it('shares blocks a later chunk did not touch (structural sharing)', () => {
    const chunks = [
      chunk.start(),
      chunk.thinking('t'),
      chunk.signature('s'),
      chunk.text('a'),
      chunk.toolStart('c', 'f'),
      chunk.args('c', '{"x"'),
      chunk.args('c', ':1}'),
      chunk.usage({ input: 2 }),
      chunk.toolEnd('c'),
      chunk.stop(),
    ]
    const check = (ups: readonly MessageUpdateEvent[], messages: readonly AssistantMessage[], pairs = ups.length): void => {
      for (let i = 1; i < pairs; i++) {
        const prev = messages[i - 1]!
        const next = messages[i]!
        const touched = ups[i]!.chunk.type === 'usage' ? -1 : ups[i]!.contentIndex
        expect(next).not.toBe(prev)
        prev.content.forEach((block, j) => {
          if (j !== touched) expect(next.content[j]).toBe(block)
        })
        if (ups[i]!.chunk.type !== 'usage') expect(next.usage).toBe(prev.usage)
      }
    }
    // Read after the stream, in order. The last update's snapshot was produced
    // for messageEnd before any other was read, so it shares with none of them.
    const late = updates(collect(chunks))
    check(
      late,
      late.map((u) => u.message),
      late.length - 1,
    )
    // Read while streaming: the end message also shares every block with the last update.
    const events: AssistantStreamEvent[] = []
    const read: AssistantMessage[] = []
    from(chunks)
      .pipe(accumulateMessage({ model, now: () => 0 }))
      .subscribe((e) => {
        events.push(e)
        if (e.type === 'messageUpdate') read.push(e.message)
      })
    check(updates(events), read)
    const last = read.at(-1)!
    endOf(events).content.forEach((block, j) => expect(block).toBe(last.content[j]))
  })

  it('JSON.stringify of an update includes its message', () => {
    const events = collect(script)
    const u = updates(events)[2]!
    const json = JSON.parse(JSON.stringify(u)) as { type: string; message: AssistantMessage; chunk: ProviderChunk; contentIndex: number }
    expect(json).toEqual({ type: 'messageUpdate', message: u.message, chunk: chunk.text('c'), contentIndex: 0 })
    expect(textOf(json.message)).toBe('abc')
  })

  it('over 1000 unread chunks still give correct snapshots (the log rebased every MAX_UNREAD, 256)', () => {
    const n = 1300
    const events = collect([chunk.start(), ...Array.from({ length: n }, (_, i) => chunk.text(`${i % 10}`)), chunk.stop()])
    const full = Array.from({ length: n }, (_, i) => `${i % 10}`).join('')
    const ups = updates(events)
    expect(ups).toHaveLength(n)
    expect(textOf(endOf(events))).toBe(full)
    // Around every rebase boundary, in an unfriendly order.
    for (const i of [1299, 0, 510, 511, 512, 513, 1022, 1023, 1024, 1025, 700, 1]) {
      expect(textOf(ups[i]!.message)).toBe(full.slice(0, i + 1))
    }
  })

  it('over 1000 chunks with some read mid-stream and the rest unread', () => {
    const n = 1200
    const read = new Map<number, string>()
    const events: AssistantStreamEvent[] = []
    let k = 0
    from([chunk.start(), ...Array.from({ length: n }, () => chunk.text('z')), chunk.stop(), chunk.usage({ output: 7 })])
      .pipe(accumulateMessage({ model, now: () => 0 }))
      .subscribe((e) => {
        events.push(e)
        if (e.type === 'messageUpdate') {
          if (k % 333 === 0) read.set(k, textOf(e.message))
          k++
        }
      })
    const ups = updates(events)
    expect(read.size).toBe(4)
    for (const [i, t] of read) expect(t).toBe('z'.repeat(i + 1))
    for (const i of [1199, 600, 2, 1000]) expect(textOf(ups[i]!.message)).toBe('z'.repeat(i + 1))
    expect(endOf(events).usage.output).toBe(7)
  })

  it('long text and thinking blocks (past the 4096-character flattening) read right at every point, in order and out of order', () => {
    // Deltas of 1 to 37 characters, so the flattening threshold falls inside a delta.
    const deltas = Array.from({ length: 900 }, (_, i) => `${i}:` + 'x'.repeat(i % 37))
    const thinking = deltas.slice(0, 400).map((d) => d.toUpperCase())
    const chunks = [chunk.start(), ...thinking.map(chunk.thinking), chunk.signature('sig'), ...deltas.map(chunk.text), chunk.stop()]
    const inOrder: [number, AssistantMessage][] = []
    const events: AssistantStreamEvent[] = []
    let k = 0
    from(chunks)
      .pipe(accumulateMessage({ model, now: () => 0 }))
      .subscribe((e) => {
        events.push(e)
        // Every 7th update is read as it arrives; the rest only afterwards.
        if (e.type === 'messageUpdate' && k++ % 7 === 0) inOrder.push([k - 1, e.message])
      })
    const ups = updates(events)
    const thinkingText = thinking.join('')
    const text = deltas.join('')
    expect(thinkingText.length).toBeGreaterThan(4096)
    expect(text.length).toBeGreaterThan(3 * 4096)
    const final = endOf(events)
    expect(final.content[0]).toEqual({ type: 'thinking', thinking: thinkingText, signature: 'sig' })
    expect(textOf(final)).toBe(text)
    expect(inOrder.length).toBeGreaterThan(100)
    for (const [i, message] of inOrder) expect(message).toBe(ups[i]!.message)
    const upTo = (i: number): string => (i <= 400 ? '' : deltas.slice(0, i - 400).join(''))
    for (const [i, message] of inOrder) expect(textOf(message)).toBe(upTo(i))
    // Text updates start after the 400 thinking deltas and the signature.
    for (const i of [401, 500, 777, 1300, 1000, 402, 1200]) {
      expect(textOf(ups[i]!.message)).toBe(deltas.slice(0, i - 400).join(''))
    }
    const midThinking = ups[250]!.message.content[0]
    expect(midThinking).toEqual({ type: 'thinking', thinking: thinking.slice(0, 251).join('') })
  })
})

describe('accumulateMessage: timestamp', () => {
  it('messageStart (and every snapshot) carries now() at subscription, in virtual time', () => {
    const seen: AssistantStreamEvent[] = []
    runAgentMarbles(({ cold, expectEvents, scheduler }) => {
      const out$ = cold<ProviderChunk>('-s-a-p|', V).pipe(
        accumulateMessage({ model, now: () => scheduler.now() }),
        tap((e) => seen.push(e)),
      )
      expectEvents(out$, '---^').toBe('----S-a--(E|)', L)
    })
    expect(seen.map((e) => e.message.timestamp)).toEqual([3, 3, 3])
  })

  it('uses the given now function once per subscription', () => {
    let calls = 0
    const now = (): number => 1_700_000_000_000 + calls++
    const first = collect(textReply('x'), { now })
    expect(first.map((e) => e.message.timestamp)).toEqual([1_700_000_000_000, 1_700_000_000_000, 1_700_000_000_000])
    const second = collect(textReply('x'), { now })
    expect(endOf(second).timestamp).toBe(1_700_000_000_001)
  })
})

describe('accumulateMessage: usage extra', () => {
  /** Runs `fn` with RxJS's unhandled errors (thrown later from a timeout) collected instead. */
  async function catchingUnhandled(fn: () => void): Promise<unknown[]> {
    const errors: unknown[] = []
    const previous = config.onUnhandledError
    config.onUnhandledError = (e) => errors.push(e)
    try {
      fn()
      await new Promise((resolve) => setTimeout(resolve, 0))
    } finally {
      config.onUnhandledError = previous
    }
    return errors
  }

  it('sums usage.extra key-wise', async () => {
    const events: AssistantStreamEvent[] = []
    let completed = false
    const errors = await catchingUnhandled(() => {
      from([chunk.start(), chunk.text('a'), chunk.stop(), chunk.usage({ input: 1, extra: { web: 2 } }), chunk.usage({ extra: { web: 1, fetch: 4 } })])
        .pipe(accumulateMessage({ model, now: () => 0 }))
        .subscribe({ next: (e) => events.push(e), complete: () => (completed = true) })
    })
    expect(errors).toEqual([])
    expect(completed).toBe(true)
    expect(endOf(events).usage.extra).toEqual({ web: 3, fetch: 4 })
  })

  it('a mid-stream usage update with extra has a readable snapshot', async () => {
    const events: AssistantStreamEvent[] = []
    await catchingUnhandled(() => {
      from([chunk.start(), chunk.usage({ extra: { web: 2 } }), chunk.stop()])
        .pipe(accumulateMessage({ model, now: () => 0 }))
        .subscribe((e) => events.push(e))
    })
    const update = updates(events)[0]
    expect(update?.message.usage.extra).toEqual({ web: 2 })
  })
})
