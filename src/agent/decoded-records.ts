/**
 * The records this library's own stores decoded and froze on their way out
 * (`decodeStored` in `src/sessions/validate.ts`): `Agent.open` takes their
 * bodies as checked instead of checking all of them a second time. A frozen
 * record cannot change after its check; a custom store's records are not
 * here and are always checked. Opening the DURABLE bench's 10,016-entry
 * session on PGlite spent ~9 ms of ~100 in that second check (CPU profile of
 * 15 opens).
 *
 * Internal: not exported from the package.
 */
import type { SessionRecord } from './session-store.js'

const decoded = new WeakSet<SessionRecord>()

/** Notes that `record` (frozen, all the way down) was decoded by a store of this library. */
export function markDecoded(record: SessionRecord): SessionRecord {
  decoded.add(record)
  return record
}

/** Whether `record` was decoded by a store of this library. */
export const wasDecoded = (record: SessionRecord): boolean => decoded.has(record)
