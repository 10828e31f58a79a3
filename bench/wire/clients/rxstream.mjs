// WIRE diagnostic client (not one of the four compared): rxagent's provider adapter alone, subscribed
// directly, with no `agentLoop` — to split rxagent's cost between the provider path and the loop.
// TEXT only (a tool conversation needs the loop to answer the calls).
import { userMessage, modelSpec } from '../../../dist/src/index.js'
import { anthropic, openaiChat } from '../../../dist/src/providers/index.js'

/** `base`: the server's origin. */
export function setup({ api, scenario, base }) {
  if (scenario !== 'text') throw new Error('rxstream: TEXT only')
  const streamFn = api === 'anthropic' ? anthropic({ baseUrl: base, apiKey: 'bench' }) : openaiChat({ baseUrl: `${base}/v1`, apiKey: 'bench' })
  const model = api === 'anthropic' ? modelSpec('anthropic', 'claude-sonnet-4-5') : modelSpec('openai', 'gpt-4.1-nano')
  const request = { model, systemPrompt: 'You are a benchmark.', messages: [userMessage('go')], tools: [] }
  return () =>
    new Promise((resolve, reject) => {
      let text = ''
      streamFn(request).subscribe({
        next: (c) => {
          if (c.type === 'textDelta') text += c.text
        },
        error: reject,
        complete: () => resolve({ textLength: text.length, toolResults: 0 }),
      })
    })
}
