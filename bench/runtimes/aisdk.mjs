// AI SDK (`ai` 6, the newest major that supports Node 20; ai 7 requires Node 22): `streamText` with its own multi-step tool loop, driven by `MockLanguageModelV3` from
// `ai/test`, whose `doStream` returns a ReadableStream of the provider stream parts of the
// LanguageModelV3 spec, pulled from the shared `asyncSource` generator every runtime reads: one
// `pull` per part, no timers (what `simulateReadableStream` does with null delays, over the same
// generator as the others).
import { stepCountIs, streamText, tool } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { z } from 'zod'
import { asyncSource, textDeltas, toolTurn } from '../inputs.mjs'

export const name = 'ai-sdk'

const usage = (output) => ({
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: output, text: output, reasoning: 0 },
})

const head = () => [
  { type: 'stream-start', warnings: [] },
  { type: 'response-metadata', id: 'resp', modelId: 'bench-1', timestamp: new Date(0) },
]

const textParts = (id, deltas) => [{ type: 'text-start', id }, ...deltas.map((delta) => ({ type: 'text-delta', id, delta })), { type: 'text-end', id }]

const toolParts = (id, toolName, fragments, input) => [
  { type: 'tool-input-start', id, toolName },
  ...fragments.map((delta) => ({ type: 'tool-input-delta', id, delta })),
  { type: 'tool-input-end', id },
  { type: 'tool-call', toolCallId: id, toolName, input },
]

const textScript = (deltas) => [...head(), ...textParts('t0', deltas), { type: 'finish', usage: usage(deltas.length), finishReason: { unified: 'stop', raw: 'end_turn' } }]

const toolScript = (turn) => {
  const { text, toolCalls } = toolTurn(turn)
  return [
    ...head(),
    ...textParts('t0', text),
    ...toolCalls.flatMap((c) => toolParts(c.id, c.name, c.fragments, JSON.stringify(c.args))),
    { type: 'finish', usage: usage(text.length + toolCalls.length), finishReason: { unified: 'tool-calls', raw: 'tool_use' } },
  ]
}

/** The model's stream: one part per pull, each from the async generator over `chunks`. */
function stream(chunks) {
  const source = asyncSource(chunks)
  return {
    stream: new ReadableStream({
      async pull(controller) {
        const { value, done } = await source.next()
        if (done) controller.close()
        else controller.enqueue(value)
      },
      cancel() {
        return source.return(undefined).then(() => undefined)
      },
    }),
  }
}

/** A mock model answering call k of a run with `scripts[k]`. */
function scriptedModel(scripts) {
  let call = 0
  const model = new MockLanguageModelV3({
    provider: 'bench',
    modelId: 'bench-1',
    doStream: async () => {
      const chunks = scripts[call++]
      if (chunks === undefined) throw new Error(`ai-sdk mock: no script for call #${call}`)
      return stream(chunks)
    },
  })
  return {
    model,
    reset() {
      call = 0
    },
    // MockLanguageModelV3 records every call's options (the whole prompt); rxagent's mock runs with
    // `recordRequests: false` and pi's records nothing, so drop the recording after a run.
    forget() {
      model.doStreamCalls.length = 0
    },
  }
}

/** Consumes `fullStream` completely, like an app: text deltas appended (or, without `keepText`, counted), tool results counted. */
async function consume(result, keepText = true) {
  let text = ''
  let length = 0
  let toolResults = 0
  let firstDelta
  for await (const part of result.fullStream) {
    if (part.type === 'text-delta') {
      if (firstDelta === undefined) firstDelta = performance.now()
      if (keepText) text += part.text
      else length += part.text.length
    } else if (part.type === 'tool-result') toolResults++
    else if (part.type === 'error' || part.type === 'tool-error') throw part.error
  }
  return { text, textLength: keepText ? text.length : length, toolResults, firstDelta }
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

const instructions = 'You are a benchmark.'
const prompt = { role: 'user', content: 'go' }

async function run(mock, options, keepText) {
  mock.reset()
  const result = await consume(streamText({ model: mock.model, system: instructions, ...options }), keepText)
  mock.forget()
  // The AI SDK releases the run's memory only after an event-loop turn.
  await nextTurn()
  return result
}

export const echo = tool({
  description: 'Echoes its value.',
  inputSchema: z.object({ value: z.string(), n: z.number(), tags: z.array(z.string()) }),
  execute: async ({ value }) => value,
})

const sleeper = (ms) =>
  tool({
    description: 'Waits.',
    inputSchema: z.object({ i: z.number() }),
    execute: ({ i }) => new Promise((resolve) => setTimeout(() => resolve(`slept ${i}`), ms)),
  })

export const scenarios = {
  text(n, { keepText } = {}) {
    const mock = scriptedModel([textScript(textDeltas(n))])
    return () => run(mock, { messages: [prompt] }, keepText)
  },

  tools(turns) {
    const scripts = Array.from({ length: turns }, (_, turn) => toolScript(turn))
    scripts.push(textScript(['done']))
    const mock = scriptedModel(scripts)
    const tools = { echo }
    return () => run(mock, { messages: [prompt], tools, stopWhen: stepCountIs(turns + 2) })
  },

  long(count, { history, deltas }) {
    // A loop, as rxagent's adapter builds its history (see toMessages there): no closure made per
    // call whose code is optimized again after each full GC, inside the timed run that follows.
    const messages = []
    for (let i = 0; i < history.length; i++) messages.push({ role: history[i].role, content: history[i].text })
    messages.push(prompt)
    const mock = scriptedModel([textScript(textDeltas(deltas))])
    return () => run(mock, { messages })
  },

  fanout(runs, { deltasPerRun }) {
    const chunks = textScript(textDeltas(deltasPerRun))
    // Every run's model answers with the same script, one part per pull from its own generator.
    const model = new MockLanguageModelV3({ provider: 'bench', modelId: 'bench-1', doStream: async () => stream(chunks) })
    return async () => {
      const all = []
      for (let i = 0; i < runs; i++) all.push(consume(streamText({ model, system: instructions, messages: [prompt] })))
      const results = await Promise.all(all)
      model.doStreamCalls.length = 0
      await nextTurn()
      return { completed: results.filter((r) => r.text.length === deltasPerRun * 4).length, live: () => null }
    }
  },

  parallel(calls, { toolMs }) {
    const first = [
      ...head(),
      ...Array.from({ length: calls }, (_, i) => toolParts(`c${i}`, 'sleep', [JSON.stringify({ i })], JSON.stringify({ i }))).flat(),
      { type: 'finish', usage: usage(calls), finishReason: { unified: 'tool-calls', raw: 'tool_use' } },
    ]
    const mock = scriptedModel([first, textScript(['done'])])
    const tools = { sleep: sleeper(toolMs) }
    // Tool calls run concurrently by default (toolCallConcurrency: unlimited).
    return () => run(mock, { messages: [prompt], tools, stopWhen: stepCountIs(3) })
  },
}
