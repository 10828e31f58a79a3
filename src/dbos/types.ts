/**
 * The public shape of `rxagent/dbos`: agent runs as durable DBOS workflows
 * over PostgreSQL, on many worker processes.
 *
 * - A **run** is a workflow; each model call and each tool call is a step.
 *   On recovery, a completed step returns its recorded result (the model is
 *   not called again, the tool does not run again); the step in flight when
 *   the worker died runs again.
 * - The **session log** (`rxagent/postgres`, same database) stays the one
 *   source of truth for state and readers: deltas reach readers through it
 *   while a model step runs.
 * - **Inputs** (prompts, steering, follow-ups, approval decisions) come from
 *   any process through a {@link DbosAgentClient}: prompts queue runs on the
 *   DBOS queue; steering, follow-ups and approval decisions are DBOS
 *   messages to the session's open run (received as workflow operations, so
 *   a recovered run receives the same ones again, in the same order).
 * - **Workers** ({@link startWorker}) share one DBOS queue; at most one live
 *   run per session across all of them.
 *
 * `@dbos-inc/dbos-sdk` is an optional peer dependency, loaded only by this
 * subpath.
 */
import type { AgentOptions } from '../agent/agent-options.js'
import type { SessionStore } from '../agent/session-store.js'
import type { ApprovalDecision } from '../policy/approval.js'
import type { AgentMessageInput } from '../types/input.js'

/** Where PostgreSQL is: a connection string (`postgresql://user@127.0.0.1:5432/db`). */
export type PgConnection = string | { readonly connectionString: string }

/** The connection string of a {@link PgConnection}. */
export const connectionStringOf = (pg: PgConnection): string => (typeof pg === 'string' ? pg : pg.connectionString)

/** The DBOS application name workers and clients use unless told otherwise. */
export const DEFAULT_APP = 'rxagent'
/** The DBOS queue runs are queued on (partitioned by session). */
export const RUN_QUEUE = 'rxagent.runs'
/** The registered name of the run workflow. */
export const RUN_WORKFLOW = 'rxagent.run'

/**
 * An agent a worker can run: its stable name (recorded with each workflow;
 * keep it across deploys) and the options it runs a session with. `options`
 * is called in the worker for each run (and again on recovery): give it the
 * model, `streamFn`, tools, policies… — not a store (the worker's session
 * store is used) and not `messages` (the session log holds them).
 */
export interface DbosAgentDefinition {
  readonly name: string
  readonly options: (sessionId: string) => AgentOptions | Promise<AgentOptions>
}

/** What {@link startWorker} takes. */
export interface StartWorkerOptions {
  /** The PostgreSQL that holds DBOS's system tables and (by default) the session store. */
  readonly pg: PgConnection
  /** The agents this worker can run, by name. Every worker of a cluster registers the same names. */
  readonly agents: readonly DbosAgentDefinition[]
  /**
   * Runs a worker executes at once (default 4). One value for the whole
   * cluster: DBOS keeps a queue's worker concurrency in PostgreSQL, so the
   * worker started last sets it for every worker (a change is logged). Start
   * every worker with the same value; a deploy that changes it takes effect
   * on all workers once the first new one starts.
   */
  readonly concurrency?: number
  /**
   * This worker's stable identity (DBOS executor id). A worker restarted with
   * the same id resumes its own in-flight runs at once. Default: `RXAGENT_WORKER_ID`,
   * else `hostname:pid`.
   */
  readonly workerId?: string
  /** The session store runs are logged in (default: `postgresSessionStore` on `pg`). */
  readonly store?: SessionStore
  /**
   * A worker whose heartbeat is older than this is dead: a live worker takes
   * its in-flight runs over (default 30 000 ms).
   */
  readonly deadAfterMs?: number
  /** The DBOS application name (default `rxagent`); workers of one cluster share it. */
  readonly appName?: string
  /**
   * How long this worker's session leases last unless renewed (default
   * 15 000 ms). A run recovered by another worker waits for the dead worker's
   * lease to expire; keep it below `deadAfterMs`.
   */
  readonly leaseTtlMs?: number
  /** How often the run queue is polled at least (default 250 ms). */
  readonly pollingIntervalMs?: number
}

/** A running worker. */
export interface DbosWorker {
  readonly workerId: string
  /** Runs executing in this worker now. */
  readonly running: () => number
  /**
   * Leaves the cluster. `drain: true` (for a deploy) stops taking new runs and
   * waits for those in flight (at most `timeoutMs`); otherwise in-flight runs
   * are left for recovery.
   */
  stop(options?: { readonly drain?: boolean; readonly timeoutMs?: number }): Promise<void>
}

/** What a {@link DbosAgentClient} submitted: the run that will (or does) handle it. */
export interface SubmittedInput {
  readonly sessionId: string
  /** The workflow id of the run that takes the input. */
  readonly runId: string
}

/** A run as it ended. */
export interface DbosRunOutcome {
  readonly sessionId: string
  readonly runId: string
  readonly stopReason: string
  readonly error?: string
}

/**
 * Talks to a cluster from any process (a web server that runs no agents):
 * starts runs, delivers inputs and approval decisions, reads sessions.
 */
export interface DbosAgentClient {
  /**
   * Queues a run of `agent` on `sessionId` with `input` (a new session when
   * there is none). Runs of one session run one at a time, in the order they
   * were queued; runs of different sessions run on any worker, at once.
   */
  prompt(sessionId: string, agent: string, input: string | AgentMessageInput): Promise<SubmittedInput>
  /**
   * Steering for the session, sent as a DBOS message to its open run (the
   * oldest not done, even one queued or waiting for an approval), which
   * takes it after its current turn; with no run open, a run is queued with
   * it as its prompt. Resolves once the message is durably sent: it is never
   * lost, even when the run is ending at that moment (see the README).
   */
  steer(sessionId: string, message: string | AgentMessageInput): Promise<SubmittedInput>
  /** A follow-up for the session: like {@link DbosAgentClient.steer}, but the open run takes it when it would end (its follow-up queue). */
  followUp(sessionId: string, message: string | AgentMessageInput): Promise<SubmittedInput>
  /** Decides a pending approval of the session; `false` when no run waits for `toolCallId`. */
  resolveApproval(sessionId: string, toolCallId: string, decision: ApprovalDecision): Promise<boolean>
  /**
   * Aborts the session's open runs (the live one and any queued after it)
   * by cancelling their DBOS workflows. A run executing on a worker ends
   * within about one polling interval as an abort does in one process:
   * stopReason `aborted`, every tool call answered, logged; a queued run
   * never starts. A cancelled run is not resumed (DBOS's `resumeWorkflow`
   * would replay it against a log that says it ended). `false` when no run
   * was open.
   */
  abort(sessionId: string): Promise<boolean>
  /** Resolves when the run ends (stopReason `aborted` for a run {@link DbosAgentClient.abort} cancelled). */
  outcome(runId: string, options?: { readonly timeoutMs?: number }): Promise<DbosRunOutcome>
  /** The session store the cluster logs in (read it, tail it, serve it as SSE). */
  readonly store: SessionStore
  close(): Promise<void>
}

/** What {@link dbosAgentClient} takes. */
export interface DbosAgentClientOptions {
  readonly pg: PgConnection
  readonly store?: SessionStore
  readonly appName?: string
}
