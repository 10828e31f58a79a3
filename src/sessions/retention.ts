/**
 * Deleting old sessions through any store: list those last updated before a
 * time, delete them, until none is left. Stream records need no pass of
 * their own: a store compacts them when their message ends.
 */
import type { SessionStore } from '../agent/session-store.js'
import { invalidInput } from '../types/input.js'
import { describeValue } from '../types/codec.js'

/** Which sessions {@link deleteSessions} deletes. */
export interface DeleteSessionsOptions {
  /** Sessions last updated before this time (ms since the epoch). */
  readonly updatedBefore: number
  /** Only ids starting with this. */
  readonly prefix?: string
}

/**
 * Deletes every session of `store` last updated before `options.updatedBefore`
 * (and whose id starts with `options.prefix`, when given), a page at a time.
 * @returns how many were deleted.
 */
export async function deleteSessions(store: SessionStore, options: DeleteSessionsOptions): Promise<number> {
  const before: unknown = (options as { updatedBefore?: unknown } | undefined)?.updatedBefore
  if (typeof before !== 'number' || !Number.isFinite(before)) {
    throw invalidInput('deleteSessions', 'options', 'options.updatedBefore', `expected a time in ms since the epoch, got ${describeValue(before)}`, before)
  }
  let deleted = 0
  for (;;) {
    const page = await store.list({ updatedBefore: before, limit: 100, ...(options.prefix === undefined ? {} : { prefix: options.prefix }) })
    if (page.length === 0) return deleted
    for (const session of page) if (await store.delete(session.sessionId)) deleted++
  }
}
