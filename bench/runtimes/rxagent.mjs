// rxagent, driven by its own mock model (the scripted model of rxagent/marbles), reading the
// same asynchronous source as every other runtime: each scripted response is
// `fromAsyncIterable(asyncSource(chunks))`, rxagent's documented conversion of an async iterable for a
// custom streamFn (one chunk per `for await` step). Two extra, labelled rows: `textfrom` reads the same
// generator through RxJS's own `from()` (what a user who skips the helper writes; RxJS's Node build is
// ES5, its async-iterable path runs on generator helpers), and `textsync` plays the script
// synchronously (`from(array)`).
import { from, finalize } from 'rxjs'
import * as t from 'io-ts'
import { Agent, agentLoop, defineTool, fromAsyncIterable, userMessage, assistantMessage } from '../../dist/src/index.js'
import { chunk, scriptedModel } from '../../dist/marbles/index.js'
import { asyncSource, lastAnswerLength, streamedTextLength, textDeltas, toolTurn } from '../inputs.mjs'
import { durableScenarios } from '../durable.mjs'

export const name = 'rxagent'

/** The shared async source as rxagent reads it (`rxjs`: through RxJS's `from` instead). */
const play = (script, via = 'rxagent') => (via === 'rxjs' ? from(asyncSource(script)) : fromAsyncIterable(asyncSource(script)))

/** A scripted model whose call k plays `scripts[k]`: from the shared async source, or (`sync`) synchronously. */
const mockModel = (scripts, { sync = false, via = 'rxagent' } = {}) =>
  scriptedModel(sync ? scripts : scripts.map((script) => () => play(script, via)), { recordRequests: false })

const context = (tools = [], messages = []) => ({ systemPrompt: 'You are a benchmark.', messages, tools })
const prompt = userMessage('go')

const textScript = (deltas) => [chunk.start('m', 'bench'), ...deltas.map(chunk.text), chunk.stop('endTurn')]

const toolScript = (turn) => {
  const { text, toolCalls } = toolTurn(turn)
  return [
    chunk.start('m', 'bench'),
    ...text.map(chunk.text),
    ...toolCalls.flatMap((c) => [chunk.toolStart(c.id, c.name), ...c.fragments.map((f) => chunk.args(c.id, f)), chunk.toolEnd(c.id)]),
    chunk.stop('toolUse'),
  ]
}

/**
 * Runs a loop to its end, consuming events the way an app would: text deltas appended, tool
 * results counted. With `keepText` false the deltas are only counted, which leaves the runtime's
 * own cost (an app's growing string costs the same in every runtime).
 */
function consume(run$, keepText = true) {
  let text = ''
  let length = 0
  let toolResults = 0
  let firstDelta
  return new Promise((resolve, reject) =>
    run$.subscribe({
      next: (e) => {
        if (e.type === 'messageUpdate' && e.chunk.type === 'textDelta') {
          if (firstDelta === undefined) firstDelta = performance.now()
          if (keepText) text += e.chunk.text
          else length += e.chunk.text.length
        } else if (e.type === 'toolExecutionEnd') toolResults++
      },
      error: reject,
      complete: () => resolve({ text, textLength: keepText ? text.length : length, toolResults, firstDelta }),
    }),
  )
}

// A loop, not `history.map` with an arrow: the arrow (a new closure at every call) had its code
// optimized again at every timed run's input building, after each full GC (`--trace-opt`): a
// TurboFan job of 15–29 ms on a background thread, finalized inside the timed run that followed
// (its CPU time counted in process.cpuUsage, and on a loaded 2-core host it competes for a core).
// With the loop, no compile job in the timed runs. The bare floor builds no history. Inputs only:
// built before the timing, a packed array of the same messages as before.
const toMessages = (history) => {
  const out = []
  for (let i = 0; i < history.length; i++) out.push(history[i].role === 'user' ? userMessage(history[i].text) : assistantMessage(history[i].text))
  return out
}

/**
 * A UI's reader: on every change it reads the streamed message's text length (and notes when it
 * first saw text). `read` is called with the message being streamed, or undefined.
 */
function uiReader() {
  const reader = {
    seen: 0,
    updates: 0,
    firstDelta: undefined,
    read(message) {
      reader.updates++
      const length = streamedTextLength(message)
      if (length > 0 && reader.firstDelta === undefined) reader.firstDelta = performance.now()
      if (length > reader.seen) reader.seen = length
    },
  }
  return reader
}

/** `agentLoop` with the UI reader fed by `messageUpdate` events (the loop has no `state$`; this is the same data). */
function readLoop(run$) {
  const reader = uiReader()
  let answer = 0
  let toolResults = 0
  return new Promise((resolve, reject) =>
    run$.subscribe({
      next: (e) => {
        if (e.type === 'messageUpdate') reader.read(e.message)
        else if (e.type === 'messageEnd' && e.message.role === 'assistant') answer = streamedTextLength(e.message)
        else if (e.type === 'toolExecutionEnd') toolResults++
      },
      error: reject,
      complete: () => resolve({ textLength: answer, toolResults, firstDelta: reader.firstDelta, readerSaw: reader.seen }),
    }),
  )
}

/**
 * An `Agent` (built before timing) with a `state$` subscriber reading the streamed message on every
 * emission, as a UI does; the run is one `prompt`. Public API only: `new Agent`, `state$`, `prompt`, `state`.
 */
function agentRun(scripts, { tools = [], messages = [] } = {}) {
  const model = mockModel(scripts)
  return promptRun(new Agent({ systemPrompt: 'You are a benchmark.', model: model.model, streamFn: model.streamFn, tools, messages }))
}

/** One `prompt` of a built agent, read by a UI reader; a durable agent's run is done when its log is committed (`flush`). */
function promptRun(agent) {
  const reader = uiReader()
  const before = agent.state.messages.length
  const subscription = agent.state$.subscribe((state) => reader.read(state.streamMessage))
  return async () => {
    try {
      await agent.prompt('go')
      if (agent.session !== undefined) await agent.session.flush()
    } finally {
      subscription.unsubscribe()
    }
    const added = agent.state.messages.slice(before)
    const toolResults = added.filter((m) => m.role === 'toolResult').length
    return { textLength: lastAnswerLength(added), toolResults, firstDelta: reader.firstDelta, readerSaw: reader.seen }
  }
}

const toolScripts = (turns) => [...Array.from({ length: turns }, (_, turn) => toolScript(turn)), textScript(['done'])]

export const echo = defineTool({
  name: 'echo',
  description: 'Echoes its value.',
  parameters: t.type({ value: t.string, n: t.number, tags: t.array(t.string) }),
  execute: ({ value }) => value,
})

const durable = durableScenarios({ Agent, mockModel, promptRun, agentRun, toolScripts: (turns) => toolScripts(turns), textScript, echo })
/** Why a DURABLE scenario cannot run in this process (no PostgreSQL), and what to close at the end. */
export const { skip, teardown } = durable

const sleeper = (ms) =>
  defineTool({
    name: 'sleep',
    description: 'Waits.',
    parameters: t.type({ i: t.number }),
    execute: ({ i }) => new Promise((resolve) => setTimeout(() => resolve(`slept ${i}`), ms)),
  })

export const scenarios = {
  text(n, { keepText } = {}) {
    const model = mockModel([textScript(textDeltas(n))])
    return () => consume(agentLoop(prompt, context(), { model: model.model, streamFn: model.streamFn }), keepText)
  },

  /** TEXT with the async source read through RxJS's `from()`: an extra row, rxagent only. */
  textfrom(n) {
    const model = mockModel([textScript(textDeltas(n))], { via: 'rxjs' })
    return () => consume(agentLoop(prompt, context(), { model: model.model, streamFn: model.streamFn }))
  },

  /** TEXT with the script played synchronously (`from(array)`): an extra row, rxagent only. */
  textsync(n) {
    const model = mockModel([textScript(textDeltas(n))], { sync: true })
    return () => consume(agentLoop(prompt, context(), { model: model.model, streamFn: model.streamFn }))
  },

  tools(turns) {
    const model = mockModel(toolScripts(turns))
    return () => consume(agentLoop(prompt, context([echo]), { model: model.model, streamFn: model.streamFn }))
  },

  long(count, { history, deltas }) {
    const messages = toMessages(history)
    const model = mockModel([textScript(textDeltas(deltas))])
    return () => consume(agentLoop(prompt, context([], messages), { model: model.model, streamFn: model.streamFn }))
  },

  fanout(runs, { deltasPerRun }) {
    const script = textScript(textDeltas(deltasPerRun))
    let live = 0
    // Every run's model answers with the same script, each from its own async generator.
    const streamFn = () => play(script)
    const model = scriptedModel([script]).model
    const run = async () => {
      const all = []
      for (let i = 0; i < runs; i++) {
        live++
        all.push(consume(agentLoop(prompt, context(), { model, streamFn }).pipe(finalize(() => live--))))
      }
      const results = await Promise.all(all)
      return { completed: results.filter((r) => r.text.length === deltasPerRun * 4).length, live: () => live }
    }
    return run
  },

  'reader-text'(n) {
    const model = mockModel([textScript(textDeltas(n))])
    return () => readLoop(agentLoop(prompt, context(), { model: model.model, streamFn: model.streamFn }))
  },

  'reader-tools'(turns) {
    const model = mockModel(toolScripts(turns))
    return () => readLoop(agentLoop(prompt, context([echo]), { model: model.model, streamFn: model.streamFn }))
  },

  // The history is built before timing, as in `long` and every other runtime's LONG.
  'reader-long'(count, { history, deltas }) {
    const messages = toMessages(history)
    const model = mockModel([textScript(textDeltas(deltas))])
    return () => readLoop(agentLoop(prompt, context([], messages), { model: model.model, streamFn: model.streamFn }))
  },

  'agent-text'(n) {
    return agentRun([textScript(textDeltas(n))])
  },

  // DURABLE: the in-memory Agent and `Agent.fromLog`, then the same on each store (bench/durable.mjs).
  ...durable.scenarios,

  'agent-tools'(turns) {
    return agentRun(toolScripts(turns), { tools: [echo] })
  },

  // With the Agent's default context (the sliding window).
  'agent-long'(count, { history, deltas }) {
    return agentRun([textScript(textDeltas(deltas))], { messages: toMessages(history) })
  },

  // A conversation of `count` messages restored (`new Agent({ messages })`), then one short prompt.
  'agent-restore'(count, { history, deltas }) {
    return agentRun([textScript(textDeltas(deltas))], { messages: toMessages(history) })
  },

  parallel(calls, { toolMs }) {
    const first = [
      chunk.start('m', 'bench'),
      ...Array.from({ length: calls }, (_, i) => [chunk.toolStart(`c${i}`, 'sleep'), chunk.args(`c${i}`, JSON.stringify({ i })), chunk.toolEnd(`c${i}`)]).flat(),
      chunk.stop('toolUse'),
    ]
    const model = mockModel([first, textScript(['done'])])
    return () => consume(agentLoop(prompt, context([sleeper(toolMs)]), { model: model.model, streamFn: model.streamFn }))
  },
}


