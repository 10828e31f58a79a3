/**
 * The Chat Completions scan (`openai-chat-scan.ts`) reads content and argument events without
 * `JSON.parse`: it must give exactly what parsing the event gives — the same chunks, the same errors.
 */
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { OpenAIChatDecoder } from '../../src/providers/openai-chat-decoder.js'
import { ChatScan } from '../../src/providers/openai-chat-scan.js'

const P = '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1770933892,"model":"gpt-x","service_tier":"default","system_fingerprint":"fp_1","choices":['
const choice = (delta: string, finish = 'null'): string => `{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finish}}`
const event = (c: string, tail = ',"usage":null,"obfuscation":"abc"}'): string => `${P}${c}]${tail}`
const content = (raw: string, tail?: string): string => event(choice(`{"content":"${raw}"}`), tail)
const args = (index: string, raw: string, tail?: string): string => event(choice(`{"tool_calls":[{"index":${index},"function":{"arguments":"${raw}"}}]}`), tail)

/** A decoder that has started (its first event parsed) with call 0 announced. */
function opened(): OpenAIChatDecoder {
  const d = new OpenAIChatDecoder()
  d.event({ data: event(choice('{"role":"assistant","content":"","refusal":null}')) })
  d.event({ data: event(choice('{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]}')) })
  return d
}

function outcome(d: OpenAIChatDecoder, data: string): unknown {
  try {
    return d.event({ data })
  } catch (error) {
    return `error: ${(error as Error).message}`
  }
}

/** Scanned and parsed (a leading space is trimmed by the decoder, and defeats the scan). */
function both(data: string): [unknown, unknown] {
  return [outcome(opened(), data), outcome(opened(), ` ${data}`)]
}

describe('the Chat Completions scan', () => {
  it('reads content and argument fragments in the compact form', () => {
    const scan = new ChatScan()
    const first = event(choice('{"role":"assistant","content":""}'))
    scan.learn(first, JSON.parse(first))
    expect(scan.scan(content('hi'))).toBe('hi')
    expect(scan.callIndex).toBe(-1)
    expect(scan.scan(args('2', 'x\\\\y', ',"usage":null}'))).toBe('x\\y')
    expect(scan.callIndex).toBe(2)
    expect(scan.scan(content('a"b'))).toBeUndefined()
    expect(opened().event({ data: content('hi') })).toEqual([{ type: 'textDelta', text: 'hi' }])
    expect(opened().event({ data: content('a\\"b\\n', ',"usage":null}') })).toEqual([{ type: 'textDelta', text: 'a"b\n' }])
    expect(opened().event({ data: args('0', '{\\"v\\"') })).toEqual([{ type: 'toolUseArgsDelta', id: 'call_1', fragment: '{"v"' }])
  })

  it('gives what parsing gives, for any strings and forms', () => {
    const raw = fc.oneof(
      fc.string({ unit: 'binary' }),
      fc.string({ unit: fc.constantFrom('a', '"', '\\', 'n', 'u', '0', '\n', '\u0000', '}', ']', ',', ' ') }),
      fc.string({ unit: 'binary' }).map((s) => JSON.stringify(s).slice(1, -1)),
      fc.constantFrom('a"},"logprobs":null,"finish_reason":"stop"}],"usage":null,"obfuscation":"x', 'a","refusal":"no'),
    )
    const index = fc.constantFrom('0', '1', '00', '01', '')
    const tail = fc.constantFrom(',"usage":null,"obfuscation":"abc"}', ',"usage":null}', ']}', ',"usage":{"prompt_tokens":3}}', ',"usage":null,"obfuscation":"a\\"b"}', ',"usage":null,"obfuscation":"a"b"}', ',"usage":null,"obfuscation":"x"} ')
    fc.assert(
      fc.property(raw, index, tail, fc.boolean(), (r, i, t, isArgs) => {
        const data = isArgs ? args(i, r, t) : content(r, t)
        const [scanned, parsed] = both(data)
        expect(scanned).toEqual(parsed)
      }),
      { numRuns: 3000 },
    )
  })

  it('events of other forms, or under an error event name, are parsed whole', () => {
    for (const data of [
      event(choice('{"content":"a"}', '"stop"')),
      event(choice('{"content":"a","refusal":"r"}')),
      `${P.replace('"gpt-x"', '"gpt-y"')}${choice('{"content":"a"}')}],"usage":null}`,
      `{"error":{"message":"boom"},${P.slice(1)}${choice('{"content":"a"}')}],"usage":null}`,
      args('1', 'x'),
    ]) {
      const [scanned, parsed] = both(data)
      expect(scanned).toEqual(parsed)
    }
    const d = opened()
    expect(() => d.event({ event: 'error', data: content('a') })).toThrow()
  })

  it('nothing is scanned after [DONE]', () => {
    const d = opened()
    d.event({ data: event(choice('{}', '"stop"')) })
    d.event({ data: '[DONE]' })
    expect(d.event({ data: content('late') })).toEqual([])
  })
})
