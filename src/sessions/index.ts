/**
 * `rxagent/sessions`: the durable-session port and the store in memory. The
 * database stores have their own entries, so that their clients load only
 * when used: `rxagent/pglite` (embedded, one process) and `rxagent/postgres`
 * (many processes). Readers: `sessionEventsHandler` serves a session as
 * Server-Sent Events that resume after `Last-Event-ID`; `serveSessions` is a
 * small server around it.
 */
export {
  SessionConflictError,
  SessionDeletedError,
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
export { sessionEventsHandler, sessionIdFromPath, type SessionEventsHandler, type SessionEventsOptions, type SessionStreamEnd, type SessionStreamEndInfo } from './sse.js'
export { serveSessions, type ServeSessionsOptions, type SessionServer } from './serve-sessions.js'
