/**
 * Transcripts from events, repaired so that every tool call is answered
 * exactly once (see `settleTranscript`).
 */
import { filter, map, type OperatorFunction } from 'rxjs'
import { settleTranscript } from '../types/settle.js'
import type { AgentEvent } from '../types/event.js'
import type { AgentMessage, AssistantMessage } from '../types/message.js'
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
    // The discarded attempt's content is gone; its billed usage stays.
    else if (e.type === 'streamRetry') {
      const { errorMessage: _m, errorKind: _k, ...attempt } = e.message
      streaming = { ...attempt, content: [], stopReason: 'stop' }
    }
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
