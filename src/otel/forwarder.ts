/** Tracing an `Agent`: a forwarder that turns each of its runs into spans. */
import type { AgentRunEvent } from '../agent/agent-events.js'
import { resolveOtelOptions, type OtelOptions } from './options.js'
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
 * @example
 * const agent = new Agent({ systemPrompt, model, streamFn, forwarders: [otelForwarder({ agentName: 'support' })] })
 */
export function otelForwarder(options: OtelOptions = {}): (event: AgentRunEvent) => void {
  const resolved = resolveOtelOptions('otelForwarder', options)
  const runs = new Map<string, RunTracer>()
  return (event) => {
    if (event.runId === null) return
    const key = `${event.agentId}\u0000${event.runId}`
    let run = runs.get(key)
    if (run === undefined) {
      if (event.type !== 'agentStart') return // a forwarder added mid-run starts with the next run
      run = new RunTracer(resolved, resolved.conversationId ?? event.agentId)
      runs.set(key, run)
    }
    run.handle(event)
    if (run.done) runs.delete(key)
  }
}
