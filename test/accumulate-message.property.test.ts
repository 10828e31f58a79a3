/**
 * Properties of accumulateMessage: how a response is chunked or interleaved
 * never changes the message it folds into.
 */
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { from, toArray } from 'rxjs'
import { accumulateMessage } from '../operators/accumulate-message.js'
import { chunk } from '../marbles/chunks.js'
import type { ProviderChunk } from '../src/types/chunk.js'
import type { AssistantStreamEvent } from '../src/types/event.js'
import type { AssistantMessage } from '../src/types/message.js'
import type { ToolCallContent } from '../src/types/content.js'
import { modelSpec } from '../src/types/model.js'
import { piecesAt } from './arbitraries.js'

const model = modelSpec('p', 'm', { cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } })

/** Subscribes synchronously and returns every event. */
function collect(chunks: readonly ProviderChunk[]): AssistantStreamEvent[] {
  let events: AssistantStreamEvent[] | undefined
  from(chunks)
    .pipe(accumulateMessage({ model, now: () => 0 }), toArray())
    .subscribe((e) => (events = e))
  if (events === undefined) throw new Error('the operator did not complete synchronously')
  return events
}

function finalMessage(chunks: readonly ProviderChunk[]): AssistantMessage {
  const last = collect(chunks).at(-1)
  if (last?.type !== 'messageEnd') throw new Error(`last event is ${String(last?.type)}, not messageEnd`)
  return last.message
}

/** `text` cut at `cuts` (see `piecesAt`). */
const splitAt = (text: string, cuts: readonly number[]): string[] => piecesAt(text.length, cuts, (from, to) => text.slice(from, to))

/**
 * A merge of `queues` keeping each queue's own order: at each step, `picks`
 * names the queue to take from (the next non-empty one if that is empty);
 * when `picks` runs out, queues are drained in order. Every merge is reachable.
 */
function merge<T>(queues: readonly (readonly T[])[], picks: readonly number[]): T[] {
  const rest = queues.map((q) => [...q])
  const out: T[] = []
  let k = 0
  while (rest.some((q) => q.length > 0)) {
    const first = (picks[k++] ?? 0) % rest.length
    for (let j = 0; j < rest.length; j++) {
      const q = rest[(first + j) % rest.length]!
      if (q.length > 0) {
        out.push(q.shift()!)
        break
      }
    }
  }
  return out
}

interface Call {
  readonly id: string
  readonly name: string
  readonly json: string
  readonly cuts: readonly number[]
}

const callArb: fc.Arbitrary<Omit<Call, 'id'>> = fc.record({
  name: fc.string({ maxLength: 8 }),
  json: fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }).map((d) => JSON.stringify(d)),
  cuts: fc.array(fc.nat(), { maxLength: 5 }),
})

const callsArb: fc.Arbitrary<Call[]> = fc
  .uniqueArray(fc.tuple(fc.string({ minLength: 1, maxLength: 6 }), callArb), { minLength: 1, maxLength: 4, selector: ([id]) => id })
  .map((pairs) => pairs.map(([id, c]) => ({ id, ...c })))

/** One call's chunks, in its own order: start, fragments, end. */
const callChunks = (c: Call): ProviderChunk[] => [
  chunk.toolStart(c.id, c.name),
  ...splitAt(c.json, c.cuts).map((f) => chunk.args(c.id, f)),
  chunk.toolEnd(c.id),
]

const picksArb = fc.array(fc.nat({ max: 7 }), { maxLength: 48 })

const toolCalls = (m: AssistantMessage): ToolCallContent[] => m.content.filter((b): b is ToolCallContent => b.type === 'toolCall')

describe('accumulateMessage properties', () => {
  it('any split of a text into deltas gives the same message as one delta', () => {
    // Cuts are by UTF-16 code unit, so emoji and combining sequences get split mid-character too.
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 30 }), fc.array(fc.nat(), { maxLength: 12 }), fc.boolean(), (text, cuts, withUsage) => {
        const tail = withUsage ? [chunk.stop(), chunk.usage({ input: 7, output: 3 })] : [chunk.stop()]
        const deltas = splitAt(text, cuts)
        expect(deltas.join('')).toBe(text)
        const split = finalMessage([chunk.start(), ...deltas.map(chunk.text), ...tail])
        const single = finalMessage([chunk.start(), chunk.text(text), ...tail])
        expect(split.content).toEqual([{ type: 'text', text }])
        expect(split).toEqual(single)
      }),
    )
  })

  it('interleaving tool calls changes only the order of their blocks', () => {
    fc.assert(
      fc.property(callsArb, picksArb, (calls, picks) => {
        const queues = calls.map(callChunks)
        const interleaved = merge(queues, picks)
        const sequential = queues.flat()
        const mixed = finalMessage([chunk.start(), ...interleaved, chunk.stop('toolUse')])
        const plain = finalMessage([chunk.start(), ...sequential, chunk.stop('toolUse')])

        // Everything but the content is identical.
        expect({ ...mixed, content: [] }).toEqual({ ...plain, content: [] })
        expect(mixed.stopReason).toBe('toolUse')

        // Blocks follow the order of the toolUseStart chunks.
        const startOrder = interleaved.flatMap((c) => (c.type === 'toolUseStart' ? [c.id] : []))
        expect(mixed.content.map((b) => (b.type === 'toolCall' ? b.id : b.type))).toEqual(startOrder)
        expect(toolCalls(plain).map((b) => b.id)).toEqual(calls.map((c) => c.id))

        // Keyed by id, the blocks are the same, with fully parsed arguments.
        const byId = new Map(toolCalls(plain).map((b) => [b.id, b]))
        for (const block of toolCalls(mixed)) expect(block).toEqual(byId.get(block.id))
        for (const c of calls) {
          const block = toolCalls(mixed).find((b) => b.id === c.id)
          expect(block).toBeDefined()
          expect(block?.name).toBe(c.name)
          expect(block?.arguments).toEqual(JSON.parse(c.json))
          expect(block).not.toHaveProperty('partialJson')
          expect(block).not.toHaveProperty('parseError')
        }
      }),
    )
  })

  it('text deltas mixed with tool call chunks: the text blocks concatenate to the deltas', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 6 }), { maxLength: 10 }),
        fc.uniqueArray(fc.tuple(fc.string({ minLength: 1, maxLength: 4 }), callArb), { maxLength: 3, selector: ([id]) => id }),
        picksArb,
        (texts, pairs, picks) => {
          const calls: Call[] = pairs.map(([id, c]) => ({ id, ...c }))
          const chunks = merge([texts.map(chunk.text), ...calls.map(callChunks)], picks)
          const message = finalMessage([chunk.start(), ...chunks, chunk.stop('toolUse')])
          const textBlocks = message.content.flatMap((b) => (b.type === 'text' ? [b.text] : []))
          expect(textBlocks.join('')).toBe(texts.join(''))
          // Two text blocks are never adjacent: consecutive deltas extend one block.
          message.content.forEach((b, i) => {
            if (b.type === 'text') expect(message.content[i + 1]?.type).not.toBe('text')
          })
          expect(toolCalls(message)).toHaveLength(calls.length)
          for (const c of calls) expect(toolCalls(message).find((b) => b.id === c.id)?.arguments).toEqual(JSON.parse(c.json))
        },
      ),
    )
  })
})
