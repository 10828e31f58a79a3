/** Steering and follow-up messages, from wherever the app produces them. */
import { isObservable, type Observable, type Subscription } from 'rxjs'
import { CallbackError } from '../rx/user-callback.js'
import type { AgentMessage } from '../types/message.js'
import { decodeMessages } from '../types/input.js'

/**
 * Where messages come from: an Observable (hot or cold; the loop subscribes
 * for the length of the run and buffers what arrives) or a function the loop
 * calls at each poll point.
 */
export type MessageSource = Observable<AgentMessage> | (() => readonly AgentMessage[])

/** Take everything waiting at a poll point, or one message per poll point. */
export type QueueMode = 'all' | 'oneAtATime'

/**
 * A run's view of a {@link MessageSource}: `poll` drains it according to the
 * mode. Messages are decoded as they are taken (a user message may have string
 * `content`); a bad one throws a `CallbackError` (`steering source sent an
 * invalid message: …`) quoting the path, which ends the run with an error.
 */
export class MessageQueue {
  private readonly buffer: unknown[] = []
  /** The Observable source's error, reported at the next poll point. */
  private failure: CallbackError | undefined

  constructor(
    private readonly source: MessageSource | undefined,
    private readonly mode: QueueMode = 'all',
    private readonly name = 'messages',
    private readonly now: () => number = Date.now,
    /** Names the source in errors: `steering source`, `follow-up source`. */
    private readonly label = `${name} source`,
  ) {}

  /** Subscribes to an Observable source; the returned subscription ends the buffering. */
  connect(): Subscription | undefined {
    if (this.source === undefined || !isObservable(this.source)) return undefined
    return this.source.subscribe({
      next: (message) => this.buffer.push(message),
      error: (error: unknown) => (this.failure = CallbackError.of(this.label, 'failed', error)),
    })
  }

  /**
   * The messages to deliver now (possibly none). Throws a {@link CallbackError}
   * naming the source when the Observable errored or a message does not decode.
   */
  readonly poll = (): readonly AgentMessage[] => {
    if (this.failure !== undefined) throw this.failure
    // A function source that throws is named by the stage that polls (`callUser`).
    if (this.source !== undefined && !isObservable(this.source)) this.buffer.push(...this.source())
    if (this.buffer.length === 0) return []
    const taken = this.mode === 'all' ? this.buffer.splice(0) : this.buffer.splice(0, 1)
    try {
      return decodeMessages(taken, 'agentLoop', `${this.name} message`, this.name, this.now())
    } catch (error) {
      throw new CallbackError(this.label, 'sent an invalid message', error)
    }
  }
}
