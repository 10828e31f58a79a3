/**
 * Policy decisions in the Agent's log: a run steered (inject, skip) and
 * stopped by policies logs each decision where the loop made it; the log
 * folds (and `Agent.fromLog` rebuilds) to the same state, and a durable
 * store keeps the entries and reopens to it. A log without them (written
 * before they existed) still decodes to the same state.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import * as t from 'io-ts'
import { Agent } from '../src/agent/index.js'
import { AgentLogEntry, decodeAgentLog } from '../src/agent/agent-log.js'
import { foldAgentLog } from '../src/agent/agent-reducer.js'
import { Verdict, type Policies } from '../src/policy/policy.js'
import { defineTool } from '../src/tools/define-tool.js'
import { reply, scriptedModel } from '../marbles/index.js'
import { userMessage } from '../src/types/message.js'
import { closeStores, logOf, storeKinds } from './sessions/session-kit.js'

const echo = defineTool({ name: 'echo', description: 'Echoes.', parameters: t.type({ text: t.string }), execute: ({ text }) => text })
const viaJson = <T>(value: T): unknown => JSON.parse(JSON.stringify(value)) as unknown

/** Turn 0: a nudge is injected after it; turn 1: its call `c2` is skipped, then the run is stopped. */
const policies: Policies = {
  postTurn: [
    { name: 'nudge', evaluate: ({ turnIndex }) => (turnIndex === 0 ? Verdict.inject(userMessage('keep going', 0)) : Verdict.continue) },
    { name: 'enough', evaluate: ({ turnIndex }) => (turnIndex === 1 ? Verdict.stop('two turns are enough') : Verdict.continue) },
  ],
  preDispatch: [{ name: 'no-c2', evaluate: ({ toolCall }) => (toolCall.id === 'c2' ? Verdict.skip('c2 is not wanted') : Verdict.continue) }],
}
const script = () =>
  scriptedModel([reply.toolCalls([{ id: 'c1', name: 'echo', args: { text: 'a' } }]), reply.toolCalls([{ id: 'c2', name: 'echo', args: { text: 'b' } }]), reply.text('never asked')])

const decisions = (log: readonly AgentLogEntry[]) => log.filter((e) => e.type === 'policyDecision')
const expected = [
  { type: 'policyDecision', slot: 'postTurn', policy: 'nudge', action: 'inject' },
  { type: 'policyDecision', slot: 'preDispatch', policy: 'no-c2', action: 'skip', reason: 'c2 is not wanted', toolCallId: 'c2' },
  { type: 'policyDecision', slot: 'postTurn', policy: 'enough', action: 'stop', reason: 'two turns are enough' },
]
/** `log` as an older rxagent wrote it: no `policyDecision` entries, the others renumbered. */
const withoutDecisions = (log: readonly AgentLogEntry[]) => log.filter((e) => e.type !== 'policyDecision').map((e, seq) => ({ ...e, seq }))

describe('policy decisions in the log', () => {
  it('a run steered and stopped by policies logs each decision where it was made, and replays to the same state', async () => {
    const model = script()
    const agent = new Agent({ id: 'P', systemPrompt: '', model: model.model, streamFn: model.streamFn, tools: [echo], policies })
    const result = await agent.prompt('go')
    expect(result).toMatchObject({ stopReason: 'policyStop', stoppedBy: 'enough' })
    const log = agent.log
    expect(decisions(log)).toEqual(expected.map((e) => expect.objectContaining(e)))
    // Where: the injection after turn 0's end, its message joining at turn 1's start; the skip inside turn 1, the stop after it.
    const types = log.map((e) => (e.type === 'policyDecision' ? `${e.policy}` : e.type === 'messageEnd' ? `${e.type}:${e.message.role}` : e.type))
    const at = (x: string, from = 0) => types.indexOf(x, from)
    expect(at('nudge')).toBeGreaterThan(at('turnEnd'))
    expect(types.slice(at('nudge') + 1, at('nudge') + 3)).toEqual(['turnStart', 'messageEnd:user'])
    expect(at('no-c2')).toBeLessThan(at('turnEnd', at('nudge')))
    expect(types.slice(-2)).toEqual(['enough', 'agentEnd'])
    for (const e of log) expect(AgentLogEntry.is(viaJson(e))).toBe(true)

    const replayed = Agent.fromLog(viaJson(log) as unknown[], { streamFn: model.streamFn, tools: [echo] })
    expect(replayed.log).toEqual(viaJson(log))
    expect(replayed.state).toEqual(agent.state)
    // An older log (no decisions) still decodes, and folds to the same state: a decision changes none.
    const older = decodeAgentLog(viaJson(withoutDecisions(log)), 'test')
    expect(foldAgentLog(older, () => [echo])).toEqual(foldAgentLog(log, () => [echo]))
  })
})

describe.each(storeKinds)('policy decisions in a durable session (%s store)', (_kind, make) => {
  const opened: Agent[] = []
  afterEach(async () => {
    await Promise.allSettled(opened.splice(0).map((a) => a.session?.close()))
  })
  afterAll(closeStores)

  it('are committed with the run and read back by the reopened agent, whose state is the same', async () => {
    const store = await make()
    const model = script()
    const agent = await Agent.open({ store, sessionId: 'p', holder: 'test', systemPrompt: '', model: model.model, streamFn: model.streamFn, tools: [echo], policies })
    opened.push(agent)
    await agent.prompt('go')
    await agent.session!.flush()
    const stored = await logOf(store, 'p')
    expect(decisions(stored)).toEqual(expected.map((e) => expect.objectContaining(e)))
    expect(stored).toEqual(viaJson(agent.log))
    const state = agent.state
    await agent.session!.close()

    const again = await Agent.open({ store, sessionId: 'p', holder: 'test', systemPrompt: '', model: model.model, streamFn: model.streamFn, tools: [echo] })
    opened.push(again)
    expect(again.log).toEqual(viaJson(agent.log))
    expect(again.state).toEqual(state)
  })
})
