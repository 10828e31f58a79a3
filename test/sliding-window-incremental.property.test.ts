/**
 * The window's running totals (token-sums.ts, transcript-memo.ts) against a
 * reference that estimates every message on every call, as the window did
 * before: one window instance follows a transcript through appends, edits,
 * drops and branches, built as plain arrays, frozen arrays and the loop's
 * growing transcripts, and must answer exactly as the reference each time.
 */
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { estimateTokens, type EstimateTokens } from '../src/context/estimate-tokens.js'
import { slidingWindow, type WindowResult } from '../src/context/sliding-window.js'
import { tokenSums } from '../src/context/token-sums.js'
import { appendMessages } from '../src/types/growing-transcript.js'
import { text } from '../src/types/content.js'
import { assistantMessage, userMessage, type AgentMessage } from '../src/types/message.js'

const startsUnit = (m: AgentMessage): boolean => m.role === 'user' || m.role === 'assistant'

/** The window as it was: every estimate recomputed, a walk back from the end. */
function reference(messages: readonly AgentMessage[], budget: number, keepFirst: number, estimate: EstimateTokens): WindowResult {
  const n = messages.length
  let head = Math.min(Math.max(0, keepFirst), n)
  if (head > 0) while (head < n && !startsUnit(messages[head]!)) head++
  if (head >= n) return { messages }
  let headTokens = 0
  for (let i = 0; i < head; i++) headTokens += estimate(messages[i]!)
  let total = headTokens
  for (let i = head; i < n; i++) total += estimate(messages[i]!)
  if (total <= budget) return { messages }
  let firstUnit = head
  while (firstUnit < n && !startsUnit(messages[firstUnit]!)) firstUnit++
  let suffix = 0
  let cut = -1
  let cutSuffix = 0
  for (let i = n - 1; i > firstUnit; i--) {
    suffix += estimate(messages[i]!)
    if (!startsUnit(messages[i]!)) continue
    if (cut !== -1 && headTokens + suffix > budget) break
    cut = i
    cutSuffix = suffix
  }
  if (cut === -1) return { messages }
  const kept = [...messages.slice(0, head), ...messages.slice(cut)]
  const keptTokens = headTokens + cutSuffix
  return {
    messages: kept,
    report: { droppedMessages: cut - head, droppedTokens: total - keptTokens, keptMessages: kept.length, keptTokens, budget, overflow: false, overBudget: keptTokens > budget },
  }
}

type Kind = 'user' | 'text' | 'call' | 'result' | 'custom'
const make = (kind: Kind, size: number, k: number): AgentMessage => {
  const body = 'x'.repeat(size)
  switch (kind) {
    case 'user':
      return userMessage(body)
    case 'text':
      return assistantMessage(body)
    case 'call':
      return assistantMessage([{ type: 'toolCall', id: `c${k}`, name: 'f', arguments: { body } }], { stopReason: 'toolUse' })
    case 'result':
      return { role: 'toolResult', toolCallId: `c${k}`, toolName: 'f', content: [text(body)], isError: false, timestamp: 0 }
    case 'custom':
      return { role: 'custom', kind: 'note', data: body }
  }
}

type Build = 'plain' | 'frozen' | 'growing'
type Step = { readonly build: Build } & (
  | { readonly op: 'append'; readonly kinds: readonly Kind[]; readonly size: number }
  | { readonly op: 'edit'; readonly at: number; readonly size: number }
  | { readonly op: 'drop'; readonly at: number }
  | { readonly op: 'branch'; readonly back: number }
)

const kindArb = fc.constantFrom<Kind>('user', 'text', 'call', 'result', 'custom')
/** How each step's transcript is built: a caller's plain array, a frozen one, or the loop's growing transcript. */
const build = fc.constantFrom<Build>('plain', 'frozen', 'growing')
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ build, op: fc.constant('append' as const), kinds: fc.array(kindArb, { minLength: 1, maxLength: 4 }), size: fc.nat({ max: 120 }) }) },
  { weight: 1, arbitrary: fc.record({ build, op: fc.constant('edit' as const), at: fc.nat(), size: fc.nat({ max: 120 }) }) },
  { weight: 1, arbitrary: fc.record({ build, op: fc.constant('drop' as const), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ build, op: fc.constant('branch' as const), back: fc.nat({ max: 4 }) }) },
)

/** Integer estimates of varied size, custom messages free: what a caller's `estimate` may look like. */
const lengthy: EstimateTokens = (m) => (m.role === 'custom' ? 0 : 3 + JSON.stringify(m).length % 17)

describe('slidingWindow: running totals', () => {
  it('answers as a window that estimates every message every time, through appends, edits, drops and branches', () => {
    fc.assert(
      fc.property(
        fc.array(stepArb, { minLength: 1, maxLength: 30 }),
        fc.nat({ max: 3 }),
        fc.integer({ min: 0, max: 400 }),
        fc.boolean(),
        (steps, keepFirst, budget, custom) => {
          const estimate = custom ? lengthy : estimateTokens
          const window = slidingWindow({ maxTokens: budget, keepFirst, estimate })
          const history: (readonly AgentMessage[])[] = [[]]
          let current: readonly AgentMessage[] = []
          let k = 0
          for (const step of steps) {
            const rebuild = (items: readonly AgentMessage[]): readonly AgentMessage[] =>
              step.build === 'plain' ? [...items] : step.build === 'frozen' ? Object.freeze([...items]) : appendMessages(Object.freeze([]), items)
            if (step.op === 'append') {
              const more = step.kinds.map((kind) => Object.freeze(make(kind, step.size, k++)))
              current = step.build === 'growing' ? appendMessages(current, more) : rebuild([...current, ...more])
            } else if (step.op === 'edit' && current.length > 0) {
              const at = step.at % current.length
              const items = [...current]
              items[at] = Object.freeze(make(startsUnit(items[at]!) ? 'user' : 'result', step.size, k++))
              current = rebuild(items)
            } else if (step.op === 'drop' && current.length > 0) {
              const at = step.at % current.length
              current = rebuild(current.filter((_, i) => i !== at))
            } else if (step.op === 'branch') {
              current = history[Math.max(0, history.length - 1 - step.back)]!
            }
            history.push(current)
            const got = window.compact(current)
            const want = reference(current, budget, keepFirst, estimate)
            expect(got.report).toEqual(want.report)
            if (want.report === undefined) expect(got.messages).toBe(current)
            else expect(got.messages).toEqual(want.messages)
          }
        },
      ),
      { numRuns: 300 },
    )
  })

  it('sums what a fresh walk sums, for the transcript asked about only', () => {
    const sums = tokenSums(estimateTokens)
    const base = Object.freeze([userMessage('a'), assistantMessage('bb')].map((m) => Object.freeze(m)))
    const longer = appendMessages(base, [Object.freeze(userMessage('ccc'.repeat(40)))])
    const other = appendMessages(base, [Object.freeze(userMessage('d'))])
    const fresh = (ms: readonly AgentMessage[]): number[] => ms.reduce((out, m) => [...out, out[out.length - 1]! + estimateTokens(m)], [0])
    for (const ms of [base, longer, other, longer, base]) expect(sums(ms).slice(0, ms.length + 1)).toEqual(fresh(ms))
  })

  it('does not take the totals of a caller\'s copy that went on differently for its lineage\'s', () => {
    const sums = tokenSums(estimateTokens)
    const m = (body: string): AgentMessage => Object.freeze(userMessage(body))
    const grown = appendMessages(Object.freeze([]), [m('a'), m('bb')])
    const copy = [...grown, m('c'.repeat(400))]
    const next = appendMessages(grown, [m('d')])
    const fresh = (ms: readonly AgentMessage[]): number[] => ms.reduce((out, x) => [...out, out[out.length - 1]! + estimateTokens(x)], [0])
    for (const ms of [grown, copy, next, copy]) expect(sums(ms).slice(0, ms.length + 1)).toEqual(fresh(ms))
  })
})
