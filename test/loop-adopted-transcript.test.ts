import { describe, expect, it } from 'vitest'
import { lastValueFrom, toArray } from 'rxjs'
import { agentLoop } from '../src/loop/agent-loop.js'
import { assistantMessage, userMessage, type AgentMessage } from '../src/types/message.js'
import { reply, scriptedModel } from '../marbles/index.js'
import { context, hello } from './helpers.js'
import fc from 'fast-check'
import { decodeContext, newShape } from '../src/types/input.js'
import { arbAgentMessage } from './arbitraries.js'

// agentLoop learns, while it decodes the transcript, whether it holds tool calls and where its first
// custom message is; a transcript without tool calls is then taken as is (no repair walk) and appended
// to without a scan for custom messages. These check that what the model sees is unchanged by that.

const custom = (kind: string): AgentMessage => ({ role: 'custom', kind, data: { note: kind }, timestamp: 0 })

async function firstRequest(messages: readonly AgentMessage[]) {
  const model = scriptedModel([reply.text('ok')])
  const seen: (readonly AgentMessage[])[] = []
  const events = await lastValueFrom(
    agentLoop(hello, context([], messages), {
      model: model.model,
      streamFn: model.streamFn,
      transformContext: (m) => {
        seen.push(m)
        return m
      },
    }).pipe(toArray()),
  )
  return { request: model.requests[0]!, seen: seen[0]!, end: events.at(-1) }
}

describe('agentLoop: a transcript without tool calls', () => {
  it('reaches the model without its custom messages, wherever the first one is', async () => {
    for (const at of [0, 1, 3, 4]) {
      const history: AgentMessage[] = [userMessage('a'), assistantMessage('b'), userMessage('c'), assistantMessage('d')]
      history.splice(at, 0, custom(`k${at}`))
      const { request, seen } = await firstRequest(history)
      expect(seen).toEqual([...history, hello])
      expect(request.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user'])
    }
  })

  it('without custom messages reaches the model whole', async () => {
    const history = [userMessage('a'), assistantMessage('b')]
    const { request, end } = await firstRequest(history)
    expect(request.messages).toEqual([...history, hello])
    expect(end?.type === 'agentEnd' && end.result.messages.map((m) => m.role)).toEqual(['user', 'assistant'])
  })

  it('leaves the caller array as it was', async () => {
    const history = [userMessage('a'), assistantMessage('b')]
    await firstRequest(history)
    expect(history).toHaveLength(2)
    expect(Object.isFrozen(history)).toBe(false)
  })
})

describe('agentLoop: a transcript with tool calls', () => {
  it('is still repaired: an unanswered call gets its synthetic result', async () => {
    const call = assistantMessage([{ type: 'toolCall', id: 'c1', name: 'add', arguments: { a: 1 } }], { stopReason: 'toolUse' })
    const { request } = await firstRequest([userMessage('a'), call, custom('x')])
    expect(request.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'user'])
    expect(request.messages[2]).toMatchObject({ role: 'toolResult', toolCallId: 'c1', isError: true })
  })
})

describe('decodeContext: what the decoding pass notes of a transcript', () => {
  // The check notes tool calls and custom messages as it passes them (`compileClassify`); a
  // normalized message (string content, no timestamp) is read by hand. Either way the same facts.
  const arbInput = fc.oneof(
    arbAgentMessage.map((m) => m as unknown),
    fc.string().map((text) => ({ role: 'user', content: text }) as unknown),
    fc.string().map((text) => ({ role: 'toolResult', toolCallId: 'c', toolName: 't', content: text, isError: false }) as unknown),
  )

  it('notes a tool call or result, and the first custom message, as a read of every message does', () => {
    fc.assert(
      fc.property(fc.array(arbInput, { maxLength: 12 }), (messages) => {
        const shape = newShape()
        const decoded = decodeContext({ systemPrompt: '', messages: messages as AgentMessage[], tools: [] }, 'test', 0, shape).messages
        expect(shape.complete).toBe(true)
        expect(shape.toolCalls).toBe(decoded.some((m) => m.role === 'toolResult' || (m.role === 'assistant' && m.content.some((b) => b.type === 'toolCall'))))
        const at = decoded.findIndex((m) => m.role === 'custom')
        expect(shape.firstCustom).toBe(at < 0 ? Number.POSITIVE_INFINITY : at)
      }),
      { numRuns: 300 },
    )
  })
})
