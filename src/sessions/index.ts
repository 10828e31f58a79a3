/**
 * `rxagent/sessions`: the durable-session port and the store in memory. The
 * database stores have their own entries, so that their clients load only
 * when used: `rxagent/pglite` (embedded, one process) and `rxagent/postgres`
 * (many processes).
 */
export {
  SessionConflictError,
  SessionLeaseError,
  SessionRecord,
  SessionRecordBody,
  StreamRecord,
  TimedRecord,
  type LeaseOutcome,
  type SessionAppend,
  type SessionAppended,
  type SessionInfo,
  type SessionLease,
  type SessionListOptions,
  type SessionStore,
} from '../agent/session-store.js'
export { memorySessionStore, type MemorySessionStore, type MemorySessionStoreOptions } from './memory-store.js'
export { SessionStoreClosedError } from './errors.js'
export { deleteSessions, type DeleteSessionsOptions } from './retention.js'
