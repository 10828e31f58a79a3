/**
 * `rxagent/dbos`: agent runs as durable DBOS workflows over PostgreSQL, on
 * many worker processes (see `types.ts` for the whole picture).
 * `@dbos-inc/dbos-sdk` and `pg` are optional peer dependencies, loaded only
 * by this entry.
 */
export { startWorker } from './worker.js'
export { dbosAgentClient, OutcomeTimeout } from './client.js'
export { DEFAULT_APP, RUN_QUEUE, RUN_WORKFLOW } from './types.js'
export { ReplayDivergenceError } from '../agent/session-replay.js'
export type {
  DbosAgentClient,
  DbosAgentClientOptions,
  DbosAgentDefinition,
  DbosRunOutcome,
  DbosWorker,
  PgConnection,
  StartWorkerOptions,
  SubmittedInput,
} from './types.js'
