/**
 * Transcripts from events, and the repair that makes any transcript valid:
 * every tool call answered exactly once.
 */
import { filter, map, type OperatorFunction } from 'rxjs'
import { text } from '../types/content.js'
import type { AgentEvent } from '../types/event.js'
import { toolCallsOf, type AgentMessage, type AssistantMessage, type ToolResultMessage } from '../types/message.js'
import type { AgentResult } from '../types/result.js'

/** The run's result, from its `agentEnd`. */
export function agentResult(): OperatorFunction<AgentEvent, AgentResult> {
  return (events$) =>
    events$.pipe(
      filter((e): e is Extract<AgentEvent, { type: 'agentEnd' }> => e.type === 'agentEnd'),
      map((e) => e.result),
    )
}

/**
 * Gives every unanswered tool call a synthetic error result, placed right
 * after the results its assistant message did get. Use it on a transcript
 * whose run was cut off, or before sending a transcript to another provider.
 */
export function settleTranscript(messages: readonly AgentMessage[], reason = 'the run ended before this tool call finished'): AgentMessage[] {
  const answered = new Set<string>()
  for (const m of messages) if (m.role === 'toolResult') answered.add(m.toolCallId)
  const out: AgentMessage[] = []
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!
    out.push(m)
    if (m.role !== 'assistant') continue
    const missing = toolCallsOf(m).filter((c) => !answered.has(c.id))
    if (missing.length === 0) continue
    // Keep results that did arrive directly after their assistant message.
    while (i + 1 < messages.length && messages[i + 1]!.role === 'toolResult') out.push(messages[++i]!)
    for (const call of missing) {
      const result: ToolResultMessage = {
        role: 'toolResult',
        toolCallId: call.id,
        toolName: call.name,
        content: [text(`Tool call not executed: ${reason}.`)],
        isError: true,
        timestamp: m.timestamp,
      }
      out.push(result)
      answered.add(call.id)
    }
  }
  return out
}

/**
 * The transcript a run's events describe, valid even when the events were
 * cut off by an unsubscribe: an assistant message still streaming is kept as
 * far as it got, with stopReason `aborted`, and unanswered tool calls get
 * error results.
 */
export function transcriptFromEvents(events: readonly AgentEvent[], initial: readonly AgentMessage[] = []): AgentMessage[] {
  const messages: AgentMessage[] = [...initial]
  let streaming: AssistantMessage | undefined
  for (const e of events) {
    if (e.type === 'messageStart' && e.message.role === 'assistant') streaming = e.message
    else if (e.type === 'messageUpdate') streaming = e.message
    else if (e.type === 'messageEnd') {
      messages.push(e.message)
      if (e.message.role === 'assistant') streaming = undefined
    }
  }
  if (streaming !== undefined) {
    messages.push({ ...streaming, stopReason: 'aborted', errorMessage: 'the run was cancelled while the response was streaming' })
  }
  return settleTranscript(messages, 'the run was cancelled before this tool call finished')
}
