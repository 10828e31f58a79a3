import { describe, expect, it } from 'vitest'
import { lastValueFrom, merge, toArray } from 'rxjs'
import { agentLoop, defaultTurn } from '../src/loop/agent-loop.js'
import { fromAsyncIterable } from '../src/rx/from-async-iterable.js'
import type { ProviderChunk } from '../src/types/chunk.js'
import { userMessage, type AssistantMessage } from '../src/types/message.js'
import { chunk, reply, runAgentMarbles, scriptedModel } from '../marbles/index.js'
import { addTool, context, hello, textOf } from './helpers.js'

describe('agentLoop: one text turn', () => {
  it('emits the documented order in virtual time', () => {
    runAgentMarbles(({ expectEvents }) => {
      const model = scriptedModel([
        { marbles: '------s-a-b-(p|)', values: { s: chunk.start(), a: chunk.text('Hel'), b: chunk.text('lo'), p: chunk.stop() } },
      ])
      const run$ = agentLoop(hello, context(), { model: model.model, streamFn: model.streamFn })
      expectEvents(run$).toBe('(abcd)e-f-g-(hij|)', {
        a: 'agentStart',
        b: 'turnStart:0',
        c: 'msgStart:user',
        d: 'msgEnd:user',
        e: 'msgStart:assistant',
        f: 'textDelta:"Hel"',
        g: 'textDelta:"lo"',
        h: 'msgEnd:assistant:stop',
        i: 'turnEnd:0',
        j: 'agentEnd:stop',
      })
    })
  })

  it('reads as a timeline', () => {
    runAgentMarbles(({ expectTimeline }) => {
      const model = scriptedModel([
        { marbles: '-s-a-b-(p|)', values: { s: chunk.start(), a: chunk.text('Hel'), b: chunk.text('lo'), p: chunk.stop() } },
      ])
      expectTimeline(agentLoop(hello, context(), { model: model.model, streamFn: model.streamFn })).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user
        1 msgStart:assistant
        3 textDelta:"Hel"
        5 textDelta:"lo"
        7 msgEnd:assistant:stop, turnEnd:0, agentEnd:stop, |
      `)
    })
  })

  it('tool turn then text turn', async () => {
    const model = scriptedModel([reply.toolCalls([{ id: 'c1', name: 'add', args: { a: 2, b: 3 } }]), reply.text('5')])
    const events = await lastValueFrom(agentLoop(hello, context([addTool]), { model: model.model, streamFn: model.streamFn }).pipe(toArray()))
    const end = events.at(-1)
    expect(end?.type).toBe('agentEnd')
    if (end?.type !== 'agentEnd') return
    expect(end.result.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant'])
    expect(model.requests[1]?.messages.at(-1)).toMatchObject({ role: 'toolResult', content: [{ type: 'text', text: '5' }] })
  })

  it('a prompt message is sent as it is, frozen all the way down, as every message of the transcript', async () => {
    const model = scriptedModel([reply.toolCalls([{ id: 'c1', name: 'add', args: { a: 2, b: 3 } }]), reply.text('5')])
    const prompt = userMessage('add 2 and 3')
    await lastValueFrom(agentLoop(prompt, context([addTool]), { model: model.model, streamFn: model.streamFn }).pipe(toArray()))
    expect(Object.isFrozen(prompt) && Object.isFrozen(prompt.content) && Object.isFrozen(prompt.content[0])).toBe(true)
    for (const request of model.requests) {
      expect(request.messages[0]).toBe(prompt)
      for (const m of request.messages) expect(Object.isFrozen(m)).toBe(true)
    }
  })
})

describe('agentLoop: runs in flight at once', () => {
  async function* slowly(chunks: readonly ProviderChunk[]): AsyncGenerator<ProviderChunk> {
    for (const c of chunks) {
      await Promise.resolve()
      yield c
    }
  }

  it('two runs of one loop, interleaved, keep their own turns and answers; the turn is built at each subscription', async () => {
    const answers = [
      [chunk.start(), chunk.text('one '), chunk.text('two'), chunk.stop()],
      [chunk.start(), chunk.text('three'), chunk.stop()],
    ]
    const model = scriptedModel(answers.map((a) => () => fromAsyncIterable(slowly(a))))
    let built = 0
    const run$ = agentLoop(hello, context(), { model: model.model, streamFn: model.streamFn, turn: (s) => (built++, defaultTurn(s)) })
    const events = await lastValueFrom(merge(run$, run$).pipe(toArray()))
    expect(built).toBe(2)
    const ends = events.filter((e) => e.type === 'agentEnd')
    expect(ends.map((e) => (e.type === 'agentEnd' ? textOf(e.result.messages.at(-1) as AssistantMessage) : ''))).toEqual(['three', 'one two'])
    // Interleaved: the second run's deltas arrive between the first run's.
    const deltas = events.flatMap((e) => (e.type === 'messageUpdate' && e.chunk.type === 'textDelta' ? [e.chunk.text] : []))
    expect(deltas).toEqual(['one ', 'three', 'two'])
    expect(events.filter((e) => e.type === 'turnEnd')).toHaveLength(2)
  })
})
