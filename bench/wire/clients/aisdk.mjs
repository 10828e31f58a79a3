// WIRE client: the AI SDK's real providers (`@ai-sdk/anthropic`, `@ai-sdk/openai` with the Chat
// Completions model `openai.chat(...)`) pointed at the local server, + `streamText`.
import { createAnthropic } from '@ai-sdk/anthropic'
import { createOpenAI } from '@ai-sdk/openai'
import { stepCountIs, streamText } from 'ai'
import { echo } from '../../runtimes/aisdk.mjs'

/** Consumes `fullStream` completely, like an app: text deltas appended, tool results counted. */
async function consume(result) {
  let text = ''
  let toolResults = 0
  for await (const part of result.fullStream) {
    if (part.type === 'text-delta') text += part.text
    else if (part.type === 'tool-result') toolResults++
    else if (part.type === 'error' || part.type === 'tool-error') throw part.error
  }
  return { textLength: text.length, toolResults }
}

/** `base`: the server's origin; `size.turns`: the TOOLS conversation's tool turns. */
export function setup({ api, scenario, base, size }) {
  const model = api === 'anthropic' ? createAnthropic({ baseURL: `${base}/v1`, apiKey: 'bench' })('claude-sonnet-4-5') : createOpenAI({ baseURL: `${base}/v1`, apiKey: 'bench' }).chat('gpt-4.1-nano')
  const options = scenario === 'tools' ? { tools: { echo }, stopWhen: stepCountIs(size.turns + 1) } : {}
  return () => consume(streamText({ model, system: 'You are a benchmark.', messages: [{ role: 'user', content: 'go' }], maxRetries: 0, ...options }))
}
