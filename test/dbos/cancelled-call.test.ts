// A DBOS call of a run's workflow that fails because the workflow was cancelled (DBOS can say so before the
// worker's polled cancel watch does) aborts the run instead of failing the call: the run then ends `aborted`
// (test/dbos/cluster.test.ts, "abort from another process", drives it end to end; this pins the rule).
import { describe, expect, it } from 'vitest'
import { firstValueFrom, NEVER, Observable, of, throwError, timeout, catchError } from 'rxjs'
import { Error as DbosErrors } from '@dbos-inc/dbos-sdk'
import { abortedIfCancelled } from '../../src/dbos/run-workflow.js'

const settle = () => new Promise((resolve) => setTimeout(resolve, 0))

describe('abortedIfCancelled', () => {
  it("DBOS's DBOSWorkflowCancelledError: the run is aborted once, after the failing call's notification, and the call never answers", async () => {
    let aborted = 0
    const seen: string[] = []
    const sub = throwError(() => new DbosErrors.DBOSWorkflowCancelledError('wf-1'))
      .pipe(abortedIfCancelled<string>(() => aborted++))
      .subscribe({ next: (v) => seen.push(`next ${v}`), error: (e) => seen.push(`error ${String(e)}`), complete: () => seen.push('complete') })
    expect(aborted, 'not from inside the failing notification').toBe(0)
    await settle()
    expect(aborted).toBe(1)
    expect(seen).toEqual([])
    expect(sub.closed, 'still waiting: the abort tears it down').toBe(false)
    sub.unsubscribe()
  })

  it('any other failure goes on as an error, and nothing is aborted', async () => {
    let aborted = 0
    const failure = new Error('connection refused')
    await expect(firstValueFrom(throwError(() => failure).pipe(abortedIfCancelled(() => aborted++)))).rejects.toBe(failure)
    const conflict = new DbosErrors.DBOSWorkflowConflictError('wf-2')
    await expect(firstValueFrom(throwError(() => conflict).pipe(abortedIfCancelled(() => aborted++)))).rejects.toBe(conflict)
    await settle()
    expect(aborted).toBe(0)
  })

  it('an answer passes through untouched', async () => {
    let aborted = 0
    expect(await firstValueFrom(of('approved').pipe(abortedIfCancelled(() => aborted++)))).toBe('approved')
    const waiting = new Observable<string>(() => undefined).pipe(abortedIfCancelled(() => aborted++), timeout({ first: 20, with: () => of('still waiting') }))
    expect(await firstValueFrom(waiting.pipe(catchError(() => NEVER)))).toBe('still waiting')
    expect(aborted).toBe(0)
  })
})
