/** The repair that makes any transcript valid: every tool call answered exactly once. */
import { text } from './content.js'
import { toolCallsOf, type AgentMessage, type ToolResultMessage } from './message.js'

/**
 * Gives every unanswered tool call a synthetic error result, placed right
 * after the results its assistant message did get. Use it on a transcript
 * whose run was cut off, or before sending a transcript to another provider.
 */
export function settleTranscript<M extends AgentMessage>(messages: readonly M[], reason = 'the run ended before this tool call finished'): (M | ToolResultMessage)[] {
  const answered = new Set<string>()
  for (const m of messages) if (m.role === 'toolResult') answered.add(m.toolCallId)
  const out: (M | ToolResultMessage)[] = []
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
