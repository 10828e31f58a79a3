// pi-agent-core (@mariozechner/pi-agent-core + @mariozechner/pi-ai), driven by a scripted `streamFn`.
//
// The mock model is built on pi-ai's own stream type (`createAssistantMessageEventStream`) and pushes
// events exactly the way pi-ai's real providers do (see pi-ai/dist/providers/anthropic.js): one mutable
// `output` AssistantMessage is the `partial` of every event, text deltas are appended to the text block,
// tool-call JSON fragments are accumulated in `partialJson` and re-parsed with `parseStreamingJson` per
// fragment, and the stream ends with `done`. Like the real providers, the mock reads its events with
// `for await` from an async iterator (the provider's SSE event iterator): here the shared
// `asyncSource` generator every runtime reads. No timers anywhere.
import { Agent, agentLoop } from '@mariozechner/pi-agent-core'
import { Type, createAssistantMessageEventStream, parseStreamingJson } from '@mariozechner/pi-ai'
import { asyncSource, lastAnswerLength, streamedTextLength, textDeltas, toolTurn } from '../inputs.mjs'

export const name = 'pi-agent-core'

const model = {
  id: 'bench-1',
  name: 'Bench',
  api: 'bench',
  provider: 'bench',
  baseUrl: 'http://localhost:0',
  reasoning: false,
  input: ['text'],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 1_000_000,
  maxTokens: 16_384,
}

const emptyUsage = () => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } })

// --- scripts: the provider events of one model response, built before timing -----------------------

const textScript = (deltas) => ({ stopReason: 'stop', events: [{ t: 'textStart' }, ...deltas.map((d) => ({ t: 'text', d })), { t: 'textEnd' }] })

const toolScript = (turn) => {
  const { text, toolCalls } = toolTurn(turn)
  return {
    stopReason: 'toolUse',
    events: [
      { t: 'textStart' },
      ...text.map((d) => ({ t: 'text', d })),
      { t: 'textEnd' },
      ...toolCalls.flatMap((c) => [{ t: 'toolStart', id: c.id, name: c.name }, ...c.fragments.map((d) => ({ t: 'args', d })), { t: 'toolEnd' }]),
    ],
  }
}

/** Plays one script into a pi-ai AssistantMessageEventStream, the way pi-ai/dist/providers/anthropic.js does. */
async function play(stream, script) {
  const output = {
    role: 'assistant',
    content: [],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: emptyUsage(),
    stopReason: 'stop',
    timestamp: Date.now(),
  }
  stream.push({ type: 'start', partial: output })
  // The provider's event source: pi-ai's providers read events with `for await` from an async iterator (e.g. `iterateAnthropicEvents`).
  for await (const e of asyncSource(script.events)) {
    switch (e.t) {
      case 'textStart':
        output.content.push({ type: 'text', text: '' })
        stream.push({ type: 'text_start', contentIndex: output.content.length - 1, partial: output })
        break
      case 'text': {
        const index = output.content.length - 1
        output.content[index].text += e.d
        stream.push({ type: 'text_delta', contentIndex: index, delta: e.d, partial: output })
        break
      }
      case 'textEnd': {
        const index = output.content.length - 1
        stream.push({ type: 'text_end', contentIndex: index, content: output.content[index].text, partial: output })
        break
      }
      case 'toolStart':
        output.content.push({ type: 'toolCall', id: e.id, name: e.name, arguments: {}, partialJson: '' })
        stream.push({ type: 'toolcall_start', contentIndex: output.content.length - 1, partial: output })
        break
      case 'args': {
        const index = output.content.length - 1
        const block = output.content[index]
        block.partialJson += e.d
        block.arguments = parseStreamingJson(block.partialJson)
        stream.push({ type: 'toolcall_delta', contentIndex: index, delta: e.d, partial: output })
        break
      }
      case 'toolEnd': {
        const index = output.content.length - 1
        const block = output.content[index]
        block.arguments = parseStreamingJson(block.partialJson)
        delete block.partialJson
        stream.push({ type: 'toolcall_end', contentIndex: index, toolCall: block, partial: output })
        break
      }
    }
  }
  output.stopReason = script.stopReason
  stream.push({ type: 'done', reason: output.stopReason, message: output })
  stream.end()
}

/** A pi-agent-core `streamFn` answering call k of a run with `scripts[k]` (`repeat`: every call with `scripts[0]`). */
function scriptedStreamFn(scripts, { repeat = false } = {}) {
  let call = 0
  const streamFn = () => {
    const script = repeat ? scripts[0] : scripts[call++]
    if (script === undefined) throw new Error(`pi mock: no script for call #${call}`)
    const stream = createAssistantMessageEventStream()
    // Like the real providers: return the stream at once, push from an async task.
    void play(stream, script)
    return stream
  }
  streamFn.reset = () => {
    call = 0
  }
  return streamFn
}

// --- the agent ------------------------------------------------------------------------------------

// pi's own default (Agent's defaultConvertToLlm).
const convertToLlm = (messages) => messages.filter((m) => m.role === 'user' || m.role === 'assistant' || m.role === 'toolResult')

const prompt = () => [{ role: 'user', content: 'go', timestamp: Date.now() }]

const context = (tools = [], messages = []) => ({ systemPrompt: 'You are a benchmark.', messages, tools })

const config = { model, convertToLlm, toolExecution: 'parallel' }

/** Runs a loop to its end, consuming events the way an app would: text deltas appended (or, without `keepText`, counted), tool results counted. */
async function consume(events, keepText = true) {
  let text = ''
  let length = 0
  let toolResults = 0
  let firstDelta
  for await (const e of events) {
    if (e.type === 'message_update') {
      const a = e.assistantMessageEvent
      if (a.type === 'text_delta') {
        if (firstDelta === undefined) firstDelta = performance.now()
        if (keepText) text += a.delta
        else length += a.delta.length
      }
    } else if (e.type === 'tool_execution_end') {
      if (e.isError) throw new Error(`pi: tool ${e.toolName} failed: ${JSON.stringify(e.result?.content)}`)
      toolResults++
    }
  }
  return { text, textLength: keepText ? text.length : length, toolResults, firstDelta }
}

const run = (streamFn, ctx, keepText) => {
  streamFn.reset()
  return consume(agentLoop(prompt(), ctx, config, undefined, streamFn), keepText)
}

export const echo = {
  name: 'echo',
  label: 'Echo',
  description: 'Echoes its value.',
  parameters: Type.Object({ value: Type.String(), n: Type.Number(), tags: Type.Array(Type.String()) }),
  execute: async (_id, { value }) => ({ content: [{ type: 'text', text: value }], details: {} }),
}

const sleeper = (ms) => ({
  name: 'sleep',
  label: 'Sleep',
  description: 'Waits.',
  parameters: Type.Object({ i: Type.Number() }),
  execute: (_id, { i }) => new Promise((resolve) => setTimeout(() => resolve({ content: [{ type: 'text', text: `slept ${i}` }], details: {} }), ms)),
})

const toMessage = (m) =>
  m.role === 'user'
    ? { role: 'user', content: m.text, timestamp: 0 }
    : { role: 'assistant', content: [{ type: 'text', text: m.text }], api: model.api, provider: model.provider, model: model.id, usage: emptyUsage(), stopReason: 'stop', timestamp: 0 }

const toolScripts = (turns) => [...Array.from({ length: turns }, (_, turn) => toolScript(turn)), textScript(['done'])]

/**
 * pi's `Agent` (built before timing) with a listener that reads the streamed message on every
 * event, as a UI does (`agent.state.streamingMessage`); the run is one `prompt`.
 */
function agentRun(scripts, { tools = [], messages = [] } = {}) {
  const agent = new Agent({
    initialState: { systemPrompt: 'You are a benchmark.', model, tools, messages },
    streamFn: scriptedStreamFn(scripts),
    convertToLlm,
    toolExecution: 'parallel',
  })
  let seen = 0
  let firstDelta
  const unsubscribe = agent.subscribe(() => {
    const length = streamedTextLength(agent.state.streamingMessage)
    if (length > 0 && firstDelta === undefined) firstDelta = performance.now()
    if (length > seen) seen = length
  })
  const before = agent.state.messages.length
  return async () => {
    try {
      await agent.prompt('go')
    } finally {
      unsubscribe()
    }
    const added = agent.state.messages.slice(before)
    if (agent.state.errorMessage !== undefined) throw new Error(`pi Agent: ${agent.state.errorMessage}`)
    const toolResults = added.filter((m) => m.role === 'toolResult').length
    return { textLength: lastAnswerLength(added), toolResults, firstDelta, readerSaw: seen }
  }
}

export const scenarios = {
  text(n, { keepText } = {}) {
    const streamFn = scriptedStreamFn([textScript(textDeltas(n))])
    return () => run(streamFn, context(), keepText)
  },

  tools(turns) {
    const streamFn = scriptedStreamFn(toolScripts(turns))
    return () => run(streamFn, context([echo]))
  },

  long(count, { history, deltas }) {
    const messages = history.map(toMessage)
    const streamFn = scriptedStreamFn([textScript(textDeltas(deltas))])
    return () => run(streamFn, context([], messages))
  },

  fanout(runs, { deltasPerRun }) {
    // Every run's model answers with the same script; emission is asynchronous (an async iterator per response).
    const streamFn = scriptedStreamFn([textScript(textDeltas(deltasPerRun))], { repeat: true })
    return async () => {
      const all = []
      for (let i = 0; i < runs; i++) all.push(consume(agentLoop(prompt(), context(), config, undefined, streamFn)))
      const results = await Promise.all(all)
      return { completed: results.filter((r) => r.text.length === deltasPerRun * 4).length, live: () => null }
    }
  },

  'agent-text'(n) {
    return agentRun([textScript(textDeltas(n))])
  },

  'agent-tools'(turns) {
    return agentRun(toolScripts(turns), { tools: [echo] })
  },

  // pi's Agent has no default context transform: the whole history goes to the model.
  'agent-long'(count, { history, deltas }) {
    return agentRun([textScript(textDeltas(deltas))], { messages: history.map(toMessage) })
  },

  'agent-restore'(count, { history, deltas }) {
    return agentRun([textScript(textDeltas(deltas))], { messages: history.map(toMessage) })
  },

  parallel(calls, { toolMs }) {
    const first = {
      stopReason: 'toolUse',
      events: Array.from({ length: calls }, (_, i) => [{ t: 'toolStart', id: `c${i}`, name: 'sleep' }, { t: 'args', d: JSON.stringify({ i }) }, { t: 'toolEnd' }]).flat(),
    }
    const streamFn = scriptedStreamFn([first, textScript(['done'])])
    return () => run(streamFn, context([sleeper(toolMs)]))
  },
}
