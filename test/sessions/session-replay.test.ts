/**
 * `Agent.openReplaying` (what `rxagent/dbos` uses to execute a run again after
 * its worker died): the re-executed run's entries that the log holds are
 * checked and not appended twice, the rest is appended; a run that decides
 * differently is stopped, naming the entry — its policies' decisions too.
 */
import { describe, expect, it } from 'vitest'
import { Agent } from '../../src/agent/agent.js'
import { ReplayDivergenceError, ReplayGate } from '../../src/agent/session-replay.js'
import { Verdict, type PostTurnPolicy } from '../../src/policy/policy.js'
import { userMessage } from '../../src/types/message.js'
import type { ProviderChunk } from '../../src/types/chunk.js'
import { handModel, memoryStore, tools } from './session-kit.js'

const start: ProviderChunk = { type: 'messageStart', id: 'm1', model: 'hand-1' }
const callEcho: readonly ProviderChunk[] = [
  start,
  { type: 'toolUseStart', id: 'c1', name: 'echo' },
  { type: 'toolUseArgsDelta', id: 'c1', fragment: '{"text":"a"}' },
  { type: 'toolUseEnd', id: 'c1' },
  { type: 'stop', reason: 'toolUse' },
]
const answer = (text: string): readonly ProviderChunk[] => [{ type: 'messageStart', id: 'm2', model: 'hand-1' }, { type: 'textDelta', text }, { type: 'stop', reason: 'endTurn' }]

const types = (store: ReturnType<typeof memoryStore>, id: string) => store.read(id).then((records) => records.filter((r) => r.body.type !== 'stream').map((r) => r.body.type))

describe('Agent.openReplaying', () => {
  it('a run executed again from its start logs nothing twice: what the log holds is checked, the rest appended', async () => {
    const store = memoryStore()
    const first = handModel([callEcho, 'hang'])
    const opened = await Agent.open({ store, sessionId: 's', systemPrompt: 'p', model: first.model, streamFn: first.streamFn, tools })
    const startSeq = opened.session!.durableSeq
    void opened.prompt('go')
    // The first execution dies while the second answer streams: the log holds the run up to the tool result.
    for (let i = 0; !(await types(store, 's')).includes('turnEnd'); i++) {
      expect(i).toBeLessThan(500)
      await new Promise((r) => setTimeout(r, 5))
    }
    await opened.session!.flush()
    const held = await types(store, 's')
    await store.releaseLease('s', opened.session!.holder)

    const again = handModel([callEcho, answer('done')])
    const agent = await Agent.openReplaying({ store, sessionId: 's', systemPrompt: 'p', model: again.model, streamFn: again.streamFn, tools, lease: { onBusy: 'wait' } }, new ReplayGate(startSeq))
    const result = await agent.prompt('go')
    await agent.session!.close()
    expect(result.stopReason).toBe('stop')
    const log = await types(store, 's')
    expect(log.slice(0, held.length)).toEqual(held)
    expect(log.filter((t) => t === 'runStart')).toHaveLength(1)
    expect(log.filter((t) => t === 'messageEnd')).toHaveLength(4) // prompt, tool call, tool result, answer
    expect(log.at(-1)).toBe('agentEnd')
  })

  it('a run executed again that decides differently stops with a ReplayDivergenceError naming the entry', async () => {
    const store = memoryStore()
    const first = handModel([callEcho, answer('one')])
    const opened = await Agent.open({ store, sessionId: 'd', systemPrompt: 'p', model: first.model, streamFn: first.streamFn, tools })
    const startSeq = opened.session!.durableSeq
    await opened.prompt('go')
    await opened.session!.close()

    const other = handModel([answer('no tools this time')])
    const agent = await Agent.openReplaying({ store, sessionId: 'd', systemPrompt: 'p', model: other.model, streamFn: other.streamFn, tools }, new ReplayGate(startSeq))
    const result = await agent.prompt('go')
    await agent.session!.close().catch(() => undefined)
    expect(result.stopReason).toBe('error')
    expect(result.error).toMatch(/the run executed again logged 'messageEnd assistant text' at entry \d+, where the log holds 'messageEnd assistant toolCall:c1'/)
    expect(new ReplayDivergenceError('d', 3, 'x').name).toBe('ReplayDivergenceError')
  })

  it('the policy decisions a run logged are checked, not logged twice; a policy deciding otherwise is a divergence naming it', async () => {
    const nudge: PostTurnPolicy = { name: 'nudge', evaluate: ({ turnIndex }) => (turnIndex === 0 ? Verdict.inject(userMessage('go on')) : Verdict.continue) }
    const store = memoryStore()
    const first = handModel([callEcho, 'hang'])
    const opened = await Agent.open({ store, sessionId: 'p', systemPrompt: 'p', model: first.model, streamFn: first.streamFn, tools, policies: { postTurn: [nudge] } })
    const startSeq = opened.session!.durableSeq
    void opened.prompt('go')
    // The first execution dies while the model answers the nudged turn: the log holds the decision.
    for (let i = 0; !(await types(store, 'p')).includes('policyDecision'); i++) {
      expect(i).toBeLessThan(500)
      await new Promise((r) => setTimeout(r, 5))
    }
    await opened.session!.flush()
    const held = await types(store, 'p')
    await store.releaseLease('p', opened.session!.holder)

    const again = handModel([callEcho, answer('done')])
    const agent = await Agent.openReplaying({ store, sessionId: 'p', systemPrompt: 'p', model: again.model, streamFn: again.streamFn, tools, policies: { postTurn: [nudge] }, lease: { onBusy: 'wait' } }, new ReplayGate(startSeq))
    expect(await agent.prompt('go')).toMatchObject({ stopReason: 'stop' })
    await agent.session!.close()
    const log = await types(store, 'p')
    expect(log.slice(0, held.length)).toEqual(held)
    expect(log.filter((t) => t === 'policyDecision')).toHaveLength(1)

    const other = handModel([callEcho, answer('done')])
    const store2 = memoryStore()
    const stopped = await Agent.open({ store: store2, sessionId: 'q', systemPrompt: 'p', model: other.model, streamFn: other.streamFn, tools, policies: { postTurn: [{ name: 'enough', evaluate: () => Verdict.stop('one turn') }] } })
    const startSeq2 = stopped.session!.durableSeq
    await stopped.prompt('go')
    await stopped.session!.close()
    const third = handModel([callEcho, answer('done')])
    const diverging = await Agent.openReplaying(
      { store: store2, sessionId: 'q', systemPrompt: 'p', model: third.model, streamFn: third.streamFn, tools, policies: { postTurn: [{ name: 'other', evaluate: () => Verdict.stop('one turn') }] } },
      new ReplayGate(startSeq2),
    )
    const result = await diverging.prompt('go')
    await diverging.session!.close().catch(() => undefined)
    expect(result.error).toMatch(/logged 'policyDecision postTurn other stop' at entry \d+, where the log holds 'policyDecision postTurn enough stop'/)
  })
})
