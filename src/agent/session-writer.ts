/**
 * The group-commit writer of a durable session: every log entry, and the
 * chunks of the message streaming now, go to the `SessionStore` in batches.
 * One append is in flight at a time; what arrives meanwhile forms the next
 * batch. Adjacent text, thinking and argument deltas are merged into one
 * chunk of one stream record, so a message of 10,000 deltas is a few
 * records, not 10,000 rows.
 *
 * The per-delta path is a type test and a push of the text onto the
 * delta's pieces: no record, no Promise, no clock read. A batch with a log entry is sent from a
 * microtask (what a synchronous burst logs goes in one append); a batch of
 * stream chunks alone lingers on the scheduler first — at least
 * {@link STREAM_LINGER_MS}, and {@link LINGER_PER_APPEND} times as long as
 * the last append took (at most {@link MAX_STREAM_LINGER_MS}), so that
 * streaming spends about a tenth of its time appending whatever the
 * database costs, and a model streaming slowly costs one append per
 * linger, not one per delta. (Chunks are for resuming readers and crash
 * recovery; what is acknowledged is the log.)
 */
import { BehaviorSubject, type Observable, type SchedulerLike, type Subscription } from 'rxjs'
import { errorText } from '../types/codec.js'
import type { ProviderChunk } from '../types/chunk.js'
import type { AgentLogEntry } from './agent-log.js'
import type { SessionStore, TimedRecord } from './session-store.js'

/** Where a writer writes. */
export interface SessionWriterTarget {
  readonly store: SessionStore
  readonly sessionId: string
  /** The lease holder: every append is fenced by it. */
  readonly holder: string
  /** Record times and the stream linger (the agent's scheduler). */
  readonly scheduler: SchedulerLike
  /** Told once when an append fails: the session can no longer be written. */
  readonly onFailure: (error: SessionWriteError) => void
}

/** An append of a durable session failed: what was logged after `durableSeq` is not committed. */
export class SessionWriteError extends Error {
  override readonly name = 'SessionWriteError'
  constructor(
    readonly sessionId: string,
    readonly storeKind: string,
    /** The log length committed before the failed append. */
    readonly durableSeq: number,
    override readonly cause: unknown,
  ) {
    super(`session '${sessionId}' (${storeKind} store): could not append the log after entry ${durableSeq - 1}: ${errorText(cause)}`)
  }
}

/** How long a batch of stream chunks alone waits at least before it is sent (a log entry sends it at once). */
export const STREAM_LINGER_MS = 50
/** A batch of stream chunks alone waits this many times as long as the last append took. */
export const LINGER_PER_APPEND = 8
/** ... and at most this long. */
export const MAX_STREAM_LINGER_MS = 1000

type DeltaType = 'textDelta' | 'thinkingDelta' | 'toolUseArgsDelta'

/** Log entries whose append compacts the stream records before them (see `session-store.ts`). */
const COMPACTING: ReadonlySet<string> = new Set(['messageEnd', 'agentEnd', 'runFailed', 'reset'])

const isStream = (record: TimedRecord): boolean => record.body.type === 'stream'

interface Waiter {
  readonly batch: number
  readonly resolve: () => void
  readonly reject: (error: unknown) => void
}

/** See the module comment. */
export class SessionWriter {
  private batch: TimedRecord[] = []
  /** The chunks of the stream record being filled (in `batch`), if any. */
  private chunks: ProviderChunk[] | undefined
  /** The delta being merged: its type, its pieces of text and (for arguments) tool call id. */
  private deltaType: DeltaType | undefined
  /**
   * Joined once, when the delta ends, rather than `+=` per delta: each `+=` made a cons string holding the
   * previous one, a chain that lived until the batch was sent and survived the young generation's GCs on the
   * way. DURABLE TEXT 100k with the memory store (bench/worker.mjs, 5 runs each, 7 alternating rounds, medians
   * of the rounds' medians): GC 22.8 -> 9.3 ms a run (the plain Agent's 6.8), CPU 310 -> 282 ms (plain 279).
   */
  private deltaParts: string[] = []
  private deltaId = ''
  /** The log's length as far as entries reached this writer. */
  private logged: number
  private committed: number
  /** The number of the batch being filled; the one in flight, if any, is the previous. */
  private batchNo = 1
  private committedBatch = 0
  private inFlight = false
  /** A send is queued as a microtask. */
  private queued = false
  /** The linger of a batch of stream chunks alone. */
  private lingering: Subscription | undefined
  /** Whether `batch` holds a log entry (then it is sent at once). */
  private urgent = false
  /** How long a batch of stream chunks alone waits now (see the module comment). */
  private linger = STREAM_LINGER_MS
  private accepting = true
  private failure: SessionWriteError | undefined
  private waiters: Waiter[] = []
  private readonly durable$$: BehaviorSubject<number>
  /** The committed log length as it grows (replays the current value). */
  readonly durable$: Observable<number>

  /** @param committed the log length the store holds already. */
  constructor(
    private readonly target: SessionWriterTarget,
    committed: number,
  ) {
    this.logged = committed
    this.committed = committed
    this.durable$$ = new BehaviorSubject(committed)
    this.durable$ = this.durable$$.asObservable()
  }

  /** Entries `[0, durableSeq)` are committed. */
  get durableSeq(): number {
    return this.committed
  }

  /** Why the writer stopped, if an append failed. */
  get failed(): SessionWriteError | undefined {
    return this.failure
  }

  /** Queues a log entry (the next in `seq` order). */
  entry(entry: AgentLogEntry): void {
    if (!this.accepting) return
    if (COMPACTING.has(entry.type)) this.dropStreams()
    else this.endStream()
    this.batch.push({ at: this.target.scheduler.now(), body: entry })
    this.logged = entry.seq + 1
    this.urgent = true
    this.kick()
  }

  /** Queues a chunk of the message streaming now (merged with the previous one when both are deltas of one block). */
  chunk(chunk: ProviderChunk): void {
    if (!this.accepting) return
    const type = chunk.type
    if (type === 'textDelta' || type === 'thinkingDelta') {
      if (this.deltaType === type) {
        this.deltaParts.push(chunk.text)
        return
      }
      this.openDelta(type, chunk.text, '')
      return
    }
    if (type === 'toolUseArgsDelta') {
      if (this.deltaType === type && this.deltaId === chunk.id) {
        this.deltaParts.push(chunk.fragment)
        return
      }
      this.openDelta(type, chunk.fragment, chunk.id)
      return
    }
    this.endDelta()
    this.streamChunks().push(chunk)
  }

  /** Resolves when everything queued so far is committed; rejects with the failure of an append. */
  flush(): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure)
    const batch = this.batch.length > 0 ? this.batchNo : this.inFlight ? this.batchNo - 1 : this.committedBatch
    if (batch <= this.committedBatch) return Promise.resolve()
    // What lingers goes now.
    if (this.batch.length > 0) {
      this.urgent = true
      this.kick()
    }
    return new Promise<void>((resolve, reject) => this.waiters.push({ batch, resolve, reject }))
  }

  /** Stops taking entries and chunks (what was queued is still sent: `flush` waits for it). */
  stop(): void {
    this.endStream()
    this.accepting = false
  }

  /** Completes `durable$` (the session is closed). */
  complete(): void {
    this.durable$$.complete()
  }

  private openDelta(type: DeltaType, text: string, id: string): void {
    this.endDelta()
    this.streamChunks()
    this.deltaType = type
    this.deltaParts = [text]
    this.deltaId = id
  }

  /** The merged delta, as one chunk of the stream record. */
  private endDelta(): void {
    const type = this.deltaType
    if (type === undefined) return
    this.deltaType = undefined
    const chunks = this.streamChunks()
    const text = this.deltaParts.join('')
    this.deltaParts = []
    if (type === 'toolUseArgsDelta') chunks.push({ type, id: this.deltaId, fragment: text })
    else chunks.push({ type, text })
  }

  private endStream(): void {
    this.endDelta()
    this.chunks = undefined
  }

  /**
   * Leaves out the stream records of the batch not sent yet: the entry queued next compacts them in its
   * own append (session-store.ts), so a store would never keep them, and the delta being merged is not
   * joined. DURABLE TEXT 100k: the final batch held a 400 KB stream record that was joined from 100,000
   * pieces (~1-5 ms), decoded by the store and dropped.
   */
  private dropStreams(): void {
    if (this.deltaType !== undefined) {
      this.deltaType = undefined
      this.deltaParts = []
    }
    this.chunks = undefined
    if (this.batch.some(isStream)) this.batch = this.batch.filter((record) => !isStream(record))
  }

  /** The chunks of the open stream record; opens one (after the entries logged so far) when there is none. */
  private streamChunks(): ProviderChunk[] {
    let chunks = this.chunks
    if (chunks === undefined) {
      chunks = []
      this.chunks = chunks
      this.batch.push({ at: this.target.scheduler.now(), body: { type: 'stream', afterSeq: this.logged, chunks } })
      this.kick()
    }
    return chunks
  }

  /** Sends the batch soon: at once (a microtask) when it is urgent, after the linger when it holds stream chunks alone. */
  private kick(): void {
    if (this.inFlight || this.queued) return
    if (this.urgent) {
      this.lingering?.unsubscribe()
      this.lingering = undefined
      this.queued = true
      queueMicrotask(this.send)
    } else {
      this.lingering ??= this.target.scheduler.schedule(this.send, this.linger)
    }
  }

  private readonly send = (): void => {
    this.queued = false
    this.lingering?.unsubscribe()
    this.lingering = undefined
    if (this.inFlight || this.batch.length === 0 || this.failure !== undefined) return
    this.urgent = false
    this.endStream()
    const records = this.batch
    this.batch = []
    const batch = this.batchNo++
    const expectedSeq = this.committed
    const length = this.logged
    this.inFlight = true
    const { store, sessionId, holder, scheduler } = this.target
    const started = scheduler.now()
    let appending: Promise<unknown>
    try {
      appending = store.append(sessionId, { expectedSeq, records, leaseHolder: holder })
    } catch (error) {
      appending = Promise.reject(error)
    }
    appending.then(
      () => {
        this.inFlight = false
        this.linger = Math.min(MAX_STREAM_LINGER_MS, Math.max(STREAM_LINGER_MS, LINGER_PER_APPEND * (scheduler.now() - started)))
        this.committed = length
        this.committedBatch = batch
        this.durable$$.next(length)
        this.waiters = this.waiters.filter((w) => (w.batch <= batch ? (w.resolve(), false) : true))
        if (this.batch.length > 0) this.kick()
      },
      (error: unknown) => {
        this.inFlight = false
        this.fail(new SessionWriteError(sessionId, store.kind, expectedSeq, error))
      },
    )
  }

  private fail(failure: SessionWriteError): void {
    this.failure = failure
    this.accepting = false
    this.batch = []
    this.chunks = undefined
    this.deltaType = undefined
    this.deltaParts = []
    this.lingering?.unsubscribe()
    this.lingering = undefined
    const waiters = this.waiters
    this.waiters = []
    for (const w of waiters) w.reject(failure)
    this.target.onFailure(failure)
  }
}
