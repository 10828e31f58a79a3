/**
 * A durable session as its Agent holds it (`agent.session`): the writer that
 * commits the log (`session-writer.ts`), the lease that makes this process
 * the session's one writer, and how the session ends (`close`).
 *
 * The lease: taken by `Agent.open` for `ttlMs`, renewed every `ttlMs / 3` on
 * the agent's scheduler, given up by `close()`. Every append is fenced by it
 * (a writer whose lease was taken over cannot append). A renewal the store
 * refuses (another holder has it) fails the session like a failed append; a
 * renewal that errs (the database is away) is tried again at the next tick —
 * if the lease expires meanwhile, the fence refuses the next append.
 */
import { Observable, type SchedulerLike, type Subscription } from 'rxjs'
import { SessionLeaseError, type SessionStore } from './session-store.js'
import type { SessionWriteError, SessionWriter } from './session-writer.js'

/** What a session needs of its Agent. */
export interface SessionAgent {
  readonly scheduler: SchedulerLike
  /** The live run: whether it waits for an approval, and how to end or detach it. */
  readonly live: () => { readonly waitsForApproval: boolean; readonly abort: () => Promise<void>; readonly detach: (why: string) => void } | undefined
  /** Ends the live run (if any) with stopReason `error` and `error`. */
  readonly failRun: (error: string) => void
}

/** Why a durable session cannot take commands any more. */
export class SessionClosedError extends Error {
  override readonly name = 'SessionClosedError'
  constructor(
    readonly sessionId: string,
    message: string,
    override readonly cause?: unknown,
  ) {
    super(message)
  }
}

/**
 * A durable session (see the module comment): `agent.session` of an agent
 * made by `Agent.open`.
 */
export class AgentSession {
  /** The committed log length as it grows; replays the current value, completes when the session is closed. */
  readonly durable$: Observable<number>
  private closing: Promise<void> | undefined
  private renewal: Subscription | undefined
  private failure: Error | undefined
  /** The lease was given up (by `close`): no more renewals. */
  private released = false

  /** @internal built by `Agent.open`. */
  constructor(
    readonly sessionId: string,
    readonly store: SessionStore,
    /** Who holds the session's lease: this process. */
    readonly holder: string,
    private readonly writer: SessionWriter,
    private readonly agent: SessionAgent,
    private readonly ttlMs: number,
  ) {
    this.durable$ = writer.durable$
  }

  /** Log entries `[0, durableSeq)` are committed (acknowledged by the store). */
  get durableSeq(): number {
    return this.writer.durableSeq
  }

  /** Resolves when everything logged so far is committed; rejects with the store's failure. */
  flush(): Promise<void> {
    return this.failure === undefined ? this.writer.flush() : Promise.reject(this.failure)
  }

  /**
   * Ends the session in this process: a run waiting for an approval is
   * detached (it stays pending in the log, for whoever opens the session
   * next: its awaiters are told it was detached); any other live run is
   * aborted first (gracefully: its end is logged). Then everything logged is
   * flushed, the lease is released and no longer renewed. Idempotent. The
   * agent takes no more commands. Rejects, after releasing the lease, when
   * something logged could not be committed.
   */
  close(): Promise<void> {
    this.closing ??= this.shutdown()
    return this.closing
  }

  /** @throws SessionClosedError when the session was closed or can no longer be written. */
  assertWritable(): void {
    if (this.failure !== undefined) throw new SessionClosedError(this.sessionId, `session '${this.sessionId}' is no longer writable: ${this.failure.message}`, this.failure)
    if (this.closing !== undefined) throw new SessionClosedError(this.sessionId, `session '${this.sessionId}' is closed: open it again (Agent.open) to go on`)
  }

  /** @internal starts renewing the lease. */
  startRenewal(): void {
    const period = Math.max(1, Math.floor(this.ttlMs / 3))
    const session = this
    this.renewal = this.agent.scheduler.schedule(function () {
      session.renew()
      this.schedule(undefined, period)
    }, period)
  }

  /** @internal the writer failed: the live run ends with the error, commands are refused. */
  failed(error: SessionWriteError | SessionLeaseError): void {
    if (this.failure !== undefined) return
    this.failure = error
    this.writer.stop()
    // Nothing is renewed for a session that cannot write; a timer left running would keep the process alive until close().
    this.renewal?.unsubscribe()
    this.agent.failRun(error.message)
  }

  private renew(): void {
    // Renewed while `close` still flushes: an abort that takes long must not lose the lease.
    if (this.failure !== undefined || this.released) return
    this.store.acquireLease(this.sessionId, this.holder, this.ttlMs).then(
      (outcome) => {
        if (!outcome.acquired && !this.released) {
          this.failed(new SessionLeaseError(this.sessionId, outcome.heldBy, `session '${this.sessionId}' (${this.store.kind} store): the lease was lost to '${outcome.heldBy.holder}'`))
        }
      },
      // Tried again at the next tick; the append fence guards the log meanwhile.
      () => undefined,
    )
  }

  private async shutdown(): Promise<void> {
    const live = this.agent.live()
    if (live !== undefined) {
      if (live.waitsForApproval) {
        this.writer.stop()
        live.detach(`detached: the run waits for an approval in session '${this.sessionId}', which was closed; open the session again to resolve it`)
      } else {
        await live.abort()
      }
    }
    this.writer.stop()
    try {
      await this.flush()
    } finally {
      this.released = true
      this.renewal?.unsubscribe()
      this.writer.complete()
      try {
        await this.store.releaseLease(this.sessionId, this.holder)
      } catch {
        // The lease expires by itself after its ttl: a release that fails costs the next opener that wait, nothing more.
      }
    }
  }
}
