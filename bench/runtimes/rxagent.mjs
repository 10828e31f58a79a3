// rxagent, driven by its own mock model (the scripted model of rxagent/marbles).
import { Observable, finalize } from 'rxjs'
import * as t from 'io-ts'
import { agentLoop, defineTool, userMessage, assistantMessage } from '../../dist/src/index.js'
import { chunk, scriptedModel } from '../../dist/marbles/index.js'
import { textDeltas, toolTurn } from '../inputs.mjs'

export const name = 'rxagent'

/** Emits `items` one per microtask; stops scheduling the moment it is unsubscribed. */
const microtaskStream = (items) =>
  new Observable((subscriber) => {
    let i = 0
    let stopped = false
    const step = () => {
      if (stopped) return
      if (i < items.length) {
        subscriber.next(items[i++])
        queueMicrotask(step)
      } else subscriber.complete()
    }
    queueMicrotask(step)
    return () => {
      stopped = true
    }
  })

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

const echo = defineTool({
  name: 'echo',
  description: 'Echoes its value.',
  parameters: t.type({ value: t.string, n: t.number, tags: t.array(t.string) }),
  execute: ({ value }) => value,
})

const sleeper = (ms) =>
  defineTool({
    name: 'sleep',
    description: 'Waits.',
    parameters: t.type({ i: t.number }),
    execute: ({ i }) => new Promise((resolve) => setTimeout(() => resolve(`slept ${i}`), ms)),
  })

export const scenarios = {
  text(n, { keepText } = {}) {
    const model = scriptedModel([textScript(textDeltas(n))], { recordRequests: false })
    return () => consume(agentLoop(prompt, context(), { model: model.model, streamFn: model.streamFn }), keepText)
  },

  tools(turns) {
    const scripts = Array.from({ length: turns }, (_, turn) => toolScript(turn))
    scripts.push(textScript(['done']))
    const model = scriptedModel(scripts, { recordRequests: false })
    return () => consume(agentLoop(prompt, context([echo]), { model: model.model, streamFn: model.streamFn }))
  },

  long(count, { history, deltas }) {
    const messages = history.map((m) => (m.role === 'user' ? userMessage(m.text) : assistantMessage(m.text)))
    const model = scriptedModel([textScript(textDeltas(deltas))], { recordRequests: false })
    return () => consume(agentLoop(prompt, context([], messages), { model: model.model, streamFn: model.streamFn }))
  },

  fanout(runs, { deltasPerRun }) {
    const script = textScript(textDeltas(deltasPerRun))
    let live = 0
    // Each model emits asynchronously: one microtask per chunk, like an async iterator. (Not
    // `observeOn(asapScheduler)`: RxJS's asap queue is shared by all runs and costs O(queue) per
    // action, which turns 1,000 concurrent streams quadratic.)
    const streamFn = () => microtaskStream(script)
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

  parallel(calls, { toolMs }) {
    const first = [
      chunk.start('m', 'bench'),
      ...Array.from({ length: calls }, (_, i) => [chunk.toolStart(`c${i}`, 'sleep'), chunk.args(`c${i}`, JSON.stringify({ i })), chunk.toolEnd(`c${i}`)]).flat(),
      chunk.stop('toolUse'),
    ]
    const model = scriptedModel([first, textScript(['done'])], { recordRequests: false })
    return () => consume(agentLoop(prompt, context([sleeper(toolMs)]), { model: model.model, streamFn: model.streamFn }))
  },
}


