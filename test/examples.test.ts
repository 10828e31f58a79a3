import { describe, expect, it } from 'vitest'
import * as t from 'io-ts'
import { pipe } from 'rxjs'
import { redact, run$, run2$ } from '../examples/redact.js'
import { mapMessages } from '../operators/map-messages.js'
import { agentLoop, composeTurn, defaultTurn, type AgentLoopConfig } from '../src/loop/agent-loop.js'
import { defineTool } from '../src/tools/define-tool.js'
import { userMessage, type AgentMessage } from '../src/types/message.js'
import { chunk, reply, runAgentMarbles, scriptedModel } from '../marbles/index.js'
import { collect, context, hello, resultOf, textOf } from './helpers.js'

describe('README examples', () => {
  it('an inserted operator redacts what is stored, both ways of inserting it', () => {
    for (const run of [run$, run2$]) {
      const events = collect(run)
      const stored = resultOf(events).messages.at(-1)!
      expect(textOf(stored as never)).not.toMatch(/sk-/)
      const end = events.find((e) => e.type === 'messageEnd' && e.message.role === 'assistant')
      expect(end?.type === 'messageEnd' && textOf(end.message as never)).toMatch(/\[redacted\]/)
    }
  })

  describe('the two redaction forms differ as the README says', () => {
    const secret = 'sk-abcdef123456'
    const echo = defineTool({ name: 'echo', description: 'Echoes its text.', parameters: t.type({ text: t.string }), execute: ({ text }) => `echo: ${text}` })
    const runWith = (turn: AgentLoopConfig['turn']) => {
      const model = scriptedModel([reply.toolCalls([{ id: 'c1', name: 'echo', args: { text: secret } }], { text: `calling ${secret}` }), reply.text(`done ${secret}`)])
      const events = collect(agentLoop(userMessage(`my key is ${secret}`), context([echo]), { model: model.model, streamFn: model.streamFn, ...(turn === undefined ? {} : { turn }) }))
      const stored = resultOf(events).messages
      // The example's `redact` rewrites text blocks (tool-call arguments are left as they are).
      const leaks = (m: AgentMessage) => m.role !== 'custom' && m.content.some((c) => c.type === 'text' && c.text.includes(secret))
      const turnEnds = events.flatMap((e) => (e.type === 'turnEnd' ? [e] : []))
      return { events, stored, leaks, turnEnds }
    }
    const inserted: AgentLoopConfig['turn'] = (s) =>
      composeTurn(s.preTurnPolicy, s.startTurn, s.transformContext, s.streamLlm, mapMessages(redact), s.dispatchTools, s.endTurn, s.postTurnPolicy, s.pollSteering, s.decideContinuation, s.postLoopPolicy, s.pollFollowUp)
    const wrapped: AgentLoopConfig['turn'] = (s) => pipe(defaultTurn(s), mapMessages(redact))

    it('inserted after streamLlm: what the stages before it emit is redacted (prompts, answers), tool results are stored as they are', () => {
      const { stored, leaks, turnEnds } = runWith(inserted)
      expect(stored.map((m) => [m.role, leaks(m)])).toEqual([
        ['user', false],
        ['assistant', false],
        ['toolResult', true],
        ['assistant', false],
      ])
      expect(turnEnds.map((e) => leaks(e.message!))).toEqual([false, false])
    })

    it('wrapping the whole turn: every message the turn stores is redacted, and turnEnd carries the stored messages', () => {
      const { stored, leaks, turnEnds } = runWith(wrapped)
      expect(stored.map((m) => [m.role, leaks(m)])).toEqual([
        ['user', false],
        ['assistant', false],
        ['toolResult', false],
        ['assistant', false],
      ])
      expect(turnEnds.map((e) => leaks(e.message!))).toEqual([false, false])
      expect(turnEnds[0]!.toolResults.map(leaks)).toEqual([false])
    })

    it('neither redacts the streamed deltas (messageUpdate): they are what the model sent', () => {
      for (const turn of [inserted, wrapped]) {
        const deltas = runWith(turn).events.filter((e) => e.type === 'messageUpdate' && JSON.stringify(e.chunk).includes(secret))
        expect(deltas.length).toBeGreaterThan(0)
      }
    })
  })
})

describe("the README's marble example", () => {
  it('holds as written', () => {
    runAgentMarbles(({ expectEvents, expectTimeline }) => {
      const model = scriptedModel([
        { marbles: '------s-a-b-(p|)', values: { s: chunk.start(), a: chunk.text('Hel'), b: chunk.text('lo'), p: chunk.stop() } },
      ], { whenExhausted: 'repeatLast' })
      const run$ = agentLoop(hello, context(), { model: model.model, streamFn: model.streamFn })

      expectEvents(run$).toBe('(abcd)e-f-g-(hij|)', {
        a: 'agentStart', b: 'turnStart:0', c: 'msgStart:user', d: 'msgEnd:user',
        e: 'msgStart:assistant', f: 'textDelta:"Hel"', g: 'textDelta:"lo"',
        h: 'msgEnd:assistant:stop', i: 'turnEnd:0', j: 'agentEnd:stop',
      })
      expectTimeline(run$).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user
        6 msgStart:assistant
        8 textDelta:"Hel"
        10 textDelta:"lo"
        12 msgEnd:assistant:stop, turnEnd:0, agentEnd:stop, |
      `)
    })
  })
})

describe("the README's Agent example", () => {
  it('runs two tools, takes the steering message after the first batch, stays within budget', async () => {
    const { agent, result } = await import('../examples/chat-agent.js')
    const r = await result
    expect(r.stopReason).toBe('stop')
    const roles = agent.state.messages.map((m) => m.role)
    expect(roles).toEqual(['user', 'assistant', 'toolResult', 'user', 'assistant', 'toolResult', 'assistant'])
    expect(JSON.stringify(agent.state.messages[3])).toContain('Fahrenheit')
  })
})
