/**
 * A finished durable run, read back from its store after its stream records
 * were compacted away: the timeline still has each turn's time to first
 * token and the model lane its retry and fallback marks, from the marks the
 * `messageEnd` entries carry.
 */
import * as t from 'io-ts'
import { afterAll, describe, expect, it } from 'vitest'
import { Agent } from '../../src/agent/agent.js'
import { sessionTimeline } from '../../src/devtools/timeline.js'
import { memorySessionStore } from '../../src/sessions/memory-store.js'
import { defineTool } from '../../src/tools/define-tool.js'
import type { ProviderChunk } from '../../src/types/chunk.js'
import { ProviderError } from '../../src/types/provider-error.js'
import { modelSpec } from '../../src/types/model.js'
import { chunk, reply, scriptedModel } from '../../marbles/index.js'

const store = memorySessionStore()
afterAll(() => store.close())

const overloaded = ProviderError.of('overloaded', 'a', 'a 529 overloaded_error: Overloaded', { status: 529 })
const values = { s: chunk.start('r'), a: chunk.text('Hel'), b: chunk.text('lo'), p: chunk.stop(), u: chunk.usage({ input: 10, output: 2 }) }
/** `chunks` one per frame (1 ms on the async scheduler), after 3 frames. */
function spread(chunks: readonly ProviderChunk[]) {
  const letters = chunks.map((_, i) => String.fromCharCode(0x100 + i))
  return { marbles: `---${letters.join('-')}|`, values: Object.fromEntries(letters.map((l, i) => [l, chunks[i]!])) }
}
const echo = defineTool({ name: 'echo', description: 'Echoes.', parameters: t.type({ text: t.string }), execute: ({ text }) => `echo ${text}` })

describe('a finished durable run in the timeline', () => {
  it('has a time to first token per turn and its retry and fallback marks, after its stream records are compacted', async () => {
    // Turn 0: the primary streams, fails, is retried, fails again; the backup takes over and calls a tool.
    // Turn 1: whichever model answers, it streams its answer after a few ms.
    const primary = scriptedModel(
      [{ marbles: '--s-a-#', values, error: overloaded }, overloaded, { marbles: '---s-a-b-u-(p|)', values }],
      { model: modelSpec('a', 'big') },
    )
    const backup = scriptedModel(
      [spread(reply.toolCalls([{ id: 'e1', name: 'echo', args: { text: 'hi' } }])), { marbles: '---s-a-b-u-(p|)', values }],
      { model: modelSpec('b', 'small') },
    )
    const agent = await Agent.open({
      store,
      sessionId: 'finished',
      holder: 'test',
      systemPrompt: '',
      model: primary.model,
      streamFn: primary.streamFn,
      fallback: [{ model: backup.model, streamFn: backup.streamFn }],
      retry: { maxAttempts: 2, baseDelayMs: 1, random: () => 0.5 },
      tools: [echo],
    })
    const result = await agent.prompt('say hello').result
    expect(result.stopReason).toBe('stop')
    await agent.session!.close()

    const records = await store.read('finished')
    // Compacted: the chunks are gone, only the log is left.
    expect(records.filter((r) => r.body.type === 'stream')).toEqual([])
    const [run] = sessionTimeline('finished', records).runs
    expect(run!.turns).toHaveLength(2)
    for (const turn of run!.turns) {
      expect(turn.ttftMs).toBeGreaterThanOrEqual(1)
      expect(turn.ttftMs).toBeLessThanOrEqual(turn.modelMs!)
    }
    const marks = run!.lanes.find((l) => l.id === 'model')!.marks
    expect(marks.map((m) => [m.kind, m.label])).toEqual([
      ['retry', 'retry 1 in 1 ms: a 529 overloaded_error: Overloaded'],
      ['fallback', 'fallback to small: a 529 overloaded_error: Overloaded'],
    ])
    const turn0 = run!.turns[0]!
    for (const mark of marks) {
      expect(mark.at).toBeGreaterThanOrEqual(turn0.start)
      expect(mark.at).toBeLessThanOrEqual(turn0.start + turn0.modelMs!)
    }
  })
})
