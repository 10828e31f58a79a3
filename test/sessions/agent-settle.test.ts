/**
 * Crash settlement on open: a log that ends in the middle of a run (the
 * process stopped) is settled — the partial answer rebuilt from the stream
 * records and kept as `aborted`, every tool call answered — and `continue()`
 * goes on without running again a tool whose result was committed.
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest'
import { partialAnswer } from '../../src/agent/session-open.js'
import { validTranscript } from '../../src/types/settle.js'
import type { ToolResultMessage } from '../../src/types/message.js'
import { modelSpec } from '../../src/types/model.js'
import { chunk, reply } from '../../marbles/index.js'
import { closeAll, closeStores, crashCopy, storeKinds, handModel, logOf, openAgent, runs, until } from './session-kit.js'

afterEach(closeAll)
afterAll(closeStores)
beforeEach(() => runs.clear())

describe.each(storeKinds)('crash settlement on open (%s store)', (_kind, make) => {
  it('mid-stream: the partial answer is kept as aborted, its cut-off tool call answered; continue goes on; committed tools do not run again', async () => {
    const store = await make()
    const model = handModel([reply.toolCalls([{ id: 'st-c1', name: 'echo', args: { text: 'one' } }]), 'manual'])
    const first = await openAgent(store, 'st1', model)
    void first.prompt('go')
    await until(() => model.live.length === 1, 'the second model call')
    for (const c of [chunk.start('m2'), chunk.text('partial '), chunk.text('answer'), chunk.toolStart('st-c2', 'echo'), chunk.args('st-c2', '{"te')]) model.live[0]!.next(c)
    await first.session!.flush()
    expect(runs.get('st-c1')).toBe(1)
    const crashed = await crashCopy(store, 'st1', make)

    const after = handModel([reply.text('resumed')])
    const second = await openAgent(crashed, 'st1', after, { holder: 'second' })
    const tail = second.log.slice(-2)
    expect(tail[0]).toMatchObject({ type: 'messageEnd', message: { role: 'assistant', stopReason: 'aborted', content: [{ type: 'text', text: 'partial answer' }, { type: 'toolCall', id: 'st-c2' }] } })
    expect(tail[1]).toMatchObject({ type: 'runFailed', error: expect.stringMatching(/process stopped/) })
    const results = second.state.messages.filter((m): m is ToolResultMessage => m.role === 'toolResult')
    expect(results.map((r) => [r.toolCallId, r.isError])).toEqual([['st-c1', false], ['st-c2', true]])
    expect(JSON.stringify(results[1]!.content)).toMatch(/the process stopped before its result was recorded/)
    expect(validTranscript(second.state.messages, 'reject')).toBe(second.state.messages)
    expect(second.state.isRunning).toBe(false)
    // Committed before open resolved.
    expect(second.session!.durableSeq).toBe(second.log.length)
    expect((await logOf(crashed, 'st1')).length).toBe(second.log.length)

    await second.continue()
    expect(second.state.messages.at(-1)).toMatchObject({ role: 'assistant', content: [{ type: 'text', text: 'resumed' }] })
    expect(runs.get('st-c1')).toBe(1)
    expect(after.calls()).toBe(1)
  })

  it('mid-tool: the running call gets an error result saying the process stopped; it is not run again', async () => {
    const store = await make()
    const model = handModel([reply.toolCalls([{ id: 'st-h1', name: 'hang', args: {} }, { id: 'st-e1', name: 'echo', args: { text: 'x' } }])])
    const first = await openAgent(store, 'st2', model)
    void first.prompt('go')
    await until(() => runs.get('st-h1') === 1 && runs.get('st-e1') === 1, 'both calls started')
    await first.session!.flush()
    const crashed = await crashCopy(store, 'st2', make)
    const second = await openAgent(crashed, 'st2', handModel([reply.text('ok')]), { holder: 'second' })
    expect(second.state.pendingToolCalls).toEqual([])
    const results = second.state.messages.filter((m): m is ToolResultMessage => m.role === 'toolResult')
    expect(results.map((r) => r.toolCallId).sort()).toEqual(['st-e1', 'st-h1'])
    expect(JSON.stringify(results.find((r) => r.toolCallId === 'st-h1')!.content)).toMatch(/process stopped/)
    // No stream records after the last entry: no partial message, only the settle entry.
    expect(second.log.at(-1)?.type).toBe('runFailed')
    await second.continue()
    expect(runs.get('st-h1')).toBe(1)
    expect(runs.get('st-e1')).toBe(1)
  })

  it('a finished run or an idle agent needs no settling', async () => {
    const store = await make()
    const first = await openAgent(store, 'st3', handModel([reply.text('hi')]))
    await first.prompt('go')
    await first.session!.flush()
    const crashed = await crashCopy(store, 'st3', make)
    const second = await openAgent(crashed, 'st3', handModel([]), { holder: 'second' })
    expect(second.log.length).toBe(first.log.length)
    expect(second.state).toEqual(first.state)
  })
})

describe('partialAnswer', () => {
  const model = modelSpec('p', 'p-1')
  it('folds the chunks from messageStart; a retry discards the attempt so far; nothing with content is nothing', () => {
    expect(partialAnswer([chunk.start(), chunk.text('ab'), chunk.text('c')], model, 5)).toMatchObject({ stopReason: 'aborted', timestamp: 5, content: [{ type: 'text', text: 'abc' }] })
    const retry = { type: 'retry' as const, attempt: 1, delayMs: 0, error: { kind: 'overloaded' as const, retryable: true, message: 'busy', provider: 'p' } }
    expect(partialAnswer([chunk.start(), chunk.text('old'), retry, chunk.text('new')], model, 0)?.content).toEqual([{ type: 'text', text: 'new' }])
    expect(partialAnswer([chunk.start()], model, 0)).toBeUndefined()
    expect(partialAnswer([], model, 0)).toBeUndefined()
    // A chunk the fold refuses ends what can be rebuilt.
    expect(partialAnswer([chunk.start(), chunk.text('kept'), chunk.args('nope', '{'), chunk.text('lost')], model, 0)?.content).toEqual([{ type: 'text', text: 'kept' }])
  })
})
