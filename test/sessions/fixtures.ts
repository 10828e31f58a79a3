/** Records for the session-store tests: valid log entries and stream records, built small. */
import { assistantMessage, modelSpec, userMessage } from '../../src/index.js'
import type { SessionAppend, SessionRecord, SessionStore, TimedRecord } from '../../src/agent/session-store.js'

/** The `init` entry of an agent `agentId`. */
export const init = (agentId = 'agent-1', at = 1_000): TimedRecord => ({
  at,
  body: { seq: 0, type: 'init', version: 1, agentId, systemPrompt: 'be brief', model: modelSpec('test', 'm1'), availableModels: [], tools: [], messages: [] },
})

/** An `enqueue` entry at `seq` (a log entry that does not compact), its text naming it. */
export const note = (seq: number, text = `note ${seq}`, at = 1_000 + seq): TimedRecord => ({
  at,
  body: { seq, type: 'enqueue', queue: 'followUp', message: userMessage(text, 0) },
})

/** A `messageEnd` entry at `seq` (it compacts the stream records before it). */
export const messageEnd = (seq: number, text = 'done', at = 1_000 + seq): TimedRecord => ({
  at,
  body: { seq, type: 'messageEnd', message: assistantMessage(text) },
})

/** A stream record after `afterSeq` entries, holding `count` text deltas. */
export const stream = (afterSeq: number, count = 1, text = 'x', at = 2_000): TimedRecord => ({
  at,
  body: { type: 'stream', afterSeq, chunks: Array.from({ length: count }, () => ({ type: 'textDelta' as const, text })) },
})

/** `count` notes from `seq`. */
export const notes = (seq: number, count: number, tag = ''): TimedRecord[] => Array.from({ length: count }, (_, i) => note(seq + i, `${tag}note ${seq + i}`))

/** Creates session `id` with its init entry and `more` notes after it. */
export async function createSession(store: SessionStore, id: string, more = 0): Promise<void> {
  await store.append(id, { expectedSeq: 0, records: [init(), ...notes(1, more)] })
}

/** `append` as a plain value (so a test can pass a bad one). */
export const batch = (expectedSeq: number, records: readonly TimedRecord[], leaseHolder?: string): SessionAppend =>
  leaseHolder === undefined ? { expectedSeq, records } : { expectedSeq, records, leaseHolder }

/** The `seq`s of the log entries among `records`. */
export const seqs = (records: readonly SessionRecord[]): number[] => records.flatMap((r) => (r.body.type === 'stream' ? [] : [r.body.seq]))

/** Waits (real time, polling) until `condition()` holds, or fails after `ms`. */
export async function until(condition: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}
