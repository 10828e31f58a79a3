/**
 * Releasing what a client or worker holds (DBOS, the session store, a pool)
 * is a few steps in a row, and one that fails must not leave the others
 * open: a pool left open keeps the process alive and its connections count
 * against the server's limit.
 */
import { errorText } from '../types/codec.js'

/**
 * Runs every step in order, each after the one before has settled, failed
 * or not; rejects afterwards with the first failure, named by its step
 * (`closing the session store: …`), or with an AggregateError of them all
 * when several failed.
 */
export async function releaseAll(what: string, steps: readonly (readonly [name: string, step: () => Promise<unknown>])[]): Promise<void> {
  const failures: Error[] = []
  for (const [name, step] of steps) {
    try {
      await step()
    } catch (error) {
      failures.push(new Error(`${what}: ${name} failed: ${errorText(error)}`, { cause: error }))
    }
  }
  if (failures.length === 1) throw failures[0]
  if (failures.length > 1) throw new AggregateError(failures, `${what}: ${failures.length} steps failed (${failures.map((f) => f.message).join('; ')})`)
}
