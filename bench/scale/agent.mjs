// The SCALE rows' agent: a scripted model and one cheap tool, the same in a DBOS worker and in the
// plain durable session it is compared with. A run is one prompt: the model answers the user
// message with one tool call (its arguments in 3 fragments), the tool runs, the model answers the
// tool result with a short text (5 deltas): 2 model turns and 1 tool call, 3 steps. The chunks come
// from the bench's shared asynchronous source (an async generator, one chunk per `for await` step).
import * as t from 'io-ts'
import { defineTool, fromAsyncIterable, modelSpec } from '../../dist/src/index.js'
import { chunk } from '../../dist/marbles/index.js'
import { asyncSource } from '../inputs.mjs'

export const agentName = 'scale'
/** Per run: model calls, tool calls, and the steps they make (a DBOS step each). */
export const perRun = { modelTurns: 2, toolCalls: 1, steps: 3 }

const model = modelSpec('scripted', 'scripted-1')

/** Answers a user message with a tool call and a tool result with a short text, from the message it is asked about. */
export const streamFn = (request) => {
  const last = request.messages[request.messages.length - 1]
  const id = `call_${request.messages.length}`
  const args = JSON.stringify({ value: `turn ${request.messages.length}`, n: request.messages.length })
  const third = Math.ceil(args.length / 3)
  const chunks =
    last.role === 'user'
      ? [chunk.start('m', 'scripted-1'), chunk.toolStart(id, 'echo'), ...[0, 1, 2].map((i) => chunk.args(id, args.slice(i * third, (i + 1) * third))), chunk.toolEnd(id), chunk.stop('toolUse')]
      : [chunk.start('m', 'scripted-1'), ...['The ', 'tool ', 'said ', 'so. ', 'Done.'].map(chunk.text), chunk.stop('endTurn')]
  return fromAsyncIterable(asyncSource(chunks))
}

export const echo = defineTool({
  name: 'echo',
  description: 'Echoes its value.',
  parameters: t.type({ value: t.string, n: t.number }),
  execute: ({ value }) => value,
})

/** The agent's options (a worker's `DbosAgentDefinition.options`, or `Agent.open`'s without the store). */
export const agentOptions = () => ({ systemPrompt: 'You are a benchmark.', model, streamFn, tools: [echo] })

export const definition = { name: agentName, options: agentOptions }
