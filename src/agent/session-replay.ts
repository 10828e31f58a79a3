/**
 * Opening a durable session to run a run again from its start: what a
 * durable-execution engine (`rxagent/dbos`) does when it recovers a run whose
 * worker died. The agent is rebuilt from the log as it stood when the run
 * started (`startSeq` entries); the run is then executed again, its model and
 * tool calls answered from the engine's recorded steps, so it logs the same
 * entries again. The entries the store already holds (committed by the
 * process that died) are checked against them and not appended twice; the
 * first entry past them is appended as usual.
 *
 * ```
 * log:     init … runStart messageEnd(a) toolStart | (stream a-partial)
 * replay:  init … runStart messageEnd(a) toolStart  toolEnd  messageEnd(r) …
 *                 └──── checked, not appended ────┘ └── appended ──────────…
 * ```
 *
 * Stream records: the chunks of a model call answered from a recorded step
 * are not written again (`gate.muted`): its `messageEnd` carries the whole
 * message. A model call that runs again live (the one in flight at the
 * crash) streams after a `retry` chunk when the dead process had streamed
 * part of it, so that a reader drops that part, as for a provider retry.
 */
import type { ProviderChunk } from '../types/chunk.js'
import type { AgentLogEntry } from './agent-log.js'

/** The position a replayed run starts from, and the switch that mutes the chunks of recorded steps. */
export class ReplayGate {
  /** Chunks emitted while this is set are not written (a recorded step replays them). */
  muted = false

  /** @param startSeq the log length when the run first started: the agent is rebuilt from the entries before it. */
  constructor(readonly startSeq: number) {}

  /** Runs `emit` with the chunks it emits not written. */
  mute(emit: () => void): void {
    const was = this.muted
    this.muted = true
    try {
      emit()
    } finally {
      this.muted = was
    }
  }
}

/** A replayed entry that does not match the committed one at its position. */
export class ReplayDivergenceError extends Error {
  override readonly name = 'ReplayDivergenceError'
  constructor(
    readonly sessionId: string,
    readonly seq: number,
    message: string,
  ) {
    super(message)
  }
}

/** What identifies an entry across two executions of one run (times, run ids and message timestamps may differ). */
function identity(entry: AgentLogEntry): string {
  switch (entry.type) {
    case 'messageEnd': {
      const m = entry.message
      if (m.role === 'toolResult') return `messageEnd toolResult ${m.toolCallId}`
      if (m.role === 'assistant') return `messageEnd assistant ${m.content.map((c) => (c.type === 'toolCall' ? `${c.type}:${c.id}` : c.type)).join(',')}`
      return `messageEnd ${m.role}`
    }
    case 'toolExecutionStart':
      return `${entry.type} ${entry.toolCallId}`
    case 'toolExecutionEnd':
      // Concurrent calls end in completion order, which a replay (results from records) does not reproduce;
      // the results join the transcript in call order, and those are checked.
      return entry.type
    case 'approvalRequested':
    case 'approvalDecided':
      return `${entry.type} ${entry.toolCallId}`
    case 'turnStart':
    case 'turnEnd':
      return `${entry.type} ${entry.turnIndex}`
    case 'policyDecision':
      // The reason is the policy's text (it may hold numbers, times): which policy decided what, where, is checked.
      return `${entry.type} ${entry.slot} ${entry.policy} ${entry.action}${entry.toolCallId === undefined ? '' : ` ${entry.toolCallId}`}`
    case 'enqueue':
    case 'dequeue':
    case 'clearQueue':
      return `${entry.type} ${entry.queue}`
    default:
      return entry.type
  }
}

/**
 * Routes what a replaying agent logs: entries the store already holds are
 * checked and dropped, the others go to `append`; chunks go to `chunk` unless
 * muted or still inside the committed part.
 */
export function replayRouter(
  sessionId: string,
  committed: readonly AgentLogEntry[],
  gate: ReplayGate,
  /** `afterSeq` of the stream records the dead process left after its last entry, if any. */
  danglingAfterSeq: number | undefined,
  out: { readonly entry: (e: AgentLogEntry) => void; readonly chunk: (c: ProviderChunk) => void; readonly diverged: (error: ReplayDivergenceError) => void },
): { readonly entry: (e: AgentLogEntry) => void; readonly chunk: (c: ProviderChunk, logLength: number) => void } {
  let dangling = danglingAfterSeq
  let diverged = false
  return {
    entry(e) {
      if (diverged) return
      const held = committed[e.seq]
      if (held === undefined) return out.entry(e)
      if (identity(held) === identity(e)) return
      diverged = true
      out.diverged(
        new ReplayDivergenceError(
          sessionId,
          e.seq,
          `session '${sessionId}': the run executed again logged '${identity(e)}' at entry ${e.seq}, where the log holds '${identity(held)}': the run must decide only from recorded steps and messages (no clock, no randomness, no outside state)`,
        ),
      )
    },
    chunk(c, logLength) {
      if (diverged || gate.muted || logLength < committed.length) return
      if (dangling !== undefined) {
        if (dangling === logLength) {
          out.chunk({ type: 'retry', attempt: 0, delayMs: 0, error: { kind: 'network', retryable: true, provider: 'rxagent', message: 'the process running this model call stopped; the call is made again' } })
        }
        dangling = undefined
      }
      out.chunk(c)
    },
  }
}
