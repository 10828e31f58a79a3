// WIRE client: rxagent's real provider adapters (the public `rxagent/providers` API) + `agentLoop`.
import { agentLoop, userMessage, modelSpec } from '../../../dist/src/index.js'
import { anthropic, openaiChat } from '../../../dist/src/providers/index.js'
import { echo } from '../../runtimes/rxagent.mjs'

/** Runs one loop to its end, like an app: text deltas appended, tool results counted. */
const consume = (run$) =>
  new Promise((resolve, reject) => {
    let text = ''
    let toolResults = 0
    run$.subscribe({
      next: (e) => {
        if (e.type === 'messageUpdate' && e.chunk.type === 'textDelta') text += e.chunk.text
        else if (e.type === 'toolExecutionEnd') {
          if (e.isError) reject(new Error(`rxagent: tool ${e.toolName} failed`))
          toolResults++
        } else if (e.type === 'messageEnd' && e.message.role === 'assistant' && e.message.stopReason === 'error') reject(new Error(`rxagent: ${e.message.errorMessage}`))
      },
      error: reject,
      complete: () => resolve({ textLength: text.length, toolResults }),
    })
  })

/** `base`: the server's origin. */
export function setup({ api, scenario, base }) {
  const streamFn = api === 'anthropic' ? anthropic({ baseUrl: base, apiKey: 'bench' }) : openaiChat({ baseUrl: `${base}/v1`, apiKey: 'bench' })
  const model = api === 'anthropic' ? modelSpec('anthropic', 'claude-sonnet-4-5') : modelSpec('openai', 'gpt-4.1-nano')
  const context = { systemPrompt: 'You are a benchmark.', messages: [], tools: scenario === 'tools' ? [echo] : [] }
  return () => consume(agentLoop(userMessage('go'), context, { model, streamFn }))
}
