/**
 * An approval answered from another process, on PGlite: process A runs
 * until an approval is requested and exits; process B opens the session
 * (taking over A's expired lease), sees the pending approval, resolves it,
 * and the run completes there; the transcript is checked, from B and from
 * the database.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AgentMessage } from '../../src/types/message.js'
import { validTranscript } from '../../src/types/settle.js'
import { pgliteSessionStore } from '../../src/sessions/pglite-store.js'
import { ChildProcesses } from './children.js'
import { logOf } from './session-kit.js'

const children = new ChildProcesses('test/sessions/children/approval-agent.ts')
const dataDir = mkdtempSync(join(tmpdir(), 'rxagent-approval-'))
afterAll(() => {
  children.killAll()
  rmSync(dataDir, { recursive: true, force: true })
})

describe('approvals from another process (PGlite)', () => {
  it('A asks and exits; B opens, resolves, and the run completes in B', async () => {
    const a = children.start('ask', dataDir)
    expect((await a.line(/^pending (\S+)$/))[1]).toBe('x-rm1')
    expect(await a.exit()).toEqual({ code: 0, signal: null })
    expect(a.lines(/^ran /)).toEqual([])

    const b = children.start('resolve', dataDir)
    expect(JSON.parse((await b.line(/^found (.*)$/))[1]!)).toEqual({ pending: ['x-rm1'], running: true })
    const messages = JSON.parse((await b.line(/^done (.*)$/))[1]!) as AgentMessage[]
    expect(await b.exit()).toEqual({ code: 0, signal: null })
    expect(b.lines(/^ran (\S+)$/).map((m) => m[1])).toEqual(['x-rm1', 'x-e1'])
    expect(messages.map((m) => (m.role === 'toolResult' ? `${m.toolCallId}:${m.isError}` : m.role))).toEqual(['user', 'assistant', 'x-rm1:false', 'x-e1:false', 'assistant'])
    expect(validTranscript(messages, 'reject')).toEqual(messages)

    const store = await pgliteSessionStore({ dataDir })
    try {
      const log = await logOf(store, 'approve')
      expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i))
      expect(log.filter((e) => e.type === 'approvalDecided')).toEqual([expect.objectContaining({ toolCallId: 'x-rm1', by: 'resolveApproval' })])
      expect(log.at(-1)).toMatchObject({ type: 'agentEnd', stopReason: 'stop' })
    } finally {
      await store.close()
    }
  }, 240_000)
})
