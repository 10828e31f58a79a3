/** Tracing an `Agent`: a forwarder that turns each of its runs, and the runs of its sub-agents, into spans. */
import type { AgentRunEvent } from '../agent/agent-events.js'
import type { SubAgentChild, SubAgentFollower } from '../agent/sub-agent.js'
import { resolveOtelOptions, type OtelOptions, type ResolvedOtelOptions } from './options.js'
import { RunTracer } from './run-tracer.js'

/**
 * A forwarder for `new Agent({ forwarders: [otelForwarder()] })` or
 * `agent.addForwarder(otelForwarder())`: each run of the agent becomes an
 * `invoke_agent` span with its `chat` and `execute_tool` children, per the
 * OpenTelemetry GenAI semantic conventions, and each model call feeds the
 * `gen_ai.client.token.usage` and `gen_ai.client.operation.duration`
 * histograms. `gen_ai.conversation.id` is `options.conversationId`, or the
 * agent's id. One forwarder may serve several agents (runs are told apart by
 * agent and run id). A tracer that throws is reported by the Agent as a
 * `listenerError`, never breaking the run.
 *
 * It follows sub-agents (a {@link SubAgentFollower}): the run of a
 * `subAgentTool`'s child is traced as `invoke_agent {name}` (the tool's
 * `agentName`, default its name) under the call's `execute_tool` span, its
 * own `chat` and `execute_tool` spans beneath, and so on down; its
 * `gen_ai.conversation.id` is the child agent's id. Attach it to the parent
 * only (a forwarder the child is created with traces the child's runs again,
 * without a parent).
 *
 * @example
 * const agent = new Agent({ systemPrompt, model, streamFn, forwarders: [otelForwarder({ agentName: 'support' })] })
 */
export function otelForwarder(options: OtelOptions = {}): SubAgentFollower {
  return tracingForwarder(resolveOtelOptions('otelForwarder', options))
}

const keyOf = (agentId: string, runId: string): string => `${agentId}\u0000${runId}`

/** Traces the runs it is given, and follows their sub-agents with forwarders of its own kind. */
function tracingForwarder(resolved: ResolvedOtelOptions): SubAgentFollower {
  const runs = new Map<string, RunTracer>()
  const forward = (event: AgentRunEvent): void => {
    if (event.runId === null) return
    const key = keyOf(event.agentId, event.runId)
    let run = runs.get(key)
    if (run === undefined) {
      if (event.type !== 'agentStart') return // a forwarder added mid-run starts with the next run
      run = new RunTracer(resolved, resolved.conversationId ?? event.agentId)
      runs.set(key, run)
    }
    run.handle(event)
    if (run.done) runs.delete(key)
  }
  const followSubAgent = (child: SubAgentChild): ((event: AgentRunEvent) => void) | undefined => {
    const context = runs.get(keyOf(child.parentAgentId, child.parentRunId))?.toolContext(child.toolCallId)
    if (context === undefined) return undefined // a run this forwarder does not trace
    return tracingForwarder({ ...resolved, agentName: child.name, conversationId: undefined, parentContext: () => context })
  }
  return Object.assign(forward, { followSubAgent })
}
