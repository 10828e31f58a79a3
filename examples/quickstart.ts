// The README's 20-line example: one tool, a scripted model, every event printed.
import * as t from 'io-ts'
import { agentLoop, defineTool, userMessage } from '../src/index.js'
import { reply, scriptedModel } from '../marbles/index.js'

const add = defineTool({
  name: 'add',
  description: 'Adds two integers.',
  parameters: t.type({ a: t.Int, b: t.Int }),
  execute: ({ a, b }) => String(a + b),
})

// Swap in a real provider's streamFn here; the loop does not change.
const { model, streamFn } = scriptedModel([reply.toolCalls([{ id: 'c1', name: 'add', args: { a: 2, b: 3 } }]), reply.text('2 + 3 = 5')])

agentLoop(userMessage('What is 2 + 3?'), { systemPrompt: 'Use tools for arithmetic.', messages: [], tools: [add] }, { model, streamFn }).subscribe((event) => {
  if (event.type === 'messageUpdate' && event.chunk.type === 'textDelta') process.stdout.write(event.chunk.text)
  if (event.type === 'toolExecutionEnd') console.log(`[${event.toolName}] →`, event.result.content)
  if (event.type === 'agentEnd') console.log(`\n${event.result.stopReason}, ${event.result.usage.total} tokens`)
})
