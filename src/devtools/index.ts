/**
 * `rxagent/devtools`: a local web page that shows the sessions of a
 * {@link SessionStore} — each run drawn as a timeline (the picture of the
 * marble tests, with real times), a message inspector, per-run charts — and
 * answers pending approvals of live agents. `serveDevtools` starts it; the
 * timeline model is exported for tests and terminals.
 */
export { devtoolsSessionUrl, serveDevtools, type DevtoolsServer } from './server.js'
export { DEFAULT_DEVTOOLS_PORT, DEFAULT_DEVTOOLS_STORE } from './cli.js'
export type { DevtoolsAgent, DevtoolsAgents, DevtoolsOptions, OpenedAgent } from './options.js'
export { sessionTimeline, messageGist } from './timeline.js'
export { timelineMarbles } from './timeline-marbles.js'
export {
  MARK_LETTERS,
  type BarStatus,
  type LaneKind,
  type MarkKind,
  type MessageItem,
  type PendingApprovalView,
  type RunTimeline,
  type SessionTimeline,
  type TimelineBar,
  type TimelineLane,
  type TimelineMark,
  type TurnSummary,
} from './timeline-model.js'
