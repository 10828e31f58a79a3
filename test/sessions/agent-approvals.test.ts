/**
 * Approvals from anywhere, in one process: a run waiting for an approval is
 * left pending in the log (its process closed the session, or stopped);
 * whoever opens the session sees it in `state.pendingApprovals`, and
 * `resolveApproval` resumes the run there.
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { ToolResultMessage } from '../../src/types/message.js'
import { validTranscript } from '../../src/types/settle.js'
import { reply } from '../../marbles/index.js'
import { closeAll, closeStores, crashCopy, storeKinds, handModel, logOf, openAgent, runs, until } from './session-kit.js'

afterEach(closeAll)
afterAll(closeStores)
beforeEach(() => runs.clear())

const twoCalls = reply.toolCalls([
  { id: 'ap-rm1', name: 'rm', args: { path: '/tmp/a' } },
  { id: 'ap-e1', name: 'echo', args: { text: 'x' } },
])

describe.each(storeKinds)('approvals from anywhere (%s store)', (_kind, make) => {
  it('close() detaches a run waiting for approval; another opener resolves it and the run completes there', async () => {
    const store = await make()
    const a = await openAgent(store, 'ap1', handModel([twoCalls]), { approveTool: 'resolveApproval' })
    const run = a.prompt('clean up')
    await until(() => a.state.pendingApprovals.length === 1, 'the approval request')
    await a.session!.close()
    const result = await run
    expect(result).toMatchObject({ stopReason: 'aborted', error: expect.stringMatching(/detached: the run waits for an approval in session 'ap1'/) })
    expect(() => a.prompt('more')).toThrow(/session 'ap1' is closed/)
    expect((await logOf(store, 'ap1')).at(-1)).toMatchObject({ type: 'approvalRequested', toolCallId: 'ap-rm1' })

    const model = handModel([reply.text('all done')])
    const b = await openAgent(store, 'ap1', model, { approveTool: 'resolveApproval', holder: 'b' })
    expect(b.state.pendingApprovals).toEqual([{ toolCallId: 'ap-rm1', toolName: 'rm', args: { path: '/tmp/a' } }])
    expect(() => b.continue()).toThrow(/a run waits for approval of 'ap-rm1' \(rm\): decide with resolveApproval\(\), or abort\(\)/)
    expect(() => b.prompt('hello')).toThrow(/waits for approval/)
    expect(b.resolveApproval('unknown', { approved: true })).toBe(false)
    expect(b.resolveApproval('ap-rm1', { approved: true })).toBe(true)
    await b.waitForIdle()
    await b.session!.flush()
    expect(runs.get('ap-rm1')).toBe(1)
    expect(runs.get('ap-e1')).toBe(1)
    const roles = b.state.messages.map((m) => (m.role === 'toolResult' ? `result:${m.toolCallId}` : m.role))
    expect(roles).toEqual(['user', 'assistant', 'result:ap-rm1', 'result:ap-e1', 'assistant'])
    expect(validTranscript(b.state.messages, 'reject')).toBe(b.state.messages)
    expect(b.state).toMatchObject({ isRunning: false, pendingApprovals: [] })
    const log = await logOf(store, 'ap1')
    expect(log.filter((e) => e.type === 'approvalDecided')).toEqual([expect.objectContaining({ toolCallId: 'ap-rm1', by: 'resolveApproval', decision: { approved: true } })])
    expect(log.filter((e) => e.type === 'approvalRequested')).toHaveLength(1)
    expect(log.at(-1)).toMatchObject({ type: 'agentEnd', stopReason: 'stop' })
  })

  it('after a crash while waiting: a rejection resumes the run with the rejection as the result; other calls needing approval are asked again', async () => {
    const store = await make()
    const calls = reply.toolCalls([
      { id: 'ap-rm2', name: 'rm', args: { path: '/a' } },
      { id: 'ap-rm3', name: 'rm', args: { path: '/b' } },
    ])
    const a = await openAgent(store, 'ap2', handModel([calls]), { approveTool: 'resolveApproval' })
    void a.prompt('go')
    await until(() => a.state.pendingApprovals.length > 0, 'an approval request')
    await a.session!.flush()
    const crashed = await crashCopy(store, 'ap2', make)
    const b = await openAgent(crashed, 'ap2', handModel([reply.text('ok')]), { approveTool: 'resolveApproval', holder: 'b' })
    const pending = b.state.pendingApprovals.map((p) => p.toolCallId)
    expect(pending[0]).toBe('ap-rm2')
    for (const id of pending) expect(b.resolveApproval(id, { approved: id !== 'ap-rm2', reason: 'not that one' })).toBe(true)
    await until(() => !b.isRunning || b.state.pendingApprovals.some((p) => p.toolCallId === 'ap-rm3'), 'rm3 asked or run over')
    if (b.isRunning) expect(b.resolveApproval('ap-rm3', { approved: true })).toBe(true)
    await b.waitForIdle()
    const results = b.state.messages.filter((m): m is ToolResultMessage => m.role === 'toolResult')
    expect(results.map((r) => [r.toolCallId, r.isError])).toEqual([['ap-rm2', true], ['ap-rm3', false]])
    expect(runs.get('ap-rm2')).toBeUndefined()
    expect(runs.get('ap-rm3')).toBe(1)
    expect(b.state.messages.at(-1)).toMatchObject({ role: 'assistant', stopReason: 'stop' })
  })

  it('decisions logged before the process stopped are kept: the resumed run does not ask about them again', async () => {
    const store = await make()
    const calls = reply.toolCalls([
      { id: 'ap-rm5', name: 'rm', args: { path: '/a' } },
      { id: 'ap-rm6', name: 'rm', args: { path: '/b' } },
    ])
    const a = await openAgent(store, 'ap5', handModel([calls]), { approveTool: 'resolveApproval' })
    void a.prompt('go')
    await until(() => a.state.pendingApprovals.length > 0, 'the first approval request')
    await a.session!.flush()
    const crashed = await crashCopy(store, 'ap5', make)
    // What the stopped process had logged besides: rm5 approved, then rm6 asked.
    const length = (await logOf(crashed, 'ap5')).length
    await crashed.append('ap5', {
      expectedSeq: length,
      records: [
        { at: 0, body: { type: 'approvalDecided', seq: length, toolCallId: 'ap-rm5', decision: { approved: true }, by: 'resolveApproval' } },
        { at: 0, body: { type: 'approvalRequested', seq: length + 1, toolCallId: 'ap-rm6', toolName: 'rm', args: { path: '/b' } } },
      ],
    })
    const b = await openAgent(crashed, 'ap5', handModel([reply.text('ok')]), { approveTool: 'resolveApproval', holder: 'b' })
    expect(b.state.pendingApprovals.map((p) => p.toolCallId)).toEqual(['ap-rm6'])
    expect(b.resolveApproval('ap-rm6', { approved: false, reason: 'keep it' })).toBe(true)
    await b.waitForIdle()
    const results = b.state.messages.filter((m): m is ToolResultMessage => m.role === 'toolResult')
    expect(results.map((r) => [r.toolCallId, r.isError])).toEqual([['ap-rm5', false], ['ap-rm6', true]])
    expect(runs.get('ap-rm5')).toBe(1)
    expect(runs.get('ap-rm6')).toBeUndefined()
    expect(b.log.filter((e) => e.type === 'approvalRequested').map((e) => e.type === 'approvalRequested' && e.toolCallId)).toEqual(['ap-rm5', 'ap-rm6'])
  })

  it('abort() gives a suspended run up: its calls get error results, the agent takes prompts again', async () => {
    const store = await make()
    const a = await openAgent(store, 'ap3', handModel([twoCalls]), { approveTool: 'resolveApproval' })
    void a.prompt('go')
    await until(() => a.state.pendingApprovals.length === 1, 'the approval request')
    await a.session!.close()
    const b = await openAgent(store, 'ap3', handModel([reply.text('fine')]), { approveTool: 'resolveApproval', holder: 'b' })
    await b.abort()
    expect(b.state).toMatchObject({ isRunning: false, pendingApprovals: [], error: 'aborted while waiting for approval' })
    expect(validTranscript(b.state.messages, 'reject')).toBe(b.state.messages)
    await b.prompt('something else')
    expect(b.state.messages.at(-1)).toMatchObject({ role: 'assistant', content: [{ type: 'text', text: 'fine' }] })
  })

  it('refuses a decision that does not decode for a suspended run', async () => {
    const store = await make()
    const a = await openAgent(store, 'ap4', handModel([twoCalls]), { approveTool: 'resolveApproval' })
    void a.prompt('go')
    await until(() => a.state.pendingApprovals.length === 1, 'the approval request')
    await a.session!.close()
    const b = await openAgent(store, 'ap4', handModel([]), { approveTool: 'resolveApproval', holder: 'b' })
    expect(() => b.resolveApproval('ap-rm1', { approved: 'yes' } as never)).toThrow(/Agent\.resolveApproval: invalid decision/)
    expect(b.state.pendingApprovals).toHaveLength(1)
  })
})
