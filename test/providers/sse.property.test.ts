/**
 * The SSE decoder (`sse.ts`) wraps eventsource-parser with what the adapters need (bytes in, a sink
 * or an array out, an event that lacks its closing blank line dispatched at the end, a size bound):
 * for any stream, cut anywhere into network chunks, it must give the events eventsource-parser gives
 * the whole stream (its `event` and `data`), and stop at the same size bound.
 */
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { createParser } from 'eventsource-parser'
import { SseDecoder, type SseEvent } from '../../src/providers/sse.js'

/** What eventsource-parser makes of the chunks, fed directly. */
function reference(chunks: readonly string[]): Array<{ event?: string; data: string }> {
  const out: Array<{ event?: string; data: string }> = []
  const parser = createParser({ onEvent: (m) => void out.push(m.event === undefined ? { data: m.data } : { event: m.event, data: m.data }) })
  let last = '\n'
  for (const c of chunks)
    if (c !== '') {
      last = c[c.length - 1]!
      parser.feed(c)
    }
  if (last === '\n' || last === '\r') parser.feed('\n\n')
  return out
}

function decoded(chunks: readonly string[]): Array<{ event?: string; data: string }> {
  const d = new SseDecoder()
  const out: SseEvent[] = []
  for (const c of chunks) out.push(...d.push(c))
  out.push(...d.end())
  return out.map((e) => (e.event === undefined ? { data: e.data } : { event: e.event, data: e.data }))
}

/** Lines of the forms servers send, and some they should not. */
const line = fc.oneof(
  fc.constantFrom('', 'data: x', 'data:x', 'data:  two spaces', 'data', 'data:', 'event: ping', 'event:', 'event', ': comment', ':', 'id: 7', 'retry: 10', 'retry: x', 'other: y', 'nocolon', 'data: {"a":1}'),
  fc.string({ maxLength: 12 }).map((s) => `data: ${s}`),
  fc.string({ maxLength: 12 }).map((s) => `event: ${s}`),
  fc.string({ maxLength: 12 }),
)
const ending = fc.constantFrom('\n', '\r\n', '\r', '\n\n')
const stream = fc.array(fc.tuple(line, ending), { maxLength: 30 }).map((ls) => ls.map(([l, e]) => l + e).join(''))

/** `text` cut at the given positions. */
function cut(text: string, at: readonly number[]): string[] {
  const points = [...new Set(at.map((p) => p % (text.length + 1)))].sort((a, b) => a - b)
  const out: string[] = []
  let from = 0
  for (const p of points) {
    out.push(text.slice(from, p))
    from = p
  }
  out.push(text.slice(from))
  return out
}

describe('SseDecoder', () => {
  it('gives the events eventsource-parser gives, for any stream cut anywhere', () => {
    fc.assert(
      fc.property(stream, fc.array(fc.nat(), { maxLength: 8 }), (text, at) => {
        const chunks = cut(text, at)
        expect(decoded(chunks)).toEqual(reference(chunks))
      }),
      { numRuns: 2000 },
    )
  })

  it('stops at maxEventSize: an endless line, or an event of many data lines', () => {
    const long = new SseDecoder({ maxEventSize: 100, provider: 'p' })
    expect(long.push('data: {"a":1}\n\ndata: ' + 'x'.repeat(50))).toEqual([{ event: undefined, data: '{"a":1}' }])
    expect(long.error).toBeUndefined()
    expect(long.push('y'.repeat(60))).toEqual([])
    expect(long.error?.kind).toBe('protocol')
    expect(long.error?.message).toContain('maximum size of 100 characters')
    expect(long.push('\n\n')).toEqual([])
    const many = new SseDecoder({ maxEventSize: 100 })
    for (let i = 0; i < 20 && many.error === undefined; i++) many.push('data: 0123456789\n')
    expect(many.error?.kind).toBe('protocol')
  })

  it('keeps responses apart: interleaved, abandoned mid-event, or after a sink that threw (parsers are reused)', () => {
    const a = new SseDecoder()
    const b = new SseDecoder()
    expect(a.push('event: x\ndata: a1')).toEqual([])
    expect(b.push('data: b1\n\ndata: b2')).toEqual([{ event: undefined, data: 'b1' }])
    expect(a.push('\n\n')).toEqual([{ event: 'x', data: 'a1' }])
    expect(b.end()).toEqual([])
    expect(a.end()).toEqual([])
    // Ended inside a line (a truncated event, dropped): the next response starts clean.
    const cutOff = new SseDecoder()
    expect(cutOff.push('event: y\ndata: partial\nda')).toEqual([])
    expect(cutOff.end()).toEqual([])
    const next = new SseDecoder()
    expect(next.push('data: n\n\n')).toEqual([{ event: undefined, data: 'n' }])
    expect(next.end()).toEqual([])
    // Abandoned mid-event (never ended): nothing of it reaches a later response.
    new SseDecoder().push('event: z\ndata: left')
    const after = new SseDecoder()
    expect([...after.push('data: m\n\n'), ...after.end()]).toEqual([{ event: undefined, data: 'm' }])
    // A sink that throws stops its decoder; the next one is not disturbed.
    const thrower = new SseDecoder({}, { sseEvent: () => { throw new Error('boom') } })
    expect(() => thrower.push('data: 1\n\ndata: 2\n\n')).toThrow('boom')
    const later = new SseDecoder()
    expect([...later.push('data: k\n\n'), ...later.end()]).toEqual([{ event: undefined, data: 'k' }])
  })

  it('decodes UTF-8 cut inside a character, and drops a line cut off at the end', () => {
    const bytes = new TextEncoder().encode('event: e\ndata: héllo ✓\n\ndata: cut')
    const d = new SseDecoder()
    const out = [...d.push(bytes.slice(0, 20)), ...d.push(bytes.slice(20)), ...d.end()]
    expect(out.map((e) => ({ ...e }))).toEqual([{ event: 'e', data: 'héllo ✓' }])
  })
})
