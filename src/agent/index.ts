/** The Agent's public names; `src/index.ts` re-exports them from their files. The state reducer stays internal. */
export {
  Agent,
  AgentBusyError,
  DEFAULT_PLAN_MODE_ADDENDUM,
  StructuredOutputError,
  type AgentOptions,
  type AgentRun,
  type ApprovalMode,
  type CallOptions,
  type PromptInput,
  type RestoreOptions,
  type StructuredOptions,
  type StructuredRun,
} from './agent.js'
export { AgentSession, SessionClosedError } from './agent-session.js'
export { DEFAULT_LEASE_TTL_MS, type AgentOpenOptions, type SessionLeaseOptions } from './session-open.js'
export { SessionWriteError } from './session-writer.js'
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
} from './session-store.js'
export {
  AgentOwnEvent,
  AgentRunEvent,
  EventStamp,
  ListenerErrorEvent,
  ModelChangeEvent,
  ToolMetrics,
  TurnMetrics,
  TurnMetricsEvent,
} from './agent-events.js'
export type { AgentState, PendingApproval } from './agent-state.js'
export { AGENT_LOG_FORMAT, AgentLogEntry, decodeAgentLog, StreamMarks } from './agent-log.js'
export { Checkpoint, CHECKPOINT_FORMAT, decodeCheckpoint, InMemoryCheckpointStore, type CheckpointInfo, type CheckpointStore } from './checkpoint.js'
export { turnMetrics, type MetricsCollector } from './metrics.js'
export { subAgentTool, type SubAgentChild, type SubAgentFollower, type SubAgentToolOptions } from './sub-agent.js'
