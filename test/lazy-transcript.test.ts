/**
 * Long transcripts held lazily (`src/types/lazy-transcript.ts`): from
 * LAZY_FROM messages on, `state.messages` and `context.messages` are made
 * into their frozen arrays on first read; everything a reader sees is what a
 * plain array field gives.
 */
import { describe, expect, it } from 'vitest'
import { map } from 'rxjs'
import { Agent } from '../src/agent/index.js'
import type { AgentState } from '../src/agent/agent-state.js'
import { agentLoop, composeTurn, defaultTurn } from '../src/loop/agent-loop.js'
import { slidingWindow } from '../src/context/sliding-window.js'
import { isTurnState, type TurnOperator } from '../src/turn/turn-state.js'
import { LAZY_FROM, lazyTranscriptOf } from '../src/types/lazy-transcript.js'
import { assistantMessage, userMessage, type AgentMessage } from '../src/types/message.js'
import { reply, scriptedModel } from '../marbles/index.js'

const historyOf = (n: number): AgentMessage[] => Array.from({ length: n }, (_, i) => (i % 2 === 0 ? userMessage(`question ${i}`) : assistantMessage(`answer ${i}`)))
const N = LAZY_FROM + 10

describe('lazy transcripts', () => {
  it('an Agent on a long history: every snapshot reads as before, frozen, in order, and the fold of its log equals it', async () => {
    const history = historyOf(N)
    const model = scriptedModel([reply.text('one'), reply.text('two')])
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, messages: history })
    const seen: AgentState[] = []
    const subscription = agent.state$.subscribe((s) => seen.push(s))
    await agent.prompt('first')
    subscription.unsubscribe()
    // Held lazily after the run, and no array was made for the snapshots no one read.
    expect(lazyTranscriptOf(agent.state)).toBeDefined()
    const small = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn })
    for (const s of seen) {
      expect(Object.isFrozen(s)).toBe(true)
      expect(Object.keys(s)).toEqual(Object.keys(small.state))
      expect(Object.isFrozen(s.messages)).toBe(true)
      expect(Array.isArray(s.messages)).toBe(true)
    }
    const last = agent.state
    expect(last.messages).toHaveLength(N + 2)
    expect(last.messages).toBe(last.messages)
    expect(last.messages.slice(0, N)).toEqual(history)
    expect(last.messages.slice(N).map((m) => m.role)).toEqual(['user', 'assistant'])
    // A snapshot while streaming holds the prompt, not the answer.
    const streaming = seen.find((s) => s.streamMessage !== undefined)!
    expect(streaming.messages).toHaveLength(N + 1)
    expect(streaming.messages.at(-1)).toEqual(last.messages[N])
    // Spreads, JSON and deep equality see `messages` as a field.
    expect({ ...last }.messages).toBe(last.messages)
    expect((JSON.parse(JSON.stringify(last)) as { messages: unknown[] }).messages).toHaveLength(N + 2)
    expect(Agent.fromLog(agent.log, { streamFn: model.streamFn }).state).toEqual(agent.state)
    // A second run appends to the same history and reads the same way.
    await agent.prompt('second')
    expect(agent.state.messages).toHaveLength(N + 4)
    expect(agent.state.messages.slice(0, N + 2)).toEqual(last.messages)
    expect(model.requests[1]!.messages.at(-1)).toEqual(agent.state.messages[N + 2])
  })

  it('an Agent on a long history: the window sends what it sends for the same transcript as an array', async () => {
    const history = historyOf(N)
    const model = scriptedModel([reply.text('one')])
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, messages: history, contextWindow: { maxTokens: 3000 } })
    await agent.prompt('first')
    const expected = slidingWindow({ maxTokens: 3000 }).compact([...history, agent.state.messages[N]!]).messages
    expect(model.requests[0]!.messages).toEqual(expected)
  })

  it('agentLoop on a long context: a stage reading context.messages sees the whole transcript, and the result holds the run', async () => {
    const history = historyOf(N)
    const model = scriptedModel([reply.text('hi')])
    const lengths: number[] = []
    const reader: TurnOperator = map((item) => {
      if (isTurnState(item) && item.started) lengths.push(item.context.messages.length)
      return item
    })
    const events = await new Promise<unknown[]>((resolve, reject) => {
      const all: unknown[] = []
      agentLoop('go', { systemPrompt: '', messages: history, tools: [] }, { model: model.model, streamFn: model.streamFn, turn: (s) => composeTurn(defaultTurn(s), reader) }).subscribe({
        next: (e) => all.push(e),
        error: reject,
        complete: () => resolve(all),
      })
    })
    expect(lengths.at(-1)).toBe(N + 2)
    const end = events.at(-1) as { type: string; result: { messages: AgentMessage[] } }
    expect(end.type).toBe('agentEnd')
    expect(end.result.messages.map((m) => m.role)).toEqual(['user', 'assistant'])
  })
})
