/** Errors of the session stores beyond the port's conflict and lease errors. */
import { SessionDeletedError, SessionLeaseError, type SessionLease } from '../agent/session-store.js'

/** A call on a store after `close()`. */
export class SessionStoreClosedError extends Error {
  override readonly name = 'SessionStoreClosedError'
  constructor(
    /** `memorySessionStore.append`… */
    readonly entry: string,
  ) {
    super(`${entry}: the session store is closed`)
  }
}

/**
 * The lease fence of an append: `undefined` when `holder` holds `lease` at
 * `now`, else the error saying who holds it (or that it expired, or that
 * there is none).
 */
export function fenceError(sessionId: string, holder: string, lease: SessionLease | undefined, now: number): SessionLeaseError | undefined {
  if (lease !== undefined && lease.holder === holder && lease.expiresAt > now) return undefined
  if (lease === undefined) return new SessionLeaseError(sessionId, undefined, `session '${sessionId}': '${holder}' appends under a lease, but no one holds the session's lease`)
  if (lease.expiresAt <= now) {
    const when = new Date(lease.expiresAt).toISOString()
    return new SessionLeaseError(sessionId, lease, `session '${sessionId}': '${holder}' appends under a lease, but the lease of '${lease.holder}' expired at ${when}`)
  }
  return new SessionLeaseError(sessionId, lease)
}

/** A tail asked for the positions after `from`, which the session does not have (`last`: its last position, 0 when it does not exist): the session it read was deleted. */
export function deletedBefore(sessionId: string, from: number, last: number): SessionDeletedError {
  const now = last === 0 ? 'it does not exist' : `its last position is ${last}`
  return new SessionDeletedError(sessionId, `session '${sessionId}' has no position after ${from} (${now}): the session those positions were read from was deleted`)
}
