/**
 * A suspended run resumed in another process is still one run: its log has
 * one start and one end (`runStart` … `runResumed` … `agentEnd`), the
 * resumed run keeps its id, `Agent.fromLog` folds the log to the live
 * agent's state, and the devtools timeline draws one run that finishes.
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest'
import { lastValueFrom, toArray } from 'rxjs'
import { sessionRunToAgUi } from '../../src/ag-ui/session-replay.js'
import { Agent } from '../../src/agent/agent.js'
import type { AgentLogEntry } from '../../src/agent/agent-log.js'
import { foldAgentLog } from '../../src/agent/agent-reducer.js'
import type { AgentState } from '../../src/agent/agent-state.js'
import type { SessionStore } from '../../src/agent/session-store.js'
import { sessionTimeline } from '../../src/devtools/timeline.js'
import { reply } from '../../marbles/index.js'
import { closeAll, closeStores, handModel, logOf, openAgent, runs, storeKinds, tools, until } from './session-kit.js'

afterEach(closeAll)
afterAll(closeStores)
beforeEach(() => runs.clear())

/** Each run of `log` as `[runId, starts, ends]`, in order; throws on a start while a run is open, or an end with none open. */
function runsOf(log: readonly AgentLogEntry[]): (readonly [string, number, number])[] {
  const seen: [string, number, number][] = []
  let open: [string, number, number] | undefined
  for (const e of log) {
    if (e.type === 'runStart') {
      if (open !== undefined) throw new Error(`runStart '${e.runId}' at ${e.seq} while run '${open[0]}' is open`)
      open = [e.runId, 1, 0]
      seen.push(open)
    } else if (e.type === 'agentEnd' || e.type === 'runFailed') {
      if (open === undefined) throw new Error(`${e.type} at ${e.seq} with no run open`)
      open[2]++
      open = undefined
    }
  }
  return seen
}

const settled = (state: AgentState): AgentState => ({ ...state, streamMessage: undefined })
const byName = (names: readonly string[]) => names.map((n) => tools.find((x) => x.name === n)!)

/** Opens `sessionId` again, watching the live state after each entry and the run ids of events; resolves `callId` and waits for the run. */
async function resolveThere(store: SessionStore, sessionId: string, callId: string, script: Parameters<typeof handModel>[0], holder: string) {
  const agent = await openAgent(store, sessionId, handModel(script), { approveTool: 'resolveApproval', holder })
  const live: AgentState[] = []
  agent.log$.subscribe(() => live.push(settled(agent.state)))
  const runIds = new Set<string | null>()
  agent.subscribe((e) => runIds.add(e.runId))
  expect(agent.resolveApproval(callId, { approved: true })).toBe(true)
  return { agent, live, runIds }
}

/** What every reader of the session sees: one run `runId`, started and ended once, that finished; the live state is the fold of the log. */
async function expectOneRun(store: SessionStore, sessionId: string, agent: Agent, runId: string, live: readonly AgentState[]): Promise<void> {
  const log = await logOf(store, sessionId)
  expect(log).toEqual(agent.log)
  expect(runsOf(log)).toEqual([[runId, 1, 1]])
  expect(log.filter((e) => e.type === 'agentStart')).toHaveLength(1)
  expect(log.at(-1)).toMatchObject({ type: 'agentEnd', stopReason: 'stop' })
  // The live state after every entry is the fold of the log so far; fromLog folds the whole log to it.
  const before = log.length - live.length
  live.forEach((state, i) => expect(settled(foldAgentLog(log.slice(0, before + i + 1), byName))).toEqual(state))
  const rebuilt = Agent.fromLog(JSON.parse(JSON.stringify(log)) as unknown[], { streamFn: handModel([]).streamFn, tools })
  expect(rebuilt.state).toEqual(agent.state)
  expect(rebuilt.log).toHaveLength(log.length)

  const timeline = sessionTimeline(sessionId, await store.read(sessionId))
  expect(timeline.runs.map((r) => [r.runId, r.status, r.stopReason])).toEqual([[runId, 'done', 'stop']])
  expect(timeline.runs[0]!.turns.every((turn) => turn.end !== undefined)).toBe(true)
  expect(timeline.pendingApprovals).toEqual([])
  const agUi = (await lastValueFrom(sessionRunToAgUi(store, sessionId).pipe(toArray()))).map((p) => p.event.type)
  expect(agUi.filter((type) => type === 'RUN_STARTED')).toHaveLength(1)
  expect(agUi.at(-1)).toBe('RUN_FINISHED')
}

describe.each(storeKinds)('a suspended run resumed after reopening (%s store)', (_kind, make) => {
  it('is one run: one start, one end, the same run id; fromLog folds to the live state; the timeline draws it done', async () => {
    const store = await make()
    const calls = reply.toolCalls([
      { id: 'rr-rm1', name: 'rm', args: { path: '/a' } },
      { id: 'rr-e1', name: 'echo', args: { text: 'x' } },
    ])
    const a = await openAgent(store, 'rr1', handModel([calls]), { approveTool: 'resolveApproval' })
    const first = a.prompt('clean up')
    await until(() => a.state.pendingApprovals.length === 1, 'the approval request')
    await a.session!.close()
    await first

    const { agent: b, live, runIds } = await resolveThere(store, 'rr1', 'rr-rm1', [reply.text('all done')], 'b')
    await b.waitForIdle()
    await b.session!.flush()
    expect(b.state).toMatchObject({ isRunning: false, pendingApprovals: [], error: undefined })
    expect(runs.get('rr-rm1')).toBe(1)
    expect(runIds).toEqual(new Set([first.runId]))
    expect(b.log.filter((e) => e.type === 'runResumed')).toEqual([expect.objectContaining({ runId: first.runId })])
    await expectOneRun(store, 'rr1', b, first.runId, live)
    // A log written before `runResumed` (the resumed run started anew) still decodes and folds to the same state.
    const old = b.log.flatMap((e): unknown[] => (e.type === 'runResumed' ? [{ type: 'runStart', runId: 'older/run-2', prompts: [] }, { type: 'agentStart' }] : [e]))
    const older = Agent.fromLog(old.map((e, seq) => ({ ...(e as object), seq })), { streamFn: handModel([]).streamFn, tools })
    expect(older.state).toEqual(b.state)
    // The next run is a new one, numbered after the resumed one.
    await b.session!.close()
    const c = await openAgent(store, 'rr1', handModel([reply.text('again')]), { holder: 'c' })
    expect((await c.prompt('more')).stopReason).toBe('stop')
    expect(runsOf(c.log).map(([id]) => id)).toEqual([first.runId, first.runId.replace(/1$/, '2')])
  })

  it('suspended twice (the resumed run waits again, its session is closed again): still one run', async () => {
    const store = await make()
    const a = await openAgent(store, 'rr2', handModel([reply.toolCalls([{ id: 'rr-rm2', name: 'rm', args: { path: '/a' } }])]), { approveTool: 'resolveApproval' })
    const first = a.prompt('clean up')
    await until(() => a.state.pendingApprovals.length === 1, 'the first approval request')
    await a.session!.close()
    await first

    const again = reply.toolCalls([{ id: 'rr-rm3', name: 'rm', args: { path: '/b' } }])
    const { agent: b } = await resolveThere(store, 'rr2', 'rr-rm2', [again], 'b')
    await until(() => b.state.pendingApprovals.some((p) => p.toolCallId === 'rr-rm3'), 'the second approval request')
    await b.session!.close()
    await b.waitForIdle()

    const { agent: c, live, runIds } = await resolveThere(store, 'rr2', 'rr-rm3', [reply.text('all done')], 'c')
    await c.waitForIdle()
    await c.session!.flush()
    expect([runs.get('rr-rm2'), runs.get('rr-rm3')]).toEqual([1, 1])
    expect(runIds).toEqual(new Set([first.runId]))
    expect(c.log.filter((e) => e.type === 'runResumed')).toHaveLength(2)
    await expectOneRun(store, 'rr2', c, first.runId, live)
  })

  it('keeps counting its turns: the resumed turn has the number it was suspended in, and maxTurns holds across', async () => {
    const store = await make()
    const first = reply.toolCalls([{ id: 'mt-e1', name: 'echo', args: { text: 'a' } }])
    const second = reply.toolCalls([{ id: 'mt-rm1', name: 'rm', args: { path: '/a' } }])
    const a = await openAgent(store, 'mt1', handModel([first, second]), { approveTool: 'resolveApproval', maxTurns: 2 })
    const run = a.prompt('clean up')
    await until(() => a.state.pendingApprovals.length === 1, 'the approval request')
    await a.session!.close()
    await run

    // Suspended in its second turn (index 1) under maxTurns 2: resumed, that turn is its last; the model is not asked again.
    const model = handModel([reply.text('one turn too many')])
    const b = await openAgent(store, 'mt1', model, { approveTool: 'resolveApproval', maxTurns: 2, holder: 'b' })
    expect(b.resolveApproval('mt-rm1', { approved: true })).toBe(true)
    await b.waitForIdle()
    await b.session!.flush()
    expect(model.calls()).toBe(0)
    expect(runs.get('mt-rm1')).toBe(1)
    const log = await logOf(store, 'mt1')
    expect(log.flatMap((e) => (e.type === 'turnStart' ? [e.turnIndex] : []))).toEqual([0, 1, 1])
    expect(log.at(-1)).toMatchObject({ type: 'agentEnd', stopReason: 'maxTurns' })
  })
})
