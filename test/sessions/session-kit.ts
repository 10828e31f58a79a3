/** What the durable-Agent tests share: tools that count their runs, a model the test streams by hand, a crash as a copy of the store. */
import * as t from 'io-ts'
import { NEVER, Subject, concat, type Observable } from 'rxjs'
import { Agent } from '../../src/agent/agent.js'
import type { AgentOpenOptions } from '../../src/agent/session-open.js'
import type { AgentLogEntry } from '../../src/agent/agent-log.js'
import type { SessionStore } from '../../src/agent/session-store.js'
import { defineTool } from '../../src/tools/define-tool.js'
import type { ProviderChunk } from '../../src/types/chunk.js'
import type { StreamFn } from '../../src/types/request.js'
import { modelSpec } from '../../src/types/model.js'
import { asyncScheduler, type SchedulerLike } from 'rxjs'
import { PGlite } from '@electric-sql/pglite'
import { memorySessionStore, type MemorySessionStore } from '../../src/sessions/memory-store.js'
import { pgliteSessionStore } from '../../src/sessions/pglite-store.js'

/** How many times each tool ran, by tool call id. */
export const runs = new Map<string, number>()
const counted = (id: string): void => void runs.set(id, (runs.get(id) ?? 0) + 1)

export const echo = defineTool({ name: 'echo', description: 'Echoes.', parameters: t.type({ text: t.string }), execute: ({ text }, context) => (counted(context.toolCallId), `echo ${text}`) })
export const rm = defineTool({ name: 'rm', description: 'Deletes.', parameters: t.type({ path: t.string }), needsApproval: true, execute: ({ path }, context) => (counted(context.toolCallId), `deleted ${path}`) })
/** Never finishes: a process that stops while it runs leaves it unanswered. */
export const hang = defineTool({ name: 'hang', description: 'Hangs.', parameters: t.type({}), execute: (_args, context): Observable<string> => (counted(context.toolCallId), NEVER) })
export const tools = [echo, rm, hang]

/**
 * A model whose responses are scripted or streamed by hand: a response given
 * as `'manual'` is a Subject the test pushes chunks into (`live`).
 */
export function handModel(script: readonly (readonly ProviderChunk[] | 'manual' | 'hang')[]): { streamFn: StreamFn; model: ReturnType<typeof modelSpec>; live: Subject<ProviderChunk>[]; calls: () => number } {
  const live: Subject<ProviderChunk>[] = []
  let calls = 0
  const streamFn: StreamFn = () => {
    const response = script[calls++]
    if (response === undefined) throw new Error(`hand model: no response for call ${calls}`)
    if (response === 'hang') return NEVER
    if (response === 'manual') {
      const subject = new Subject<ProviderChunk>()
      live.push(subject)
      return subject
    }
    return concat(response)
  }
  return { streamFn, model: modelSpec('hand', 'hand-1'), live, calls: () => calls }
}

/** A memory store whose lease clock is `clock()` (default: the system clock). */
export function memoryStore(clock?: () => number): MemorySessionStore {
  if (clock === undefined) return memorySessionStore()
  // The system scheduler, whose clock is `clock`.
  const scheduler = Object.create(asyncScheduler, { now: { value: clock } }) as SchedulerLike
  return memorySessionStore({ scheduler })
}

let pglite: Promise<PGlite> | undefined
let schemas = 0

/** A fresh store of each kind the durable-Agent tests run on: in memory, and PGlite (one in-memory database per test file, a schema per store). */
export const storeKinds: readonly (readonly [string, () => Promise<SessionStore>])[] = [
  ['memory', () => Promise.resolve(memoryStore())],
  [
    'pglite',
    async () => {
      pglite ??= PGlite.create()
      return pgliteSessionStore({ db: await pglite, schema: `agent_${process.pid}_${++schemas}` })
    },
  ],
]

/** Closes the test file's PGlite database, if it made one. */
export async function closeStores(): Promise<void> {
  const db = pglite
  pglite = undefined
  await (await db)?.close()
}

/** What a process left when it stopped: a copy of the store's records (the process itself goes on with the original, unseen). */
export async function crashCopy(store: SessionStore, sessionId: string, make: () => Promise<SessionStore> = () => Promise.resolve(memoryStore())): Promise<SessionStore> {
  const copy = await make()
  const records = await store.read(sessionId)
  await copy.append(sessionId, { expectedSeq: 0, records: records.map((r) => ({ at: r.at, body: r.body })) })
  return copy
}

/** `store`, with some of its methods replaced. */
export function wrapStore(store: SessionStore, over: Partial<Omit<SessionStore, 'kind'>>): SessionStore {
  return {
    kind: store.kind,
    append: over.append ?? ((id, a) => store.append(id, a)),
    read: over.read ?? ((id, o) => store.read(id, o)),
    events$: (id, o) => store.events$(id, o),
    info: (id) => store.info(id),
    list: (o) => store.list(o),
    delete: (id) => store.delete(id),
    acquireLease: over.acquireLease ?? ((id, h, ttl) => store.acquireLease(id, h, ttl)),
    releaseLease: over.releaseLease ?? ((id, h) => store.releaseLease(id, h)),
    close: () => store.close(),
  }
}

const opened: Agent[] = []

/** `Agent.open` with the test defaults; closed by `closeAll`. */
export async function openAgent(store: SessionStore, sessionId: string, model: { streamFn: StreamFn; model: ReturnType<typeof modelSpec> }, extra: Partial<AgentOpenOptions> = {}): Promise<Agent> {
  const agent = await Agent.open({ store, sessionId, systemPrompt: 'sys', model: model.model, streamFn: model.streamFn, tools, holder: 'test', ...extra })
  opened.push(agent)
  return agent
}

export async function closeAll(): Promise<void> {
  const all = opened.splice(0)
  await Promise.allSettled(all.map(async (a) => a.abort().finally(() => a.session?.close())))
}

export const logOf = async (store: SessionStore, id: string): Promise<AgentLogEntry[]> =>
  (await store.read(id)).map((r) => r.body).filter((b): b is AgentLogEntry => b.type !== 'stream')

/** Resolves once `check` holds (polled on the event loop, never on time). */
export async function until(check: () => boolean, what: string, tries = 2000): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (check()) return
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
  throw new Error(`never happened: ${what}`)
}
