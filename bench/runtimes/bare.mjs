// The floor: the shared async source (an async generator) consumed by `for await`, doing only what the scenario needs.
import { asyncSource as stream, textDeltas, toolTurn } from '../inputs.mjs'

export const name = 'bare'

async function consumeText(deltas) {
  let text = ''
  let firstDelta
  for await (const d of stream(deltas)) {
    if (firstDelta === undefined) firstDelta = performance.now()
    text += d
  }
  return { text, textLength: text.length, toolResults: 0, firstDelta }
}

async function countText(deltas) {
  let length = 0
  for await (const d of stream(deltas)) length += d.length
  return { textLength: length, toolResults: 0 }
}

export const scenarios = {
  text(n, { keepText = true } = {}) {
    const deltas = textDeltas(n)
    return keepText ? () => consumeText(deltas) : () => countText(deltas)
  },

  tools(turns) {
    const scripts = Array.from({ length: turns }, (_, turn) => {
      const { text, toolCalls } = toolTurn(turn)
      return [
        ...text.map((t) => ({ type: 'text', text: t })),
        ...toolCalls.flatMap((c) => [{ type: 'start', id: c.id, name: c.name }, ...c.fragments.map((f) => ({ type: 'args', id: c.id, f })), { type: 'end', id: c.id }]),
      ]
    })
    return async () => {
      let text = ''
      let toolResults = 0
      const transcript = []
      for (const script of scripts) {
        const args = new Map()
        const calls = []
        for await (const c of stream(script)) {
          if (c.type === 'text') text += c.text
          else if (c.type === 'start') args.set(c.id, '')
          else if (c.type === 'args') args.set(c.id, args.get(c.id) + c.f)
          else calls.push({ id: c.id, args: JSON.parse(args.get(c.id)) })
        }
        transcript.push({ role: 'assistant', calls })
        for (const call of calls) {
          transcript.push({ role: 'toolResult', id: call.id, text: call.args.value })
          toolResults++
        }
      }
      return { text, toolResults }
    }
  },

  long(count, { deltas }) {
    const d = textDeltas(deltas)
    return () => consumeText(d)
  },

  fanout(runs, { deltasPerRun }) {
    const deltas = textDeltas(deltasPerRun)
    return async () => {
      const results = await Promise.all(Array.from({ length: runs }, () => consumeText(deltas)))
      return { completed: results.filter((r) => r.text.length === deltasPerRun * 4).length, live: () => 0 }
    }
  },

  parallel(calls, { toolMs }) {
    return async () => {
      const results = await Promise.all(Array.from({ length: calls }, (_, i) => new Promise((resolve) => setTimeout(() => resolve(i), toolMs))))
      return { text: '', toolResults: results.length }
    }
  },
}
