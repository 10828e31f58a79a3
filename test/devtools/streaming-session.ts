/**
 * A session caught mid-stream, written record by record with set times: a
 * finished turn with two parallel tool calls (one approved), a steering
 * message, and a second turn streaming now — thinking, text, a retry, a
 * fallback to another model, more text. The first turn's message is
 * finished: its chunks are compacted, its time to first token is in the marks
 * its `messageEnd` carries. The second's stream records are still there (they
 * are compacted when the message ends), so the timeline shows its chunk
 * marks, retry, fallback and time to first token. The README's screenshot is
 * drawn from it.
 */
import type { SessionRecordBody, SessionStore, TimedRecord } from '../../src/agent/session-store.js'
import type { ProviderChunk } from '../../src/types/chunk.js'
import { assistantMessage, userMessage, type AgentMessage } from '../../src/types/message.js'
import { modelSpec } from '../../src/types/model.js'
import { emptyCost, emptyUsage } from '../../src/types/usage.js'

type Body = SessionRecordBody extends infer B ? (B extends { readonly seq: number } ? Omit<B, 'seq'> : B) : never

const T0 = Date.UTC(2026, 10, 25, 9, 30)
const model = modelSpec('anthropic', 'claude-sonnet-4-5')
const busy = { kind: 'overloaded' as const, message: 'overloaded (529)', retryable: true, provider: 'anthropic' }
const result = (id: string, name: string, text: string): AgentMessage => ({ role: 'toolResult', toolCallId: id, toolName: name, content: [{ type: 'text', text }], isError: false, timestamp: 0 })
const stream = (...chunks: ProviderChunk[]): Body => ({ type: 'stream', afterSeq: 0, chunks })

/** `[ms after T0, body]`; stream records get their `afterSeq` from the entries before them. */
const script: readonly (readonly [number, Body])[] = [
  [0, { type: 'init', version: 1, agentId: 'release-notes', systemPrompt: 'Write release notes.', model, availableModels: [model, modelSpec('openai', 'gpt-5-mini')], tools: ['git_log', 'read_file', 'write_file'], messages: [] }],
  [0, { type: 'runStart', runId: 'release-notes/run-1', prompts: [userMessage('Draft the notes for v0.2 from the git log and the changelog.')] }],
  [0, { type: 'agentStart' }],
  [0, { type: 'messageEnd', message: userMessage('Draft the notes for v0.2 from the git log and the changelog.') }],
  [0, { type: 'turnStart', turnIndex: 0 }],
  [820, { type: 'messageEnd', stream: { startedAt: T0, firstChunkAt: T0 + 310, endedAt: T0 + 820 }, message: assistantMessage([{ type: 'thinking', thinking: 'Need the log and the changelog.' }, { type: 'toolCall', id: 'log-1', name: 'git_log', arguments: { since: 'v0.1.0' } }, { type: 'toolCall', id: 'read-1', name: 'read_file', arguments: { path: 'CHANGELOG.md' } }], { provider: 'anthropic', model: model.modelId, stopReason: 'toolUse', usage: { ...emptyUsage, input: 2400, output: 120, total: 2520 }, cost: { ...emptyCost, total: 0.0090 } }) }],
  [830, { type: 'toolExecutionStart', toolCallId: 'log-1' }],
  [830, { type: 'approvalRequested', toolCallId: 'read-1', toolName: 'read_file', args: { path: 'CHANGELOG.md' } }],
  [1150, { type: 'approvalDecided', toolCallId: 'read-1', decision: { approved: true }, by: 'resolveApproval' }],
  [1150, { type: 'toolExecutionStart', toolCallId: 'read-1' }],
  [1320, { type: 'toolExecutionEnd', toolCallId: 'read-1' }],
  [1320, { type: 'messageEnd', message: result('read-1', 'read_file', '## Unreleased\n- durable sessions\n- devtools') }],
  [1400, { type: 'enqueue', queue: 'steering', message: userMessage('Keep it under 10 lines.') }],
  [1610, { type: 'toolExecutionEnd', toolCallId: 'log-1' }],
  [1610, { type: 'messageEnd', message: result('log-1', 'git_log', '41 commits since v0.1.0') }],
  [1610, { type: 'turnEnd', turnIndex: 0 }],
  [1615, { type: 'dequeue', queue: 'steering', count: 1 }],
  [1615, { type: 'messageEnd', message: userMessage('Keep it under 10 lines.') }],
  [1620, { type: 'turnStart', turnIndex: 1 }],
  [2050, stream({ type: 'messageStart', id: 'msg-2', model: model.modelId }, { type: 'thinkingDelta', text: 'Group by theme: sessions, devtools, fixes.' })],
  [2300, stream({ type: 'textDelta', text: '## v0.2\n' })],
  [2380, stream({ type: 'retry', attempt: 1, delayMs: 400, error: busy })],
  [2800, stream({ type: 'retry', attempt: 2, delayMs: 0, error: busy, model: modelSpec('openai', 'gpt-5-mini') })],
  [3120, stream({ type: 'messageStart', id: 'msg-3', model: 'gpt-5-mini' }, { type: 'textDelta', text: '## v0.2\n- Durable sessions' })],
  [3350, stream({ type: 'textDelta', text: ' in PGlite and PostgreSQL\n- A devtools page' })],
]

/** Writes the session (one append per record, as a live writer would) and returns its id. */
export async function streamingSession(store: SessionStore, sessionId = 'release-notes-live'): Promise<string> {
  let seq = 0
  for (const [ms, body] of script) {
    const record: TimedRecord = { at: T0 + ms, body: (body.type === 'stream' ? { ...body, afterSeq: seq } : { ...body, seq }) as SessionRecordBody }
    await store.append(sessionId, { expectedSeq: seq, records: [record] })
    if (body.type !== 'stream') seq++
  }
  return sessionId
}
