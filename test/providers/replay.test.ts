// The transcript a request builder replays (src/providers/replay.ts): failed and aborted assistant
// messages dropped with their results, then settled — the same messages as the plain rule, and the
// input array itself when nothing is dropped or added (so that its remembered check is found).
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { replayedMessages } from '../../src/providers/replay.js'
import { deepFreeze } from '../../src/types/deep-freeze.js'
import { assistantMessage, toolCallsOf, userMessage, type LlmMessage, type ToolResultMessage } from '../../src/types/message.js'
import { settleTranscript } from '../../src/types/settle.js'
import { arbLlmMessage } from '../arbitraries.js'

/** The rule, written plainly: drop unfinished assistant messages and their later results, then settle. */
function reference(messages: readonly LlmMessage[]): LlmMessage[] {
  const dropped = new Set<string>()
  const kept: LlmMessage[] = []
  for (const m of messages) {
    if (m.role === 'assistant' && (m.stopReason === 'error' || m.stopReason === 'aborted')) {
      for (const call of toolCallsOf(m)) dropped.add(call.id)
      continue
    }
    if (m.role === 'toolResult' && dropped.has(m.toolCallId)) continue
    kept.push(m)
  }
  return settleTranscript(kept, 'the conversation moved on before this tool call finished')
}

const toolCall = (id: string, name: string, args: Record<string, unknown>) => ({ type: 'toolCall' as const, id, name, arguments: args })
const result = (toolCallId: string): ToolResultMessage => ({ role: 'toolResult', toolCallId, toolName: 'echo', content: [{ type: 'text', text: 'ok' }], isError: false, timestamp: 0 })

/** Transcripts whose results often answer earlier calls, some assistant messages unfinished. */
const arbTranscript: fc.Arbitrary<LlmMessage[]> = fc
  .array(fc.tuple(arbLlmMessage, fc.nat(), fc.constantFrom('stop', 'toolUse', 'error', 'aborted'), fc.boolean()), { maxLength: 10 })
  .map((rows) => {
    const ids: string[] = []
    return rows.map(([m, pick, stopReason, freeze]) => {
      let out: LlmMessage = m
      if (m.role === 'assistant') {
        out = { ...m, stopReason: stopReason as 'stop' }
        for (const b of m.content) if (b.type === 'toolCall') ids.push(b.id)
      } else if (m.role === 'toolResult' && ids.length > 0 && pick % 3 !== 0) out = { ...m, toolCallId: ids[pick % ids.length]! }
      if (freeze) deepFreeze(out)
      return out
    })
  })

describe('replayedMessages', () => {
  it('the same messages, in order, as dropping the unfinished then settling', () => {
    fc.assert(
      fc.property(arbTranscript, (messages) => {
        const got = replayedMessages(messages)
        const want = reference(messages)
        expect(got.length).toBe(want.length)
        // The input's objects where the rule keeps them; synthetic results equal.
        got.forEach((m, i) => (messages.includes(m) ? expect(m).toBe(want[i]) : expect(m).toEqual(want[i])))
        // Asked again (now remembered): the same again.
        expect(replayedMessages(messages)).toEqual(got)
      }),
      { numRuns: 300 },
    )
  })

  it('a valid transcript with nothing to drop comes back as the same array; otherwise the input is not changed', () => {
    const messages: readonly LlmMessage[] = [userMessage('go'), assistantMessage([toolCall('c1', 'echo', {})], { stopReason: 'toolUse' }), result('c1'), assistantMessage('done')]
    deepFreeze(messages)
    expect(replayedMessages(messages)).toBe(messages)
    const failed = [userMessage('go'), assistantMessage([toolCall('c1', 'echo', {})], { stopReason: 'error' }), result('c1'), userMessage('again')]
    const copy = [...failed]
    expect(replayedMessages(failed)).toEqual([failed[0], failed[3]])
    expect(failed).toEqual(copy)
    const unanswered = [userMessage('go'), assistantMessage([toolCall('c1', 'echo', {})], { stopReason: 'toolUse' })]
    const settled = replayedMessages(unanswered)
    expect(settled).not.toBe(unanswered)
    expect(settled).toHaveLength(3)
    expect(settled[2]).toMatchObject({ role: 'toolResult', toolCallId: 'c1', isError: true })
  })
})
