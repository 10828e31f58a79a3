/**
 * A streamed assistant message's `messageEnd` entry carries its marks (when
 * its turn started, its first chunk, its end, retries and fallbacks), timed
 * on the agent's scheduler; other messages, and logs without them, have none.
 */
import { describe, expect, it } from 'vitest'
import { Agent } from '../src/agent/index.js'
import { decodeAgentLog, type AgentLogEntry } from '../src/agent/agent-log.js'
import { ProviderError } from '../src/types/provider-error.js'
import { assistantMessage } from '../src/types/message.js'
import { modelSpec } from '../src/types/model.js'
import { chunk, runAgentMarbles, scriptedModel } from '../marbles/index.js'

const overloaded = ProviderError.of('overloaded', 'a', 'a 529 overloaded_error: Overloaded', { status: 529 })
const values = { s: chunk.start('r'), a: chunk.text('Hel'), b: chunk.text('lo'), p: chunk.stop(), u: chunk.usage({ input: 10, output: 0 }) }
const ends = (log: readonly AgentLogEntry[]) => log.flatMap((e) => (e.type === 'messageEnd' ? [e] : []))

describe('stream marks on messageEnd', () => {
  it('times the turn start, the first chunk, each retry and fallback, and the end', () => {
    const log = runAgentMarbles(({ scheduler }) => {
      const a = scriptedModel([{ marbles: '-s-a-#', values, error: overloaded }, overloaded], { model: modelSpec('a', 'big') })
      const b = scriptedModel([{ marbles: '-s-u-a-b-(p|)', values }], { model: modelSpec('b', 'small') })
      const agent = new Agent({ systemPrompt: '', model: a.model, streamFn: a.streamFn, scheduler, fallback: [{ model: b.model, streamFn: b.streamFn }], retry: { maxAttempts: 2, baseDelayMs: 10, random: () => 0.5 } })
      scheduler.schedule(() => void agent.prompt('hi'), 100)
      return agent
    }).log
    const [user, assistant] = ends(log)
    expect(user!.stream).toBeUndefined()
    expect(assistant!.stream).toEqual({
      startedAt: 100,
      firstChunkAt: 103,
      endedAt: 124,
      retries: [{ at: 105, attempt: 1, delayMs: 10, error: 'a 529 overloaded_error: Overloaded' }],
      fallbacks: [{ at: 115, provider: 'b', modelId: 'small', error: 'a 529 overloaded_error: Overloaded' }],
    })
    expect(Object.isFrozen(assistant!.stream)).toBe(true)
  })

  it('leaves out what did not happen: no chunk, no retry, no fallback', () => {
    const log = runAgentMarbles(({ scheduler }) => {
      const a = scriptedModel([{ marbles: '--s-u-(p|)', values }])
      const agent = new Agent({ systemPrompt: '', model: a.model, streamFn: a.streamFn, scheduler })
      void agent.prompt('hi')
      return agent
    }).log
    // Usage and stop are not content: no first chunk.
    expect(ends(log)[1]!.stream).toEqual({ startedAt: 0, endedAt: 6 })
  })

  it('decodes a log with marks, and one written before them', () => {
    const init = { seq: 0, type: 'init', version: 1, agentId: 'x', systemPrompt: '', model: modelSpec('p', 'm'), availableModels: [], tools: [], messages: [] }
    const message = assistantMessage('hello')
    const old = decodeAgentLog([init, { seq: 1, type: 'messageEnd', message }], 'test')
    expect(old[1]).not.toHaveProperty('stream')
    const marked = decodeAgentLog([init, { seq: 1, type: 'messageEnd', message, stream: { startedAt: 1, endedAt: 2 } }], 'test')
    expect(marked[1]).toMatchObject({ stream: { startedAt: 1, endedAt: 2 } })
    expect(() => decodeAgentLog([init, { seq: 1, type: 'messageEnd', message, stream: { startedAt: 1 } }], 'test')).toThrow(/\[1\]\.stream\.endedAt/)
  })
})
