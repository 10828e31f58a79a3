import { describe, expect, it } from 'vitest'
import { run$, run2$ } from '../examples/redact.js'
import { agentLoop } from '../src/loop/agent-loop.js'
import { chunk, runAgentMarbles, scriptedModel } from '../marbles/index.js'
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
