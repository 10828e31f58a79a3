/**
 * What makes opening a long log fast, held to what it replaces: the compiled
 * `isAgentLogEntry` gives io-ts's own verdict on real and broken entries, and
 * `foldAgentLog` (messages of consecutive `messageEnd` entries appended
 * together) gives the state of reducing entry by entry — around a `reset` and
 * a `runFailed` that settles the transcript too — while copying the history
 * once, not once per message.
 */
import { describe, expect, it } from 'vitest'
import * as t from 'io-ts'
import { Agent } from '../src/agent/index.js'
import { AgentLogEntry, decodeAgentLog, isAgentLogEntry } from '../src/agent/agent-log.js'
import { foldAgentLog, reduceAgentLog, stateOfInit } from '../src/agent/agent-reducer.js'
import { defineTool } from '../src/tools/define-tool.js'
import type { AgentMessage } from '../src/types/message.js'
import { reply, scriptedModel } from '../marbles/index.js'

const echo = defineTool({ name: 'echo', description: 'Echoes.', parameters: t.type({ text: t.string }), execute: ({ text }) => text })
const viaJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T
const resolve = (): readonly never[] => []

/** A log with tool turns, a reset, a second run, and a run cut off with a tool call unanswered (as JSON, as a store gives it back). */
async function longLog(): Promise<AgentLogEntry[]> {
  const model = scriptedModel([
    reply.toolCalls([{ id: 'c1', name: 'echo', args: { text: 'a' } }]),
    reply.toolCalls([{ id: 'c2', name: 'echo', args: { text: 'b' } }]),
    reply.text('done'),
    reply.text('after the reset'),
  ])
  const agent = new Agent({ id: 'L', systemPrompt: 'sys', model: model.model, streamFn: model.streamFn, tools: [echo] })
  await agent.prompt('go')
  agent.reset()
  await agent.prompt('again')
  const log = viaJson([...agent.log]) as AgentLogEntry[]
  // A run cut off after its model asked for a tool: the interruption settles the transcript.
  const seq = (): number => log.length
  log.push({ seq: seq(), type: 'runStart', runId: 'r-cut', prompts: [{ role: 'user', content: [{ type: 'text', text: 'cut' }], timestamp: 1 }] } as AgentLogEntry)
  const cut: AgentMessage = viaJson(agent.state.messages.find((m) => m.role === 'assistant')!)
  const toolCallMessage = { ...(log.find((e) => e.type === 'messageEnd' && e.message.role === 'assistant' && e.message.content.some((b) => b.type === 'toolCall')) as { message: AgentMessage }).message }
  log.push({ seq: seq(), type: 'messageEnd', message: cut } as AgentLogEntry)
  log.push({ seq: seq(), type: 'messageEnd', message: viaJson(toolCallMessage) } as AgentLogEntry)
  log.push({ seq: seq(), type: 'runFailed', error: 'interrupted', settleReason: 'the process stopped' } as AgentLogEntry)
  return log
}

describe('opening a long log', () => {
  it('isAgentLogEntry gives the codec’s verdict on every entry of a real log and on each entry with a field removed, nulled or retyped', async () => {
    const log = await longLog()
    expect(log.every((e) => AgentLogEntry.is(e))).toBe(true)
    let checked = 0
    for (const entry of log) {
      expect(isAgentLogEntry(entry)).toBe(AgentLogEntry.is(entry))
      for (const key of Object.keys(entry)) {
        for (const broken of [undefined, null, 42, 'x', [], {}]) {
          const mutated: Record<string, unknown> = { ...entry }
          if (broken === undefined) delete mutated[key]
          else mutated[key] = broken
          expect(isAgentLogEntry(mutated), `${entry.type}.${key} = ${JSON.stringify(broken)}`).toBe(AgentLogEntry.is(mutated))
          checked++
        }
      }
    }
    expect(checked).toBeGreaterThan(100)
  })

  it('decodeAgentLog still names the path of the one bad entry', async () => {
    const log = await longLog()
    const bad = log.findIndex((e) => e.type === 'messageEnd')
    const broken: unknown[] = log.map((e, i) => (i === bad ? { ...e, message: { ...(e as { message: object }).message, role: 'robot' } } : e))
    expect(() => decodeAgentLog(broken, 'Agent.fromLog')).toThrow(`[${bad}].message`)
  })

  it('foldAgentLog gives the state of reducing entry by entry, across a reset and a settling runFailed, at every prefix', async () => {
    const log = await longLog()
    expect(log.some((e) => e.type === 'reset')).toBe(true)
    for (let n = 1; n <= log.length; n++) {
      const prefix = viaJson(log.slice(0, n))
      let state = stateOfInit(prefix[0] as Extract<AgentLogEntry, { type: 'init' }>, resolve)
      for (const e of viaJson(prefix.slice(1))) state = reduceAgentLog(state, e, resolve)
      expect(foldAgentLog(prefix, resolve), `prefix of ${n}`).toEqual(state)
    }
    // The settled end: the cut-off call got its error result.
    const end = foldAgentLog(log, resolve)
    const last = end.messages[end.messages.length - 1]!
    expect(last).toMatchObject({ role: 'toolResult', isError: true })
    expect(Object.isFrozen(end.messages)).toBe(true)
  })

  it('foldAgentLog copies the history once: a fold of 2,000 messages makes one transcript, not one per message', () => {
    const entries: unknown[] = [viaJson(new Agent({ systemPrompt: '', ...scriptedModel([]) }).log[0])]
    for (let i = 0; i < 2000; i++) entries.push({ seq: entries.length, type: 'messageEnd', message: { role: 'user', content: [{ type: 'text', text: `m${i}` }], timestamp: i } })
    const decoded = decodeAgentLog(entries, 'test')
    const slice = Array.prototype.slice
    let copied = 0
    Array.prototype.slice = function (this: unknown[], ...args: [number?, number?]) {
      const out = slice.apply(this, args)
      copied += out.length
      return out
    } as typeof slice
    let state
    try {
      state = foldAgentLog(decoded, resolve)
    } finally {
      Array.prototype.slice = slice
    }
    expect(state.messages).toHaveLength(2000)
    // One by one, this was 2,001,000 elements copied (1 + 2 + … + 2,000).
    expect(copied).toBeLessThan(10_000)
  })
})
