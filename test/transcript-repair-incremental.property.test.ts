/**
 * The remembered validity check (settle.ts with transcript-memo.ts) against
 * the same check on copies it cannot remember: a transcript follows random
 * appends (valid or not), edits, drops and branches, as plain, frozen and
 * growing arrays, and every answer must be the fresh one.
 */
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { appendMessages } from '../src/types/growing-transcript.js'
import { text } from '../src/types/content.js'
import { assistantMessage, userMessage, type AgentMessage } from '../src/types/message.js'
import { repairTranscript, validTranscript, InvalidTranscriptError } from '../src/types/settle.js'
import { decodeMessages } from '../src/types/input.js'
import { slidingWindow } from '../src/context/sliding-window.js'

/** A copy of new, unfrozen objects: nothing about it can have been remembered. */
const unremembered = (messages: readonly AgentMessage[]): AgentMessage[] => structuredClone([...messages])

type Item = { readonly kind: 'user' | 'text' } | { readonly kind: 'call' | 'result'; readonly id: number }
const itemArb: fc.Arbitrary<Item> = fc.oneof(
  fc.record({ kind: fc.constantFrom('user' as const, 'text' as const) }),
  fc.record({ kind: fc.constantFrom('call' as const, 'result' as const), id: fc.nat({ max: 5 }) }),
)
const make = (item: Item, freeze: boolean): AgentMessage => {
  let m: AgentMessage
  if (!('id' in item)) m = item.kind === 'user' ? userMessage('u') : assistantMessage('a')
  else if (item.kind === 'call') m = assistantMessage([{ type: 'toolCall', id: `c${item.id}`, name: 'f', arguments: {} }], { stopReason: 'toolUse' })
  else m = { role: 'toolResult', toolCallId: `c${item.id}`, toolName: 'f', content: [text('r')], isError: false, timestamp: 0 }
  return freeze ? Object.freeze(m) : m
}

type Build = 'plain' | 'frozen' | 'growing'
type Step = { readonly build: Build; readonly freeze: boolean } & (
  | { readonly op: 'append'; readonly items: readonly Item[] }
  | { readonly op: 'answer' }
  | { readonly op: 'edit'; readonly at: number; readonly item: Item }
  | { readonly op: 'drop'; readonly at: number }
  | { readonly op: 'branch'; readonly back: number }
)
const common = { build: fc.constantFrom<Build>('plain', 'frozen', 'growing'), freeze: fc.boolean() }
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ ...common, op: fc.constant('append' as const), items: fc.array(itemArb, { minLength: 1, maxLength: 3 }) }) },
  { weight: 3, arbitrary: fc.record({ ...common, op: fc.constant('answer' as const) }) },
  { weight: 1, arbitrary: fc.record({ ...common, op: fc.constant('edit' as const), at: fc.nat(), item: itemArb }) },
  { weight: 1, arbitrary: fc.record({ ...common, op: fc.constant('drop' as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ ...common, op: fc.constant('branch' as const), back: fc.nat({ max: 4 }) }) },
)

/**
 * The rules as two passes over the whole transcript (the form the check had before it became
 * one pass): every call indexed by its first assistant message, then each result must answer a
 * call of the assistant message it follows (before any user message) and be its only result.
 */
function validByTwoPasses(messages: readonly AgentMessage[]): boolean {
  const owner = new Map<string, number>()
  messages.forEach((m, i) => {
    if (m.role === 'assistant') for (const block of m.content) if (block.type === 'toolCall' && !owner.has(block.id)) owner.set(block.id, i)
  })
  const answered = new Set<string>()
  let current = -1
  for (const [i, m] of messages.entries()) {
    if (m.role === 'assistant') current = i
    else if (m.role === 'user') current = -1
    else if (m.role === 'toolResult') {
      if (owner.get(m.toolCallId) !== current || answered.has(m.toolCallId)) return false
      answered.add(m.toolCallId)
    }
  }
  return answered.size === owner.size
}

describe('repairTranscript: the one-pass check', () => {
  it('finds a transcript valid exactly when the two-pass rules do, and the repair then changes nothing', () => {
    // Few ids, so that calls repeat one (in a message and across messages) and results come
    // before, after, between and twice for their calls.
    const id = fc.nat({ max: 2 }).map((n) => `c${n}`)
    const result = (toolCallId: string): AgentMessage => ({ role: 'toolResult', toolCallId, toolName: 'f', content: [text('r')], isError: false, timestamp: 0 })
    const stepArb2: fc.Arbitrary<AgentMessage> = fc.oneof(
      { weight: 2, arbitrary: fc.constant(null).map(() => userMessage('u') as AgentMessage) },
      { weight: 1, arbitrary: fc.constant(null).map(() => assistantMessage('a') as AgentMessage) },
      {
        weight: 3,
        arbitrary: fc.array(id, { minLength: 1, maxLength: 3 }).map((ids) => assistantMessage(ids.map((c) => ({ type: 'toolCall' as const, id: c, name: 'f', arguments: {} })), { stopReason: 'toolUse' }) as AgentMessage),
      },
      { weight: 5, arbitrary: id.map(result) },
    )
    fc.assert(
      fc.property(fc.array(stepArb2, { maxLength: 12 }), (messages) => {
        const valid = validByTwoPasses(messages)
        const repaired = repairTranscript(unremembered(messages))
        expect(repaired.repairs.length === 0).toBe(valid)
        if (!valid) expect(() => validTranscript(unremembered(messages), 'reject')).toThrow(InvalidTranscriptError)
        // Remembered (frozen, then extended) it answers the same.
        const frozen = Object.freeze(unremembered(messages).map((m) => Object.freeze(m)))
        expect(repairTranscript(frozen).repairs.length === 0).toBe(valid)
      }),
      { numRuns: 1000 },
    )
  })
})

describe('repairTranscript: remembered checks', () => {
  it('answers as a check that remembers nothing, through appends, edits, drops and branches', () => {
    let next = 100
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 1, maxLength: 25 }), (steps) => {
        const history: (readonly AgentMessage[])[] = [[]]
        let current: readonly AgentMessage[] = []
        for (const step of steps) {
          const rebuild = (items: readonly AgentMessage[]): readonly AgentMessage[] =>
            step.build === 'plain' ? [...items] : step.build === 'frozen' ? Object.freeze([...items]) : appendMessages(Object.freeze([]), items)
          let more: AgentMessage[] | undefined
          if (step.op === 'append') more = step.items.map((item) => make(item, step.freeze))
          else if (step.op === 'answer') {
            // A valid step: a call and its result (most appends of a real run).
            const id = next++
            more = [make({ kind: 'call', id }, step.freeze), make({ kind: 'result', id }, step.freeze), make({ kind: 'text' }, step.freeze)]
          } else if (step.op === 'edit' && current.length > 0) {
            const items = [...current]
            items[step.at % items.length] = make(step.item, step.freeze)
            current = rebuild(items)
          } else if (step.op === 'drop' && current.length > 0) {
            const at = step.at % current.length
            current = rebuild(current.filter((_, i) => i !== at))
          } else if (step.op === 'branch') current = history[Math.max(0, history.length - 1 - step.back)]!
          if (more !== undefined) current = step.build === 'growing' ? appendMessages(current, more) : rebuild([...current, ...more])
          history.push(current)
          const got = repairTranscript(current)
          const want = repairTranscript(unremembered(current))
          expect(got.repairs).toEqual(want.repairs)
          if (want.repairs.length === 0) expect(got.messages).toBe(current)
          else expect(unremembered(got.messages)).toEqual(want.messages)
        }
      }),
      { numRuns: 400 },
    )
  })

  it('checks again what is not frozen: a message changed after a check is caught', () => {
    const call = assistantMessage([{ type: 'toolCall', id: 'x', name: 'f', arguments: {} }], { stopReason: 'toolUse' })
    const result = { role: 'toolResult' as const, toolCallId: 'x', toolName: 'f', content: [text('r')], isError: false, timestamp: 0 }
    const messages: AgentMessage[] = [userMessage('u'), call, result]
    expect(repairTranscript(messages).repairs).toEqual([])
    result.toolCallId = 'y'
    expect(() => validTranscript(messages, 'reject')).toThrow(InvalidTranscriptError)
    // The same with a frozen array of unfrozen messages.
    result.toolCallId = 'x'
    const frozen = Object.freeze([...messages])
    expect(repairTranscript(frozen).repairs).toEqual([])
    result.toolCallId = 'z'
    expect(repairTranscript(frozen).repairs.map((r) => r.kind)).toEqual(['orphanResult', 'missingResult'])
  })

  it("does not take the calls of a caller's copy that went on differently for its lineage's", () => {
    const call = (id: string): AgentMessage => Object.freeze(assistantMessage([{ type: 'toolCall', id, name: 'f', arguments: {} }], { stopReason: 'toolUse' }))
    const result = (id: string): AgentMessage => Object.freeze({ role: 'toolResult' as const, toolCallId: id, toolName: 'f', content: [text('r')], isError: false, timestamp: 0 })
    const grown = appendMessages(Object.freeze([]), [Object.freeze(userMessage('u'))])
    expect(repairTranscript(grown).repairs).toEqual([])
    // A caller's copy goes on with call y; the growing transcript goes on with call w, then calls y without a result.
    expect(repairTranscript([...grown, call('y'), result('y')]).repairs).toEqual([])
    const next = appendMessages(grown, [call('w'), result('w')])
    expect(repairTranscript(next).repairs).toEqual([])
    const unanswered = appendMessages(next, [call('y')])
    expect(repairTranscript(unanswered).repairs).toEqual([{ kind: 'missingResult', toolCallId: 'y', index: 3 }])
    // And at once: the copy's call y is no call of the growing transcript.
    const again = appendMessages(Object.freeze([]), [Object.freeze(userMessage('u'))])
    expect(repairTranscript(again).repairs).toEqual([])
    expect(repairTranscript([...again, call('y'), result('y')]).repairs).toEqual([])
    expect(repairTranscript(appendMessages(again, [call('y')])).repairs).toEqual([{ kind: 'missingResult', toolCallId: 'y', index: 1 }])
  })

  it('a transcript proven to extend an older one joins no lineage that went on past it', () => {
    const call = (id: string): AgentMessage => Object.freeze(assistantMessage([{ type: 'toolCall', id, name: 'f', arguments: {} }], { stopReason: 'toolUse' }))
    const result = (id: string): AgentMessage => Object.freeze({ role: 'toolResult' as const, toolCallId: id, toolName: 'f', content: [text('r')], isError: false, timestamp: 0 })
    const start = Object.freeze([Object.freeze(userMessage('u')), Object.freeze(assistantMessage('a'))])
    const answered = Object.freeze([...start, call('a'), result('a')])
    // The entry check proves `answered` extends `start`; the window has only seen `start`.
    decodeMessages(start, 'test', 'messages', 'messages', 0)
    decodeMessages(answered, 'test', 'messages', 'messages', 0)
    const window = slidingWindow({ maxTokens: 1, keepFirst: 0 })
    window.compact(start)
    expect(repairTranscript(answered).repairs).toEqual([])
    // Another extension of `start`, longer than `answered`, with a call left unanswered: the window proves it extends `start`.
    const other = Object.freeze([...start, call('b'), Object.freeze(userMessage('v')), Object.freeze(assistantMessage('w'))])
    window.compact(other)
    expect(repairTranscript(other).repairs).toEqual([{ kind: 'missingResult', toolCallId: 'b', index: 2 }])
  })

  it('an extension of a valid transcript that breaks it is repaired, and the valid prefix still passes', () => {
    const base = Object.freeze([userMessage('u'), assistantMessage('a')].map((m) => Object.freeze(m)))
    expect(repairTranscript(base).repairs).toEqual([])
    const orphan = Object.freeze({ role: 'toolResult' as const, toolCallId: 'nope', toolName: 'f', content: [text('r')], isError: false, timestamp: 0 })
    const broken = appendMessages(base, [orphan])
    expect(repairTranscript(broken).repairs).toEqual([{ kind: 'orphanResult', toolCallId: 'nope', index: 2 }])
    expect(repairTranscript(base).messages).toBe(base)
  })
})
