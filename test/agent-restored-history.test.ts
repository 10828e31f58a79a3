/** Agent: a restored history is decoded, checked and estimated once, at construction. */
import { describe, expect, it } from 'vitest'
import { Agent } from '../src/agent/index.js'
import { estimateTokens } from '../src/context/estimate-tokens.js'
import { assistantMessage, userMessage, type AgentMessage } from '../src/types/message.js'
import { reply, scriptedModel } from '../marbles/index.js'

const historyOf = (n: number): AgentMessage[] => Array.from({ length: n }, (_, i) => (i % 2 === 0 ? userMessage(`question ${i}`) : assistantMessage(`answer ${i}`)))

describe('Agent with a restored history', () => {
  it('estimates each history message once across construction and its runs, and the window still cuts the same', async () => {
    const history = historyOf(400)
    const calls = new Map<AgentMessage, number>()
    const estimate = (m: AgentMessage): number => {
      calls.set(m, (calls.get(m) ?? 0) + 1)
      return estimateTokens(m)
    }
    const model = scriptedModel([reply.text('one'), reply.text('two')])
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, messages: history, contextWindow: { maxTokens: 200, estimate } })
    await agent.prompt('first')
    await agent.prompt('second')
    expect(Math.max(...calls.values())).toBe(1)
    expect(calls.size).toBe(agent.state.messages.length - 1) // all but the last answer, which no turn has sent
    // The window cut the same as a fresh estimate over the request would: the newest messages, within budget, the first two kept.
    const sent = model.requests[1]!.messages
    expect(sent.length).toBeLessThan(agent.state.messages.length)
    expect(sent.slice(0, 2)).toEqual(agent.state.messages.slice(0, 2))
    expect(sent.at(-1)).toEqual(agent.state.messages.at(-2))
  })

  it('leaves the caller array alone: not frozen, and later changes to it do not reach the state', async () => {
    const history = historyOf(4)
    const model = scriptedModel([reply.text('hi')])
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, messages: history })
    expect(Object.isFrozen(history)).toBe(false)
    history.push(userMessage('later'))
    expect(agent.state.messages).toHaveLength(4)
    expect(Object.isFrozen(agent.state.messages)).toBe(true)
    await agent.prompt('go')
    expect(agent.state.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant'])
  })

  it('is constructed even when the window estimate throws: the run reports it', async () => {
    const model = scriptedModel([reply.text('hi')])
    const estimate = (): number => {
      throw new Error('estimate boom')
    }
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, messages: historyOf(6), contextWindow: { maxTokens: 10, estimate } })
    try {
      await agent.prompt('go')
    } catch {
      // Either way, the state says why.
    }
    expect(agent.state.error).toContain('estimate boom')
    expect(model.requests).toHaveLength(0)
  })
})
