/**
 * Transcripts that break the tool-call invariants (issue 12, point 9): a
 * result without its call, a result after an intervening user message, a
 * call without a result. They are repaired before any request is sent,
 * whatever the `streamFn`, so a provider never rejects every later request.
 */
import { describe, expect, it } from 'vitest'
import { from, throwError } from 'rxjs'
import { agentLoop, agentLoopContinue } from '../src/loop/agent-loop.js'
import { Agent } from '../src/agent/agent.js'
import type { Checkpoint } from '../src/agent/checkpoint.js'
import { InvalidTranscriptError, repairTranscript, settleTranscript } from '../src/types/settle.js'
import { assistantMessage, toolCallsOf, userMessage, type AgentMessage, type ToolResultMessage } from '../src/types/message.js'
import type { StreamFn } from '../src/types/request.js'
import { modelSpec } from '../src/types/model.js'
import { reply } from '../marbles/index.js'
import { collect, context, resultOf } from './helpers.js'

const call = (id: string) => ({ type: 'toolCall' as const, id, name: 'echo', arguments: {} })
const asking = (...ids: string[]) => assistantMessage(ids.map(call), { stopReason: 'toolUse' })
const result = (id: string, text = `result ${id}`): ToolResultMessage => ({ role: 'toolResult', toolCallId: id, toolName: 'echo', content: [{ type: 'text', text }], isError: false, timestamp: 0 })
const custom: AgentMessage = { role: 'custom', kind: 'note', data: 1 }

/** What providers check, as a list of violations (empty when a provider would accept the transcript). */
function violations(messages: readonly AgentMessage[]): string[] {
  const out: string[] = []
  const answered = new Set<string>()
  let open = new Set<string>()
  const closeOpen = (at: number) => {
    for (const id of open) out.push(`call ${id} unanswered before messages[${at}]`)
    open = new Set()
  }
  messages.forEach((m, i) => {
    if (m.role === 'assistant' || m.role === 'user') closeOpen(i)
    if (m.role === 'assistant') for (const c of toolCallsOf(m)) open.add(c.id)
    if (m.role === 'toolResult') {
      if (!open.has(m.toolCallId)) out.push(`result ${m.toolCallId} at messages[${i}] does not answer an open call`)
      if (answered.has(m.toolCallId)) out.push(`result ${m.toolCallId} twice`)
      open.delete(m.toolCallId)
      answered.add(m.toolCallId)
    }
  })
  closeOpen(messages.length)
  return out
}

/** A custom streamFn that fails the call as a provider would (HTTP 400) when the transcript is invalid. */
function strictProvider(seen: AgentMessage[][] = []): StreamFn {
  return (request) => {
    seen.push([...request.messages])
    const wrong = violations(request.messages)
    return wrong.length > 0 ? throwError(() => Object.assign(new Error(`400 invalid transcript: ${wrong.join('; ')}`), { status: 400 })) : from(reply.text('fine'))
  }
}

const broken: AgentMessage[] = [
  userMessage('one'),
  asking('a', 'b'),
  result('a'),
  userMessage('two'), // intervenes: b's result comes after it
  result('b'),
  result('ghost'), // no call anywhere
  asking('c'), // never answered
  userMessage('three'),
  result('a', 'again'), // a second result
]

describe('repairTranscript', () => {
  it('moves, drops and fills as documented, and says what it did', () => {
    const { messages, repairs } = repairTranscript(broken, 'no result was recorded')
    expect(violations(messages)).toEqual([])
    expect(messages.map((m) => (m.role === 'toolResult' ? `r:${m.toolCallId}` : m.role))).toEqual(['user', 'assistant', 'r:a', 'r:b', 'user', 'assistant', 'r:c', 'user'])
    expect(repairs.map((r) => `${r.kind}:${r.toolCallId}@${r.index}`)).toEqual(['movedResult:b@4', 'orphanResult:ghost@5', 'duplicateResult:a@8', 'missingResult:c@6'])
    const filled = messages[6] as ToolResultMessage
    expect(filled).toMatchObject({ isError: true, content: [{ type: 'text', text: 'Tool call not executed: no result was recorded.' }] })
  })

  it('a result before its call is moved after it; custom messages between a call and its results are left alone', () => {
    const { messages } = repairTranscript([userMessage('x'), result('a'), asking('a', 'b'), result('b'), custom])
    expect(messages.map((m) => (m.role === 'toolResult' ? `r:${m.toolCallId}` : m.role))).toEqual(['user', 'assistant', 'r:b', 'custom', 'r:a'])
    const valid = [userMessage('x'), asking('a', 'b'), result('b'), custom, result('a'), userMessage('y')]
    const same = repairTranscript(valid)
    expect(same.repairs).toEqual([])
    expect(same.messages).toBe(valid)
  })

  it('settleTranscript repairs the same way', () => {
    expect(violations(settleTranscript(broken))).toEqual([])
  })
})

describe('a broken transcript never reaches a custom streamFn', () => {
  it('agentLoop: the request is valid and the run ends normally', () => {
    const seen: AgentMessage[][] = []
    const model = modelSpec('strict', 'strict-1')
    const events = collect(agentLoop(userMessage('four'), context([], broken), { model, streamFn: strictProvider(seen), retry: false }))
    expect(resultOf(events)).toMatchObject({ stopReason: 'stop' })
    expect(violations(seen[0]!)).toEqual([])
  })

  it('agentLoopContinue: the same', () => {
    const seen: AgentMessage[][] = []
    const events = collect(agentLoopContinue(context([], broken), { model: modelSpec('strict', 'strict-1'), streamFn: strictProvider(seen), retry: false }))
    expect(resultOf(events)).toMatchObject({ stopReason: 'stop' })
    expect(seen).toHaveLength(1)
  })

  const checkpoint: Checkpoint = {
    id: 'agent-1:1',
    agentId: 'agent-1',
    seq: 1,
    createdAt: 0,
    systemPrompt: 's',
    model: modelSpec('strict', 'strict-1'),
    messages: broken,
    steering: [],
    followUp: [],
    planMode: false,
    midRun: false,
  }

  it('Agent.restore: the transcript is repaired at once, and every later request is valid', async () => {
    const seen: AgentMessage[][] = []
    const agent = Agent.restore(checkpoint, { streamFn: strictProvider(seen), retry: false })
    expect(violations(agent.state.messages)).toEqual([])
    expect((await agent.prompt('four')).stopReason).toBe('stop')
    expect((await agent.prompt('five')).stopReason).toBe('stop')
    expect(seen.map(violations)).toEqual([[], []])
  })

  it("Agent.restore with invalidTranscript: 'reject' throws, naming every problem", () => {
    expect(() => Agent.restore(checkpoint, { streamFn: strictProvider(), invalidTranscript: 'reject' })).toThrow(InvalidTranscriptError)
    expect(() => Agent.restore(checkpoint, { streamFn: strictProvider(), invalidTranscript: 'reject' })).toThrow(
      "at messages[5]: the result for tool call 'ghost' has no call in any assistant message (dropped)",
    )
  })
})
