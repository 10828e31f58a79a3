/**
 * The delta scan (`anthropic-scan.ts`) reads text and argument deltas without `JSON.parse`: it must
 * give exactly what parsing the event gives — the same chunks, the same errors — for any input.
 */
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { AnthropicDecoder } from '../../src/providers/anthropic-decoder.js'
import { scanDelta } from '../../src/providers/anthropic-scan.js'

/** A decoder with a text block at 0 and a tool call at 1 open. */
function opened(): AnthropicDecoder {
  const d = new AnthropicDecoder()
  d.event({ event: 'message_start', data: '{"type":"message_start","message":{"id":"m","model":"c","usage":{"input_tokens":1}}}' })
  d.event({ event: 'content_block_start', data: '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}' })
  d.event({ event: 'content_block_start', data: '{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}' })
  return d
}

/** What feeding `data` does: the chunks, or the error's message. */
function outcome(d: AnthropicDecoder, data: string): unknown {
  try {
    return d.event({ event: 'content_block_delta', data })
  } catch (error) {
    // The reference's data has one more character in front: positions in the message are not compared.
    return `error: ${(error as Error).message.replace(/position \d+/, 'position _').replace(/: {1,2}\{/, ': {')}`
  }
}

/** The scanned outcome and the parsed one (a leading space is JSON whitespace, and defeats the scan). */
function both(data: string): [unknown, unknown] {
  return [outcome(opened(), data), outcome(opened(), ` ${data}`)]
}

const text = (index: string, raw: string): string => `{"type":"content_block_delta","index":${index},"delta":{"type":"text_delta","text":"${raw}"}}`
const args = (index: string, raw: string): string => `{"type":"content_block_delta","index":${index},"delta":{"type":"input_json_delta","partial_json":"${raw}"}}`

describe('the Anthropic delta scan', () => {
  it('reads the compact form of text and argument deltas', () => {
    expect(scanDelta(text('0', 'abcd'))).toBe('abcd')
    expect(scanDelta(args('1', '{\\"a\\":1'))).toBe('{"a":1')
    expect(opened().event({ data: text('0', 'hi') })).toEqual([{ type: 'textDelta', text: 'hi' }])
    expect(opened().event({ data: args('1', '{\\"v\\"') })).toEqual([{ type: 'toolUseArgsDelta', id: 't', fragment: '{"v"' }])
  })

  it('leaves every other form to JSON.parse', () => {
    for (const data of [
      text('00', 'a'),
      text('01', 'a'),
      text('', 'a'),
      text('1234567890', 'a'),
      text('-1', 'a'),
      text('0', 'a"b'),
      text('0', 'a","x":"b'),
      text('0', 'a\u0001b'),
      text('0', 'a\\'),
      text('0', 'a\\x'),
      `${text('0', 'a')} `,
      text('0', 'a').replace('"text":', '"text" :'),
      '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a","extra":1}}',
    ])
      expect(scanDelta(data), data).toBeUndefined()
  })

  it('gives what parsing gives, for any string, index and kind', () => {
    const raw = fc.oneof(
      fc.string({ unit: 'binary' }),
      fc.string({ unit: fc.constantFrom('a', '"', '\\', 'n', 'u', '0', '\n', '\u0000', '}', ' ') }),
      fc.string({ unit: 'binary' }).map((s) => JSON.stringify(s).slice(1, -1)),
    )
    const index = fc.constantFrom('0', '1', '2', '00', '01', '10', '')
    fc.assert(
      fc.property(raw, index, fc.boolean(), (r, i, json) => {
        const [scanned, parsed] = both(json ? args(i, r) : text(i, r))
        expect(scanned).toEqual(parsed)
      }),
      { numRuns: 3000 },
    )
  })

  it('a delta to a block of another kind, or to none, is decided as before', () => {
    for (const data of [text('1', 'a'), args('0', 'a'), text('7', 'a'), args('7', 'a')]) {
      const [scanned, parsed] = both(data)
      expect(scanned).toEqual(parsed)
    }
  })

  it('a delta before message_start or after message_stop fails as before', () => {
    const before = new AnthropicDecoder()
    expect(() => before.event({ data: text('0', 'a') })).toThrow(/before 'message_start'/)
    const after = opened()
    after.event({ data: '{"type":"message_stop"}' })
    expect(() => after.event({ data: text('0', 'a') })).toThrow(/after 'message_stop'/)
  })
})
