// The RxJS floor: `from(asyncSource(…))` (RxJS's conversion of the shared async generator) + `scan`,
// doing only what the scenario needs.
import { from, scan, last, lastValueFrom } from 'rxjs'
import { asyncSource, textDeltas, toolTurn } from '../inputs.mjs'

export const name = 'rx-floor'

const concatText = async (deltas) => {
  const text = await lastValueFrom(from(asyncSource(deltas)).pipe(scan((acc, d) => acc + d, ''), last()))
  return { text, toolResults: 0 }
}

const countText = async (deltas) => {
  const textLength = await lastValueFrom(from(asyncSource(deltas)).pipe(scan((acc, d) => acc + d.length, 0), last()))
  return { textLength, toolResults: 0 }
}

export const scenarios = {
  text(n, { keepText = true } = {}) {
    const deltas = textDeltas(n)
    return keepText ? () => concatText(deltas) : () => countText(deltas)
  },

  tools(turns) {
    const scripts = Array.from({ length: turns }, (_, turn) => {
      const { text, toolCalls } = toolTurn(turn)
      return [
        ...text.map((t) => ({ type: 'text', text: t })),
        ...toolCalls.flatMap((c) => [{ type: 'start', id: c.id }, ...c.fragments.map((f) => ({ type: 'args', id: c.id, f })), { type: 'end', id: c.id }]),
      ]
    })
    return async () => {
      let toolResults = 0
      let text = ''
      for (const script of scripts) {
        const turn = await lastValueFrom(
          from(asyncSource(script)).pipe(
            scan(
              (acc, c) => {
                if (c.type === 'text') acc.text += c.text
                else if (c.type === 'start') acc.args.set(c.id, '')
                else if (c.type === 'args') acc.args.set(c.id, acc.args.get(c.id) + c.f)
                else acc.calls.push(JSON.parse(acc.args.get(c.id)))
                return acc
              },
              { text: '', args: new Map(), calls: [] },
            ),
          ),
        )
        text += turn.text
        toolResults += turn.calls.length
      }
      return { text, toolResults }
    }
  },

  long(count, { deltas }) {
    const d = textDeltas(deltas)
    return () => concatText(d)
  },
}
