// WIRE client: pi-ai's real providers (which call the vendor SDKs, @anthropic-ai/sdk and openai) with
// models pointed at the local server, + pi-agent-core's `agentLoop` (its default `streamSimple`).
import { agentLoop } from '@mariozechner/pi-agent-core'
import { echo } from '../../runtimes/pi.mjs'

const cost = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }

// pi's own default (Agent's defaultConvertToLlm).
const convertToLlm = (messages) => messages.filter((m) => m.role === 'user' || m.role === 'assistant' || m.role === 'toolResult')

/** Runs one loop to its end, like an app: text deltas appended, tool results counted. */
async function consume(events) {
  let text = ''
  let toolResults = 0
  for await (const e of events) {
    if (e.type === 'message_update') {
      if (e.assistantMessageEvent.type === 'text_delta') text += e.assistantMessageEvent.delta
    } else if (e.type === 'tool_execution_end') {
      if (e.isError) throw new Error(`pi: tool ${e.toolName} failed: ${JSON.stringify(e.result?.content)}`)
      toolResults++
    } else if (e.type === 'message_end' && e.message.role === 'assistant' && e.message.stopReason === 'error') throw new Error(`pi: ${e.message.errorMessage}`)
  }
  return { textLength: text.length, toolResults }
}

/** `base`: the server's origin. */
export function setup({ api, scenario, base }) {
  const model =
    api === 'anthropic'
      ? { id: 'claude-sonnet-4-5', name: 'Claude Sonnet 4.5', api: 'anthropic-messages', provider: 'anthropic', baseUrl: base, reasoning: false, input: ['text'], cost, contextWindow: 200_000, maxTokens: 8192 }
      : { id: 'gpt-4.1-nano', name: 'GPT-4.1 nano', api: 'openai-completions', provider: 'openai', baseUrl: `${base}/v1`, reasoning: false, input: ['text'], cost, contextWindow: 1_047_576, maxTokens: 8192 }
  const config = { model, convertToLlm, toolExecution: 'parallel', apiKey: 'bench' }
  const tools = scenario === 'tools' ? [echo] : []
  return () => consume(agentLoop([{ role: 'user', content: 'go', timestamp: Date.now() }], { systemPrompt: 'You are a benchmark.', messages: [], tools }, config))
}
