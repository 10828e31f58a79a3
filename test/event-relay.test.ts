/**
 * Events skip only the runtime's own relay stages (src/turn/event-relay.ts):
 * a stage written with RxJS operators, wherever it sits, still sees every
 * event, in order; a stage that replaces an event changes what the run emits;
 * and a run cut short by the consumer emits nothing past that point.
 */
import { describe, expect, it } from 'vitest'
import { filter, map, take, tap, toArray, lastValueFrom } from 'rxjs'
import { agentLoop, composeTurn, isTurnState, type TurnStages } from '../src/index.js'
import { chunk, reply, scriptedModel } from '../marbles/index.js'
import type { TurnItem, TurnOperator } from '../src/turn/turn-state.js'
import { addTool, context, hello } from './helpers.js'

const answer = [chunk.start('m', 'test'), chunk.text('a'), chunk.text('b'), chunk.text('c'), chunk.stop('endTurn')]

/** The standard turn with `stage` inserted after the stage named `after`. */
function turnWith(stage: TurnOperator, after: keyof Omit<TurnStages, 'abort'>): (s: TurnStages) => TurnOperator {
  const order = ['preTurnPolicy', 'startTurn', 'transformContext', 'streamLlm', 'dispatchTools', 'endTurn', 'postTurnPolicy', 'pollSteering', 'decideContinuation', 'postLoopPolicy', 'pollFollowUp'] as const
  return (s) => composeTurn(...order.flatMap((name) => (name === after ? [s[name], stage] : [s[name]])))
}

const deltas = (items: readonly TurnItem[]): string[] =>
  items.flatMap((item) => (!isTurnState(item) && item.type === 'messageUpdate' && item.chunk.type === 'textDelta' ? [item.chunk.text] : []))

describe('event relays', () => {
  for (const after of ['streamLlm', 'dispatchTools', 'decideContinuation', 'pollFollowUp'] as const) {
    it(`an RxJS stage after ${after} sees every streamed event, in order`, async () => {
      const seen: TurnItem[] = []
      const model = scriptedModel([answer])
      await lastValueFrom(agentLoop(hello, context(), { model: model.model, streamFn: model.streamFn, turn: turnWith(tap((item) => seen.push(item)), after) }))
      expect(deltas(seen)).toEqual(['a', 'b', 'c'])
    })
  }

  it('a stage that rewrites events changes what the run emits', async () => {
    const upper: TurnOperator = map((item) =>
      !isTurnState(item) && item.type === 'messageUpdate' && item.chunk.type === 'textDelta' ? { ...item, chunk: { ...item.chunk, text: item.chunk.text.toUpperCase() } } : item,
    )
    const model = scriptedModel([answer])
    const events = await lastValueFrom(agentLoop(hello, context(), { model: model.model, streamFn: model.streamFn, turn: turnWith(upper, 'streamLlm') }).pipe(toArray()))
    expect(deltas(events)).toEqual(['A', 'B', 'C'])
  })

  it('a stage that drops events past the relays: the run does not emit them', async () => {
    const noUpdates: TurnOperator = filter((item) => isTurnState(item) || item.type !== 'messageUpdate')
    const model = scriptedModel([reply.toolCalls([{ id: 'c1', name: 'add', args: { a: 2, b: 3 } }]), answer])
    const events = await lastValueFrom(
      agentLoop(hello, context([addTool]), { model: model.model, streamFn: model.streamFn, turn: turnWith(noUpdates, 'pollSteering') }).pipe(toArray()),
    )
    expect(events.filter((e) => e.type === 'messageUpdate')).toEqual([])
    expect(events.at(-1)?.type).toBe('agentEnd')
  })

  it('a consumer that takes the first events gets exactly those, and the run stops', async () => {
    const model = scriptedModel([answer])
    const events = await lastValueFrom(agentLoop(hello, context(), { model: model.model, streamFn: model.streamFn }).pipe(take(5), toArray()))
    expect(events.map((e) => e.type)).toEqual(['agentStart', 'turnStart', 'messageStart', 'messageEnd', 'messageStart'])
    expect(model.requests.length).toBe(1)
  })
})
