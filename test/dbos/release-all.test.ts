import { describe, expect, it } from 'vitest'
import { releaseAll } from '../../src/dbos/release-all.js'

describe('releaseAll (what dbosAgentClient.close and worker.stop release)', () => {
  it('runs every step in order when all succeed', async () => {
    const ran: string[] = []
    await releaseAll('x.close', [
      ['a', async () => ran.push('a')],
      ['b', async () => ran.push('b')],
    ])
    expect(ran).toEqual(['a', 'b'])
  })

  it('runs the steps after a failing one, then rejects naming the step that failed', async () => {
    const ran: string[] = []
    const failed = releaseAll('dbosAgentClient.close', [
      ['closing the DBOS client', async () => Promise.reject(new Error('connection reset'))],
      ['ending the connection pool', async () => ran.push('pool')],
    ])
    await expect(failed).rejects.toThrow('dbosAgentClient.close: closing the DBOS client failed: connection reset')
    expect(ran).toEqual(['pool'])
  })

  it('reports every failure when several steps fail', async () => {
    const failed = releaseAll('worker.stop', [
      ['shutting DBOS down', () => Promise.reject(new Error('one'))],
      ['closing the session store', () => Promise.reject('two')],
      ['ending the connection pool', async () => undefined],
    ])
    await expect(failed).rejects.toBeInstanceOf(AggregateError)
    await expect(failed).rejects.toThrow('worker.stop: 2 steps failed (worker.stop: shutting DBOS down failed: one; worker.stop: closing the session store failed: two)')
  })
})
