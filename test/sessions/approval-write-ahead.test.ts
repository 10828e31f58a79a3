/**
 * Write-ahead approvals: in a durable session an approved call runs only
 * once its `approvalDecided` entry is committed, so a process killed while
 * the tool runs never leaves the call pending for the next opener to ask,
 * and run, again. The memory store's append is held pending here: the tool
 * must not start before it resolves.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { reply } from '../../marbles/index.js'
import type { SessionAppend, SessionStore } from '../../src/agent/session-store.js'
import { closeAll, crashCopy, handModel, logOf, memoryStore, openAgent, runs, until, wrapStore } from './session-kit.js'

afterEach(closeAll)
beforeEach(() => runs.clear())

const rmCall = (id: string) => reply.toolCalls([{ id, name: 'rm', args: { path: '/tmp/x' } }])

/** A store whose appends holding an `approvalDecided` entry wait for `release()` (or fail on `fail()`). */
function holdingStore(inner: SessionStore = memoryStore()) {
  let held: { readonly release: () => void; readonly fail: (error: Error) => void } | undefined
  const store = wrapStore(inner, {
    append: (id: string, append: SessionAppend) => {
      if (!append.records.some((r) => r.body.type === 'approvalDecided')) return inner.append(id, append)
      return new Promise((resolve, reject) => {
        held = { release: () => inner.append(id, append).then(resolve, reject), fail: reject }
      })
    },
  })
  return { store, held: () => held }
}

/** A few turns of the event loop: what was going to start has had every chance to. */
async function turns(n = 20): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setTimeout(resolve, 1))
}

describe('write-ahead approvals (memory store)', () => {
  it('an approval by resolveApproval: the tool starts only after the decision is committed', async () => {
    const { store, held } = holdingStore()
    const a = await openAgent(store, 'wa1', handModel([rmCall('wa-rm1'), reply.text('done')]), { approveTool: 'resolveApproval' })
    const run = a.prompt('clean up')
    await until(() => a.state.pendingApprovals.length === 1, 'the approval request')
    expect(a.resolveApproval('wa-rm1', { approved: true })).toBe(true)
    await until(() => held() !== undefined, 'the append of the decision')
    await turns()
    expect(runs.get('wa-rm1')).toBeUndefined()
    expect(a.log.some((e) => e.type === 'toolExecutionStart')).toBe(false)
    const decided = a.log.find((e) => e.type === 'approvalDecided')!
    expect(a.session!.durableSeq).toBeLessThanOrEqual(decided.seq)
    held()!.release()
    expect(await run).toMatchObject({ stopReason: 'stop' })
    expect(runs.get('wa-rm1')).toBe(1)
    await a.session!.flush()
    const log = await logOf(store, 'wa1')
    const at = (type: string) => log.findIndex((e) => e.type === type)
    expect(at('approvalDecided')).toBeGreaterThan(0)
    expect(at('toolExecutionStart')).toBeGreaterThan(at('approvalDecided'))
  })

  it('an approval by the approveTool callback waits for the commit too', async () => {
    const { store, held } = holdingStore()
    const a = await openAgent(store, 'wa2', handModel([rmCall('wa-rm2'), reply.text('done')]), { approveTool: () => ({ approved: true }) })
    const run = a.prompt('clean up')
    await until(() => held() !== undefined, 'the append of the decision')
    await turns()
    expect(runs.get('wa-rm2')).toBeUndefined()
    held()!.release()
    expect(await run).toMatchObject({ stopReason: 'stop' })
    expect(runs.get('wa-rm2')).toBe(1)
  })

  it('a rejection runs nothing and is answered at once, before its commit', async () => {
    const { store, held } = holdingStore()
    const a = await openAgent(store, 'wa3', handModel([rmCall('wa-rm3'), reply.text('not deleted')]), { approveTool: () => ({ approved: false, reason: 'no' }) })
    const run = a.prompt('clean up')
    await until(() => a.state.messages.some((m) => m.role === 'toolResult' && m.toolCallId === 'wa-rm3' && m.isError), 'the rejection as the result')
    expect(held()).toBeDefined()
    expect(a.session!.durableSeq).toBeLessThanOrEqual(a.log.find((e) => e.type === 'approvalDecided')!.seq)
    held()!.release()
    expect(await run).toMatchObject({ stopReason: 'stop' })
    expect(runs.get('wa-rm3')).toBeUndefined()
  })

  it('a decision whose append fails: the tool never runs, the run ends with the session failure', async () => {
    const { store, held } = holdingStore()
    const a = await openAgent(store, 'wa4', handModel([rmCall('wa-rm4'), reply.text('done')]), { approveTool: 'resolveApproval' })
    const run = a.prompt('clean up')
    await until(() => a.state.pendingApprovals.length === 1, 'the approval request')
    a.resolveApproval('wa-rm4', { approved: true })
    await until(() => held() !== undefined, 'the append of the decision')
    held()!.fail(new Error('disk full'))
    const result = await run
    expect(result).toMatchObject({ stopReason: 'error', error: expect.stringMatching(/session 'wa4' \(memory store\): could not append the log .*disk full/) })
    await turns()
    expect(runs.get('wa-rm4')).toBeUndefined()
    expect(() => a.prompt('more')).toThrow(/session 'wa4' is no longer writable/)
  })

  it('a suspended run resumed by resolveApproval in a reopened session waits for the commit as well', async () => {
    const first = memoryStore()
    const a = await openAgent(first, 'wa5', handModel([rmCall('wa-rm5')]), { approveTool: 'resolveApproval' })
    void a.prompt('clean up')
    await until(() => a.state.pendingApprovals.length === 1, 'the approval request')
    await a.session!.flush()
    const { store, held } = holdingStore(await crashCopy(first, 'wa5'))
    const b = await openAgent(store, 'wa5', handModel([reply.text('done')]), { approveTool: 'resolveApproval', holder: 'b' })
    expect(b.resolveApproval('wa-rm5', { approved: true })).toBe(true)
    await until(() => held() !== undefined, 'the append of the decision')
    await turns()
    expect(runs.get('wa-rm5')).toBeUndefined()
    held()!.release()
    await b.waitForIdle()
    expect(runs.get('wa-rm5')).toBe(1)
    expect(b.state.messages.at(-1)).toMatchObject({ role: 'assistant', stopReason: 'stop' })
  })
})
