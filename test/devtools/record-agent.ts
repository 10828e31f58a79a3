/**
 * Writes a live Agent's log and stream chunks into a SessionStore, the way a
 * durable agent does (the devtools tests use it until `Agent.open` is merged):
 * every log entry, and each chunk of a streaming message as a stream record,
 * appended in order, one append at a time, each record with its time.
 */
import { Subscription } from 'rxjs'
import type { Agent } from '../../src/agent/agent.js'
import type { SessionStore, TimedRecord } from '../../src/agent/session-store.js'

export interface Recording {
  /** Resolves when every record so far is appended (rejects with the first append error). */
  flushed(): Promise<void>
  stop(): void
}

export function recordAgent(agent: Agent, store: SessionStore, sessionId: string, now: () => number = Date.now): Recording {
  let appendedLength = 0
  let queuedLength = 0
  let queue: TimedRecord[] = []
  let chain = Promise.resolve()
  const pump = (): void => {
    chain = chain.then(async () => {
      if (queue.length === 0) return
      const records = queue
      queue = []
      const entries = records.filter((r) => r.body.type !== 'stream').length
      await store.append(sessionId, { expectedSeq: appendedLength, records })
      appendedLength += entries
    })
  }
  const push = (record: TimedRecord): void => {
    queue.push(record)
    pump()
  }
  for (const entry of agent.log) push({ at: now(), body: entry })
  queuedLength = agent.log.length
  const subs = new Subscription()
  subs.add(
    agent.log$.subscribe((entry) => {
      queuedLength++
      push({ at: now(), body: entry })
    }),
  )
  subs.add(
    agent.events$.subscribe((event) => {
      if (event.type === 'messageUpdate') push({ at: now(), body: { type: 'stream', afterSeq: queuedLength, chunks: [event.chunk] } })
    }),
  )
  return { flushed: () => chain, stop: () => subs.unsubscribe() }
}
