/**
 * Resuming an AG-UI stream through the session log: a thread's latest run,
 * read back from a `SessionStore` (the log entries and stream records a
 * durable Agent writes) and turned into the same AG-UI events the live run
 * produced — replayed from the run's start, then live until it ends. A
 * client that lost its connection (or a second tab) sees the whole run.
 *
 * Stream records compacted away by a `messageEnd` are no loss: the message
 * then arrives whole (`toAgUi` sends the content a stream did not announce).
 */
import type { AGUIEvent } from '@ag-ui/core'
import { Observable, defer, from, map, mergeMap } from 'rxjs'
import type { AgentLogEntry } from '../agent/agent-log.js'
import type { SessionRecord, SessionStore } from '../agent/session-store.js'
import type { AssistantMessage } from '../types/message.js'
import { addCost, addUsage, emptyCost, emptyUsage } from '../types/usage.js'
import { toAgUi } from './to-ag-ui.js'

/** An AG-UI event and the session position it came from (the SSE `id:`). */
export interface PositionedAgUiEvent {
  readonly position: number
  readonly event: AGUIEvent
}

/** The position before the thread's latest run (its `runStart` entry's position − 1), and the run's id; `undefined` when none. */
export async function latestRun(store: SessionStore, sessionId: string): Promise<{ readonly from: number; readonly runId: string } | undefined> {
  const records = await store.read(sessionId)
  for (let i = records.length - 1; i >= 0; i--) {
    const body = records[i]!.body
    if (body.type === 'runStart') return { from: records[i]!.position - 1, runId: body.runId }
  }
  return undefined
}

/** The loop events a run's session records stand for (what `toAgUi` reads of them). */
function recordsToEvents(): (record: SessionRecord) => Array<{ readonly type: string; readonly [key: string]: unknown }> {
  let streaming = false
  let lastAssistant: AssistantMessage | undefined
  let usage = emptyUsage
  let cost = emptyCost
  const toolNames = new Map<string, string>()
  const end = (stopReason: string, error: string | undefined) => [
    { type: 'agentEnd', result: { messages: [], stopReason, usage, cost, ...(error === undefined ? {} : { error }) } },
  ]
  return ({ body }) => {
    if (body.type === 'stream') {
      const events: Array<{ readonly type: string; readonly [key: string]: unknown }> = []
      if (!streaming) events.push({ type: 'messageStart', message: { role: 'assistant' } })
      streaming = true
      for (const chunk of body.chunks) events.push({ type: 'messageUpdate', chunk })
      return events
    }
    const entry: AgentLogEntry = body
    switch (entry.type) {
      case 'agentStart':
        return [{ type: 'agentStart' }]
      case 'turnStart':
        return [{ type: 'turnStart', turnIndex: entry.turnIndex }]
      case 'messageEnd': {
        const m = entry.message
        if (m.role === 'assistant') {
          const events = streaming ? [] : [{ type: 'messageStart', message: m }]
          streaming = false
          lastAssistant = m
          usage = addUsage(usage, m.usage)
          cost = addCost(cost, m.cost)
          for (const c of m.content) if (c.type === 'toolCall') toolNames.set(c.id, c.name)
          return [...events, { type: 'messageEnd', message: m }]
        }
        if (m.role === 'toolResult') return [{ type: 'toolExecutionEnd', toolCallId: m.toolCallId, toolName: m.toolName, result: { content: m.content }, isError: m.isError }]
        return []
      }
      case 'toolExecutionStart':
        return [{ type: 'toolExecutionStart', toolCallId: entry.toolCallId, toolName: toolNames.get(entry.toolCallId) ?? '', args: {} }]
      case 'turnEnd':
        return [{ type: 'turnEnd', turnIndex: entry.turnIndex, toolResults: [], ...(lastAssistant === undefined ? {} : { message: lastAssistant }) }]
      case 'agentEnd':
        return end(entry.stopReason, entry.error)
      case 'runFailed':
        return end('error', entry.error)
      default:
        return []
    }
  }
}

/**
 * The AG-UI events of session `threadId`'s latest run, each with its
 * position: replayed from the run's `runStart`, then live from the store
 * until the run ends (the Observable then completes). Errors with a message
 * when the session has no run.
 */
export function sessionRunToAgUi(store: SessionStore, threadId: string, options: { readonly now?: () => number } = {}): Observable<PositionedAgUiEvent> {
  return defer(() => from(latestRun(store, threadId))).pipe(
    mergeMap((run) => {
      if (run === undefined) throw new Error(`session '${threadId}' has no run to resume`)
      const toEvents = recordsToEvents()
      let position = run.from
      return store.events$(threadId, { from: run.from }).pipe(
        mergeMap((record) => {
          position = record.position
          return toEvents(record)
        }),
        toAgUi({ threadId, runId: run.runId, ...(options.now === undefined ? {} : { now: options.now }) }),
        map((event) => ({ position, event })),
      )
    }),
  )
}
