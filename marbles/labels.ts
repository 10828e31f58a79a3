/** Short, readable names for events, so that a marble diagram's value map reads like a log. */
import type { AgentEvent } from '../src/types/event.js'
import type { AgentOwnEvent } from '../src/agent/agent-events.js'

/**
 * A one-line label per event:
 *
 * | event | label |
 * |---|---|
 * | agentStart / agentEnd | `agentStart`, `agentEnd:<stopReason>` |
 * | turnStart / turnEnd | `turnStart:<i>`, `turnEnd:<i>` |
 * | messageStart / messageEnd | `msgStart:<role>`, `msgEnd:<role>` (assistant: `msgEnd:assistant:<stopReason>`; tool result: `msgEnd:toolResult:<callId>`) |
 * | messageUpdate | `<chunkType>` plus the text for text/thinking (`textDelta:"Hi"`) |
 * | tool execution | `toolStart:<callId>`, `toolUpdate:<callId>`, `toolEnd:<callId>` (`toolEnd:<callId>:error`) |
 * | approval | `approve?:<callId>`, `approved:<callId>` / `rewritten:<callId>` / `rejected:<callId>` |
 * | policyDecision | `policy:<slot>:<action>` |
 * | streamRetry | `retry:<attempt>:<errorKind>` |
 * | modelFallback | `fallback:<modelId>` |
 * | compaction | `compaction:<reason>:-<droppedMessages>` |
 * | Agent only: turnMetrics, modelChange, listenerError | `metrics:<turn>`, `model:<modelId>`, `listenerError:<listener>` |
 */
export function eventLabel(event: AgentEvent | AgentOwnEvent): string {
  switch (event.type) {
    case 'agentStart':
      return 'agentStart'
    case 'agentEnd':
      return `agentEnd:${event.result.stopReason}`
    case 'turnStart':
      return `turnStart:${event.turnIndex}`
    case 'turnEnd':
      return `turnEnd:${event.turnIndex}`
    case 'messageStart':
      return `msgStart:${event.message.role}`
    case 'messageEnd': {
      const m = event.message
      if (m.role === 'assistant') return `msgEnd:assistant:${m.stopReason}`
      if (m.role === 'toolResult') return `msgEnd:toolResult:${m.toolCallId}`
      return `msgEnd:${m.role}`
    }
    case 'streamRetry':
      return `retry:${event.attempt}:${event.error.kind}`
    case 'modelFallback':
      return `fallback:${event.to.modelId}`
    case 'compaction':
      return `compaction:${event.reason}:-${event.droppedMessages}`
    case 'messageUpdate': {
      const c = event.chunk
      if (c.type === 'textDelta' || c.type === 'thinkingDelta') return `${c.type}:${JSON.stringify(c.text)}`
      if (c.type === 'toolUseStart' || c.type === 'toolUseEnd') return `${c.type}:${c.id}`
      if (c.type === 'toolUseArgsDelta') return `${c.type}:${c.id}:${c.fragment}`
      return c.type
    }
    case 'toolExecutionStart':
      return `toolStart:${event.toolCallId}`
    case 'toolExecutionUpdate':
      return `toolUpdate:${event.toolCallId}`
    case 'toolExecutionEnd':
      return `toolEnd:${event.toolCallId}${event.isError ? ':error' : ''}`
    case 'toolApprovalRequest':
      return `approve?:${event.toolCallId}`
    case 'toolApprovalEnd':
      return `${event.approved ? (event.rewritten ? 'rewritten' : 'approved') : 'rejected'}:${event.toolCallId}`
    case 'policyDecision':
      return `policy:${event.slot}:${event.action}`
    case 'turnMetrics':
      return `metrics:${event.metrics.turnIndex}`
    case 'modelChange':
      return `model:${event.to.modelId}`
    case 'listenerError':
      return `listenerError:${event.listener}`
  }
}
