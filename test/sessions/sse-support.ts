/**
 * What the SSE tests share: a writer that appends a session's records one by
 * one and remembers what it put at each position, a store wrapper that
 * counts live tails, and a raw reader of an SSE response (fetch +
 * eventsource-parser) for what an `EventSource` hides (status, headers,
 * comments).
 */
import { createParser } from 'eventsource-parser'
import { finalize } from 'rxjs'
import type { AgentLogEntry } from '../../src/agent/agent-log.js'
import type { SessionRecord, SessionRecordBody, SessionStore } from '../../src/agent/session-store.js'
import { assistantMessage, userMessage } from '../../src/types/message.js'
import { modelSpec } from '../../src/types/model.js'
import { chunk } from '../../marbles/index.js'

/** A store given to a test, and how to get rid of it. */
export interface StoreUnderTest {
  readonly store: SessionStore
  cleanup(): Promise<void>
}
export type MakeStore = () => Promise<StoreUnderTest>

type Command = AgentLogEntry extends infer E ? (E extends { readonly seq: number } ? Omit<E, 'seq'> : never) : never

/** Appends one record per append, as a durable Agent does between its batches, and remembers each by position. */
export class Writer {
  length = 0
  lastPosition = 0
  readonly bodies = new Map<number, SessionRecordBody>()
  /** The log entries appended, in order. */
  readonly entries: AgentLogEntry[] = []

  constructor(
    readonly store: SessionStore,
    readonly sessionId: string,
  ) {}

  async init(): Promise<void> {
    await this.entry({
      type: 'init',
      version: 1,
      agentId: 'sse-test',
      systemPrompt: 'You are a test.',
      model: modelSpec('test', 'model'),
      availableModels: [],
      tools: [],
      messages: [],
    })
  }

  async entry(command: Command): Promise<number> {
    const body = { ...command, seq: this.length } as AgentLogEntry
    const done = await this.store.append(this.sessionId, { expectedSeq: this.length, records: [{ at: Date.now(), body }] })
    this.length = done.length
    this.entries.push(body)
    return this.remember(done.lastPosition, body)
  }

  async stream(text: string): Promise<number> {
    const body: SessionRecordBody = { type: 'stream', afterSeq: this.length, chunks: [chunk.text(text)] }
    const done = await this.store.append(this.sessionId, { expectedSeq: this.length, records: [{ at: Date.now(), body }] })
    return this.remember(done.lastPosition, body)
  }

  /** A turn: its start, `deltas` stream records, the message (which compacts them), its end. */
  async turn(index: number, deltas: number, between: () => Promise<void> = async () => {}): Promise<void> {
    await this.entry({ type: 'turnStart', turnIndex: index })
    let text = ''
    for (let i = 0; i < deltas; i++) {
      const delta = `t${index}d${i} `
      text += delta
      await this.stream(delta)
      await between()
    }
    await this.entry({ type: 'messageEnd', message: assistantMessage(text) })
    await this.entry({ type: 'turnEnd', turnIndex: index })
  }

  async prompt(text: string): Promise<void> {
    await this.entry({ type: 'runStart', runId: `run-${this.length}`, prompts: [userMessage(text)] })
    await this.entry({ type: 'messageEnd', message: userMessage(text) })
  }

  private remember(position: number, body: SessionRecordBody): number {
    if (position <= this.lastPosition) throw new Error(`the store gave position ${position} after ${this.lastPosition}`)
    this.lastPosition = position
    this.bodies.set(position, body)
    return position
  }
}

/** Every record type a session holds: an `EventSource` listens to each by name. */
export const recordTypes = [
  'init', 'runStart', 'agentStart', 'turnStart', 'messageEnd', 'toolExecutionStart', 'toolExecutionEnd', 'turnEnd', 'agentEnd', 'runFailed',
  'enqueue', 'dequeue', 'clearQueue', 'model', 'tools', 'systemPrompt', 'planMode', 'approvalRequested', 'approvalDecided', 'reset', 'stream',
] as const

/** `store` with a count of its live tails (`events$` subscriptions not yet released). */
export function countingTails(store: SessionStore): { readonly store: SessionStore; live(): number } {
  let live = 0
  const counted: SessionStore = Object.create(store as object) as SessionStore
  Object.defineProperty(counted, 'events$', {
    value: (sessionId: string, options?: { readonly from?: number }) => {
      live++
      return store.events$(sessionId, options).pipe(finalize(() => live--))
    },
  })
  for (const method of ['append', 'read', 'info', 'list', 'delete', 'acquireLease', 'releaseLease', 'close'] as const) {
    Object.defineProperty(counted, method, { value: (store[method] as (...args: unknown[]) => unknown).bind(store) })
  }
  return { store: counted, live: () => live }
}

/** One SSE event as read off the wire. */
export interface RawEvent {
  readonly id: string | undefined
  readonly event: string | undefined
  readonly data: string
}

/** A raw SSE response: its status, headers, events and comments as they arrive, and the body text when it is not SSE. */
export interface RawStream {
  readonly status: number
  readonly headers: Headers
  readonly events: RawEvent[]
  readonly comments: string[]
  readonly retries: number[]
  /** The body so far. */
  text: string
  ended: boolean
  /** Why the body stopped, when it was not `close()` nor the server's end: the server cut the connection. */
  error: unknown
  /** Resolves when the body ends, however it ends (never rejects: a test's teardown cuts connections). */
  readonly done: Promise<void>
  close(): void
}

/** GETs `url` and parses the body as SSE while it arrives. */
export async function openRaw(url: string, headers: Record<string, string> = {}): Promise<RawStream> {
  const abort = new AbortController()
  const response = await fetch(url, { headers, signal: abort.signal })
  const stream: RawStream = {
    status: response.status,
    headers: response.headers,
    events: [],
    comments: [],
    retries: [],
    text: '',
    ended: false,
    error: undefined,
    done: Promise.resolve(),
    close: () => abort.abort(),
  }
  const parser = createParser({
    onEvent: (e) => stream.events.push({ id: e.id, event: e.event, data: e.data }),
    onComment: (c) => stream.comments.push(c),
    onRetry: (ms) => stream.retries.push(ms),
  })
  const body = response.body!
  ;(stream as { done: Promise<void> }).done = (async () => {
    const decoder = new TextDecoder()
    try {
      for await (const bytes of body as unknown as AsyncIterable<Uint8Array>) {
        const piece = decoder.decode(bytes, { stream: true })
        stream.text += piece
        parser.feed(piece)
      }
    } catch (error) {
      if (!abort.signal.aborted) stream.error = error
    } finally {
      stream.ended = true
    }
  })()
  return stream
}

/** The records of parsed SSE events. */
export const recordsOf = (events: readonly RawEvent[]): SessionRecord[] => events.map((e) => JSON.parse(e.data) as SessionRecord)

/** Waits until `check` holds, polling; gives up after `limitMs` (a hang, not a speed: far beyond what the wait needs). */
export async function until(check: () => boolean, what: string, limitMs = 60_000): Promise<void> {
  const started = Date.now()
  while (!check()) {
    if (Date.now() - started > limitMs) throw new Error(`waited ${limitMs / 1000} s for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}
