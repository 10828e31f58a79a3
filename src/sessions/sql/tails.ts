/**
 * Live tails of a SQL store: every `events$` subscription of one store is
 * served by ONE listening connection (multiplexed by session id, the NOTIFY
 * payload), held while at least one tail is open and released with the last.
 *
 * A notification is only a wake-up: the tail then reads the records after
 * the last position it emitted (never trusting the payload for data), so
 * records are emitted in position order, without gaps or duplicates, however
 * notifications are coalesced, duplicated or late. A tail starts listening
 * BEFORE its first read, so a record committed between the two is read.
 *
 * If the listening connection is lost, one new one is opened and every tail
 * reads again (what was committed meanwhile is read then); if that fails,
 * the tails error with the cause.
 *
 * Each read also says which session it read (its creation time and last
 * position, see `pages.ts`): a tail remembers the session it found, and ends
 * with `SessionDeletedError` when a read finds it gone or created again (a
 * deletion notifies like an append). A tail that asks for positions the
 * session never had (`from` past its last one, or any of a session that
 * does not exist) ends so at its first read.
 */
import { Observable, type Subscriber } from 'rxjs'
import { SessionDeletedError, type SessionRecord } from '../../agent/session-store.js'
import { deletedBefore } from '../errors.js'
import type { SqlDriver } from './driver.js'
import type { TailPage } from './pages.js'

/** Records read per query by a tail catching up. */
const PAGE = 500

interface Tail {
  readonly sessionId: string
  readonly subscriber: Subscriber<SessionRecord>
  last: number
  /** The creation time of the session the tail found (absent until it does). */
  createdAt: number | undefined
  running: boolean
  again: boolean
}

/** Reads the records of a session after position `from`, at most `limit`, and the session as it was then. */
export type ReadPage = (sessionId: string, from: number, limit: number) => Promise<TailPage>

/** See the module comment. */
export class SqlTails {
  private readonly bySession = new Map<string, Set<Tail>>()
  private count = 0
  private listener: Promise<() => Promise<void>> | undefined

  constructor(
    private readonly driver: SqlDriver,
    private readonly channel: string,
    private readonly readPage: ReadPage,
  ) {}

  /** How many tails are open. */
  get size(): number {
    return this.count
  }

  /** Whether a listening connection is held (or being opened). */
  get listening(): boolean {
    return this.listener !== undefined
  }

  /** The tail of `sessionId` after position `from` (arguments checked by the caller). */
  open(sessionId: string, from: number): Observable<SessionRecord> {
    return new Observable<SessionRecord>((subscriber) => {
      const tail: Tail = { sessionId, subscriber, last: from, createdAt: undefined, running: false, again: false }
      let set = this.bySession.get(sessionId)
      if (set === undefined) this.bySession.set(sessionId, (set = new Set()))
      set.add(tail)
      this.count++
      this.listen().then(
        () => this.pump(tail),
        (error: unknown) => subscriber.error(error),
      )
      return () => this.remove(tail)
    })
  }

  /** Records of `sessionId` may have been committed: its tails read. */
  wake(sessionId: string): void {
    const set = this.bySession.get(sessionId)
    if (set !== undefined) for (const tail of set) void this.pump(tail)
  }

  /** Completes every tail and releases the listening connection. */
  async close(): Promise<void> {
    const tails = [...this.bySession.values()].flatMap((set) => [...set])
    for (const tail of tails) tail.subscriber.complete()
    await this.release()
  }

  private remove(tail: Tail): void {
    const set = this.bySession.get(tail.sessionId)
    if (set?.delete(tail) !== true) return
    if (set.size === 0) this.bySession.delete(tail.sessionId)
    if (--this.count === 0) void this.release()
  }

  private listen(): Promise<unknown> {
    if (this.listener === undefined) {
      const listener = this.driver.listen(
        this.channel,
        (payload) => this.wake(payload),
        (error) => this.lost(listener, error),
      )
      this.listener = listener
      listener.catch(() => {
        if (this.listener === listener) this.listener = undefined
      })
    }
    return this.listener
  }

  private async release(): Promise<void> {
    const listener = this.listener
    this.listener = undefined
    if (listener === undefined) return
    try {
      await (await listener)()
    } catch {
      // Not listening any more either way.
    }
  }

  /** The listening connection died: listen again, then every tail reads what it may have missed. */
  private lost(listener: Promise<unknown>, error: unknown): void {
    if (this.listener !== listener) return
    this.listener = undefined
    if (this.count === 0) return
    const tails = [...this.bySession.values()].flatMap((set) => [...set])
    this.listen().then(
      () => tails.forEach((tail) => void this.pump(tail)),
      (again: unknown) => {
        const failure = new Error(`${this.driver.kind} session store: the connection listening for new records was lost and could not be opened again`, {
          cause: again ?? error,
        })
        for (const tail of tails) tail.subscriber.error(failure)
      },
    )
  }

  /** Why the tail ends, when the session it read is not the one it found (or has not the positions it asked for); remembers the one it finds. */
  private deleted(tail: Tail, session: TailPage['session']): SessionDeletedError | undefined {
    if (tail.createdAt !== undefined) return session?.createdAt === tail.createdAt ? undefined : new SessionDeletedError(tail.sessionId)
    const lastPosition = session?.lastPosition ?? 0
    if (tail.last > lastPosition) return deletedBefore(tail.sessionId, tail.last, lastPosition)
    tail.createdAt = session?.createdAt
    return undefined
  }

  /** Emits what follows the tail's last position, until nothing does; one pump per tail at a time. */
  private async pump(tail: Tail): Promise<void> {
    if (tail.running) {
      tail.again = true
      return
    }
    tail.running = true
    try {
      do {
        tail.again = false
        for (;;) {
          const { records: page, session } = await this.readPage(tail.sessionId, tail.last, PAGE)
          if (tail.subscriber.closed) return
          const deleted = this.deleted(tail, session)
          if (deleted !== undefined) return tail.subscriber.error(deleted)
          for (const record of page) {
            if (tail.subscriber.closed) return
            if (record.position <= tail.last) continue
            tail.last = record.position
            tail.subscriber.next(record)
          }
          if (page.length < PAGE) break
        }
      } while (tail.again && !tail.subscriber.closed)
    } catch (error) {
      tail.subscriber.error(error)
    } finally {
      tail.running = false
    }
  }
}
