/**
 * The queues of an `Agent`: steering and follow-up messages, queued by
 * `steer` and `followUp` (or fed from an Observable), read and cleared. What
 * the runs take from them is taken in `agent-run.ts`; `Agent` (agent.ts)
 * extends this class with the other commands.
 */
import type { Observable, Subscription } from 'rxjs'
import { errorText } from '../types/codec.js'
import { decodeMessage, type AgentMessageInput } from '../types/input.js'
import type { AgentMessage } from '../types/message.js'
import { AgentCore } from './agent-core.js'

/** The queue commands of an `Agent`: see the module comment. */
export abstract class AgentQueues extends AgentCore {
  // --- Queues -------------------------------------------------------------

  /** Queues a message that redirects the agent while it works (delivered after the current tool batch). @throws InvalidInputError for a bad message. */
  steer(message: string | AgentMessageInput): void {
    this.writable()
    this.store.append({ type: 'enqueue', queue: 'steering', message: decodeMessage(message, 'Agent.steer', this.scheduler.now()) })
  }

  /** Queues a message that continues the run when it would otherwise end. @throws InvalidInputError for a bad message. */
  followUp(message: string | AgentMessageInput): void {
    this.writable()
    this.store.append({ type: 'enqueue', queue: 'followUp', message: decodeMessage(message, 'Agent.followUp', this.scheduler.now()) })
  }

  /** What is queued, oldest first. */
  get pendingSteering(): readonly AgentMessage[] {
    return this.state.steeringQueue
  }

  get pendingFollowUps(): readonly AgentMessage[] {
    return this.state.followUpQueue
  }

  clearSteering(): void {
    this.writable()
    if (this.state.steeringQueue.length > 0) this.store.append({ type: 'clearQueue', queue: 'steering' })
  }

  clearFollowUps(): void {
    this.writable()
    if (this.state.followUpQueue.length > 0) this.store.append({ type: 'clearQueue', queue: 'followUp' })
  }

  /**
   * Feeds a queue from any Observable (a socket, a UI); unsubscribe to stop. A
   * message that does not decode is reported as a `listenerError` event
   * (listener `feed(steering)` or `feed(followUp)`) and the feed goes on; a
   * source that errors ends the feed with a `listenerError` event (listener
   * `steering feed` or `followUp feed`).
   */
  feed(queue: 'steering' | 'followUp', source: Observable<string | AgentMessageInput>): Subscription {
    return source.subscribe({
      next: (message) => {
        try {
          if (queue === 'steering') this.steer(message)
          else this.followUp(message)
        } catch (error) {
          this.runs.emitOwn({ type: 'listenerError', listener: `feed(${queue})`, error: errorText(error), eventType: 'feed' })
        }
      },
      error: (error: unknown) => this.runs.emitOwn({ type: 'listenerError', listener: `${queue} feed`, error: errorText(error), eventType: 'feed' }),
    })
  }
}
