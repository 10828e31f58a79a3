/**
 * The same message objects in a second transcript (two Agents restored from
 * one checkpoint, `new Agent({ messages: other.state.messages })`): the memos
 * answer for it after one identity comparison, also when it is a prefix of a
 * transcript remembered before, and never compare it again. Reads of the
 * transcript's elements are counted through a Proxy over a frozen array (a
 * Proxy is frozen when its target is), without timing anything.
 */
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { Agent } from '../src/agent/agent.js'
import { appendMessages, lineageOf } from '../src/types/growing-transcript.js'
import { text } from '../src/types/content.js'
import { assistantMessage, userMessage, type AgentMessage } from '../src/types/message.js'
import { repairTranscript, validTranscript } from '../src/types/settle.js'
import { TranscriptMemo, type PrefixFacts } from '../src/types/transcript-memo.js'
import { reply, scriptedModel } from '../marbles/index.js'

const history = (n: number): AgentMessage[] => Array.from({ length: n }, (_, i) => Object.freeze(i % 2 === 0 ? userMessage(`u${i}`) : assistantMessage(`a${i}`)))
const call = (...ids: string[]): AgentMessage =>
  Object.freeze(assistantMessage(ids.map((id) => ({ type: 'toolCall' as const, id, name: 'f', arguments: {} })), { stopReason: 'toolUse' }))
const result = (id: string): AgentMessage => Object.freeze({ role: 'toolResult', toolCallId: id, toolName: 'f', content: [text('r')], isError: false, timestamp: 0 })

/** A frozen transcript of `messages` whose element reads are counted in `reads.count`. */
function counted(messages: readonly AgentMessage[]): { readonly list: readonly AgentMessage[]; readonly reads: { count: number } } {
  const reads = { count: 0 }
  const list = new Proxy(Object.freeze([...messages]), {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads.count++
      return Reflect.get(target, key, receiver) as unknown
    },
  })
  return { list, reads }
}

describe('TranscriptMemo: the same messages in another array', () => {
  it('answers for a prefix of a remembered transcript, with the longer facts', () => {
    const memo = new TranscriptMemo<PrefixFacts>()
    const messages = history(10)
    memo.record(Object.freeze([...messages]), { length: 10 })
    expect(memo.find(Object.freeze(messages.slice(0, 6)))).toEqual({ length: 10 })
    expect(memo.find(messages.slice(0, 6))).toEqual({ length: 10 })
  })

  it('compares a transcript once: the next lookups, in this memo or another, read its first message only', () => {
    const one = new TranscriptMemo<PrefixFacts>()
    const two = new TranscriptMemo<PrefixFacts>()
    const messages = history(50)
    // A transcript an Agent built (its own lineage), as the first Agent restored from `messages` holds.
    const seen = appendMessages(Object.freeze([]), messages)
    one.record(seen, { length: 50 })
    two.record(seen, { length: 50 })
    for (const size of [50, 30]) {
      const { list, reads } = counted(messages.slice(0, size))
      expect(one.find(list)).toEqual({ length: 50 })
      expect(reads.count).toBeGreaterThanOrEqual(size)
      reads.count = 0
      expect(one.find(list)).toEqual({ length: 50 })
      expect(two.find(list)).toEqual({ length: 50 })
      expect(reads.count).toBeLessThanOrEqual(1)
    }
  })

  it('still tells apart a transcript that differs anywhere, longer, shorter or as long', () => {
    const memo = new TranscriptMemo<PrefixFacts>()
    const messages = history(10)
    memo.record(Object.freeze([...messages]), { length: 10 })
    for (const size of [6, 10, 12]) {
      for (const at of [1, 5]) {
        const other = [...history(12)].slice(0, size)
        for (let i = 0; i < Math.min(size, 10); i++) other[i] = messages[i]!
        other[at] = Object.freeze(userMessage('other'))
        expect(memo.find(Object.freeze(other))).toBeUndefined()
      }
    }
  })

  it('a shorter or equal fact is kept for the lineage of a growing transcript, a longer one is not', () => {
    const memo = new TranscriptMemo<PrefixFacts>()
    const messages = history(10)
    memo.record(Object.freeze(messages.slice(0, 8)), { length: 8 })
    const grown = appendMessages(Object.freeze([]), messages)
    expect(memo.find(grown)).toEqual({ length: 8 })
    // Same lineage, found without comparing.
    expect(memo.findLineage(lineageOf(grown)!)).toEqual({ length: 8 })

    const longer = new TranscriptMemo<PrefixFacts>()
    longer.record(Object.freeze([...messages]), { length: 10 })
    const short = appendMessages(Object.freeze([]), messages.slice(0, 4))
    expect(longer.find(short)).toEqual({ length: 10 })
    // The lineage goes on with other messages: the longer fact must not be its.
    const branched = appendMessages(short, [Object.freeze(userMessage('else'))])
    expect(longer.find(branched)).toBeUndefined()
  })
})

describe('the validity check for a prefix of a valid transcript', () => {
  const messages = [...history(20), call('c1'), result('c1'), call('c2', 'c3'), result('c3'), result('c2'), ...history(4)]

  it('is answered by a walk back to the last turn, not over the whole transcript', () => {
    expect(repairTranscript(Object.freeze([...messages])).repairs).toEqual([])
    for (const size of [20, 22, messages.length - 1]) {
      const { list, reads } = counted(messages.slice(0, size))
      // Compared by identity once (one read a message), not checked message by message as well.
      expect(validTranscript(list)).toBe(list)
      expect(reads.count).toBeLessThan(size + 10)
      reads.count = 0
      expect(validTranscript(list)).toBe(list)
      expect(reads.count).toBeLessThan(10)
    }
  })

  it('a prefix cut inside a tool turn is still repaired', () => {
    const valid = Object.freeze([...messages])
    expect(repairTranscript(valid).repairs).toEqual([])
    expect(repairTranscript(Object.freeze(messages.slice(0, 21))).repairs).toEqual([{ kind: 'missingResult', toolCallId: 'c1', index: 20 }])
    expect(repairTranscript(Object.freeze(messages.slice(0, 24))).repairs).toEqual([{ kind: 'missingResult', toolCallId: 'c2', index: 22 }])
    expect(repairTranscript(Object.freeze(messages.slice(0, 23))).repairs.map((r) => r.toolCallId)).toEqual(['c2', 'c3'])
    expect(repairTranscript(Object.freeze(messages.slice(0, 25))).repairs).toEqual([])
  })
})

describe('every prefix of a remembered transcript, against a fresh check', () => {
  it('gets the repairs a copy of new objects gets', () => {
    const item = fc.oneof(
      fc.constantFrom('user', 'text'),
      fc.record({ calls: fc.uniqueArray(fc.nat({ max: 4 }), { minLength: 1, maxLength: 3 }) }),
      fc.record({ result: fc.nat({ max: 4 }) }),
    )
    const make = (it: string | { calls: number[] } | { result: number }): AgentMessage =>
      typeof it === 'string'
        ? Object.freeze(it === 'user' ? userMessage('u') : assistantMessage('a'))
        : 'calls' in it
          ? call(...it.calls.map((c) => `c${c}`))
          : result(`c${it.result}`)
    fc.assert(
      fc.property(fc.array(item, { maxLength: 14 }), fc.boolean(), (items, growing) => {
        const messages = items.map(make)
        const whole = growing ? appendMessages(Object.freeze([]), messages) : Object.freeze([...messages])
        repairTranscript(whole)
        // Longest first: each prefix is then found as a prefix of the one checked before.
        for (let n = messages.length; n >= 0; n--) {
          const fresh = repairTranscript(structuredClone(messages.slice(0, n))).repairs
          expect(repairTranscript(Object.freeze(messages.slice(0, n))).repairs).toEqual(fresh)
          if (growing) expect(repairTranscript(appendMessages(Object.freeze([]), messages.slice(0, n))).repairs).toEqual(fresh)
        }
      }),
      { numRuns: 300 },
    )
  })
})

describe('two Agents restored from the same messages', () => {
  it('each runs on the history as given, the second after the first grew it', async () => {
    const messages = [...history(200), call('c1')]
    const runAgent = async (): Promise<readonly AgentMessage[]> => {
      const model = scriptedModel([reply.text('ok')])
      const agent = new Agent({ systemPrompt: 's', model: model.model, streamFn: model.streamFn, messages })
      await agent.prompt('go')
      return agent.state.messages
    }
    const first = await runAgent()
    // The first Agent's grown transcript, checked: the longest remembered.
    validTranscript(first)
    const second = await runAgent()
    for (const grown of [first, second]) {
      expect(grown.slice(0, 201)).toEqual(messages)
      expect(grown.slice(201).map((m) => m.role)).toEqual(['toolResult', 'user', 'assistant'])
    }
  })
})
