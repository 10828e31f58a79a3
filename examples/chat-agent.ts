// A chat agent with two tools, steering and a budget (the README's Agent example).
import * as t from 'io-ts'
import { Agent, defineTool } from '../src/index.js'
import { reply, scriptedModel } from '../marbles/index.js'

const weather = defineTool({
  name: 'weather', description: 'Current weather in a city.',
  parameters: t.type({ city: t.string }),
  execute: ({ city }) => `${city}: 18°C, light rain`,
})
const convert = defineTool({
  name: 'to_fahrenheit', description: 'Converts °C to °F.',
  parameters: t.type({ celsius: t.number }),
  execute: ({ celsius }) => `${(celsius * 9) / 5 + 32}°F`,
})

// Offline: a scripted model. With a key: `streamFn: anthropic()`, `model: model('anthropic/claude-sonnet-5-5')`.
const { model, streamFn } = scriptedModel([
  reply.toolCalls([{ id: 'w1', name: 'weather', args: { city: 'Paris' } }], { usage: { input: 900, output: 40 } }),
  reply.toolCalls([{ id: 'f1', name: 'to_fahrenheit', args: { celsius: 18 } }], { usage: { input: 1000, output: 30 } }),
  reply.text('Paris: 18°C (64.4°F), light rain — take an umbrella.', { usage: { input: 1100, output: 25 } }),
])

export const agent = new Agent({
  systemPrompt: 'You are a concise weather assistant.',
  model, streamFn, tools: [weather, convert],
  budget: { maxInputTokens: 50_000 }, // stops before a turn that would start over budget
})

agent.subscribe((e) => {
  if (e.type === 'messageUpdate' && e.chunk.type === 'textDelta') process.stdout.write(e.chunk.text)
  if (e.type === 'toolExecutionEnd') console.log(`[${e.toolName}]`, e.result.content)
  // Steering: redirect the agent while it works; delivered after the current tool batch.
  if (e.type === 'toolExecutionEnd' && e.toolName === 'weather') agent.steer('Also give it in Fahrenheit.')
})

export const result = agent.prompt('What is the weather in Paris?')
result.then((r) => console.log(`\n${r.stopReason}: ${agent.state.messages.length} messages, $${r.cost.total.toFixed(4)}`))
