/**
 * Tool-call arguments while they stream: parsed from the fragments so far
 * (with partial-json) when a snapshot's `arguments` are read, never when
 * nobody reads them; final arguments parsed strictly, as before; hostile
 * fragments bounded.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import fc from 'fast-check'
import * as t from 'io-ts'
import { Agent, agentLoop, defineTool, type AgentEvent, type AssistantMessage, type ToolCallContent } from '../src/index.js'
import { chunk, scriptedModel, reply } from '../marbles/index.js'
import { MessageFold, MessageUpdate } from '../src/stream/message-fold.js'
import { MAX_PARTIAL_ARGUMENT_CHARS, partialArguments } from '../src/stream/partial-arguments.js'
import { context, hello } from './helpers.js'

const { parseCalls } = vi.hoisted(() => ({ parseCalls: [] as string[] }))
vi.mock('partial-json', async (importOriginal) => {
  const original = await importOriginal<typeof import('partial-json')>()
  return {
    ...original,
    parse: (text: string, allow?: number) => {
      parseCalls.push(text)
      return original.parse(text, allow)
    },
  }
})
afterEach(() => {
  parseCalls.length = 0
})

const writeFile = defineTool({
  name: 'write_file',
  description: 'Writes a file.',
  parameters: t.type({ path: t.string, content: t.string }),
  execute: ({ path }) => `wrote ${path}`,
})

/** A write_file call streamed in these fragments, then a text answer. */
const script = (fragments: readonly string[]) => [
  [chunk.start(), chunk.toolStart('c1', 'write_file'), ...fragments.map((f) => chunk.args('c1', f)), chunk.toolEnd('c1'), chunk.stop('toolUse')],
  reply.text('done'),
]
const fragments = ['{"pa', 'th": "/tm', 'p/a.txt", "con', 'tent": "hel', 'lo"}']

const callOf = (message: AssistantMessage | undefined): ToolCallContent | undefined => message?.content.find((c): c is ToolCallContent => c.type === 'toolCall')

describe('a UI reading the streaming message', () => {
  it('sees the arguments grow in state.streamMessage, then the strict final ones', async () => {
    const { model, streamFn } = scriptedModel(script(fragments))
    const agent = new Agent({ systemPrompt: 's', model, streamFn, tools: [writeFile] })
    const seen: unknown[] = []
    agent.state$.subscribe((state) => {
      const call = callOf(state.streamMessage)
      if (call !== undefined) seen.push(call.arguments)
    })
    await agent.prompt('write it')
    expect(seen).toEqual([
      {},
      {},
      { path: '/tm' },
      { path: '/tmp/a.txt' },
      { path: '/tmp/a.txt', content: 'hel' },
      { path: '/tmp/a.txt', content: 'hello' },
      { path: '/tmp/a.txt', content: 'hello' },
    ])
    const final = callOf(agent.state.messages.find((m): m is AssistantMessage => m.role === 'assistant'))
    expect(final).toStrictEqual({ type: 'toolCall', id: 'c1', name: 'write_file', arguments: { path: '/tmp/a.txt', content: 'hello' } })
    expect(Object.isFrozen(seen[3])).toBe(true)
  })

  it('sees them on messageUpdate events, and in their JSON', async () => {
    const { model, streamFn } = scriptedModel(script(fragments))
    const paths: unknown[] = []
    const json: string[] = []
    agentLoop(hello, context([writeFile]), { model, streamFn }).subscribe((e: AgentEvent) => {
      if (e.type !== 'messageUpdate' || e.chunk.type !== 'toolUseArgsDelta') return
      paths.push(callOf(e.message)?.arguments['path'])
      json.push(JSON.stringify(callOf(e.message)))
    })
    expect(paths).toEqual([undefined, '/tm', '/tmp/a.txt', '/tmp/a.txt', '/tmp/a.txt'])
    expect(JSON.parse(json[1]!)).toEqual({ type: 'toolCall', id: 'c1', name: 'write_file', arguments: { path: '/tm' }, partialJson: '{"path": "/tm' })
  })

  it('a snapshot read twice parses once', () => {
    const fold = new MessageFold({ provider: 'p', modelId: 'm', thinkingLevel: 'off' }, 0)
    fold.push(chunk.start())
    fold.push(chunk.toolStart('c1', 'write_file'))
    const update = fold.push(chunk.args('c1', '{"path": "/x')) as MessageUpdate
    const call = callOf(update.message)!
    expect(call.arguments).toEqual({ path: '/x' })
    expect(call.arguments).toBe(call.arguments)
    expect(callOf(update.message)).toBe(call)
    expect(parseCalls).toEqual(['{"path": "/x'])
  })
})

describe('nobody reads the arguments', () => {
  it('a loop whose events are not read never runs the partial parser', () => {
    const { model, streamFn } = scriptedModel(script(fragments))
    const events: AgentEvent[] = []
    agentLoop(hello, context([writeFile]), { model, streamFn }).subscribe((e) => events.push(e))
    expect(events.at(-1)?.type).toBe('agentEnd')
    expect(parseCalls).toEqual([])
  })

  it('an Agent, which keeps every snapshot in its state, never runs it either unless arguments are read', async () => {
    const { model, streamFn } = scriptedModel(script(fragments))
    const agent = new Agent({ systemPrompt: 's', model, streamFn, tools: [writeFile] })
    let snapshots = 0
    agent.state$.subscribe((state) => state.streamMessage !== undefined && snapshots++)
    await agent.prompt('write it')
    expect(snapshots).toBeGreaterThan(fragments.length)
    expect(parseCalls).toEqual([])
    // The arguments a reader reads: parsed then, from the text so far.
    expect(callOf(agent.state.messages[1] as AssistantMessage)?.arguments).toEqual({ path: '/tmp/a.txt', content: 'hello' })
    expect(parseCalls).toEqual([])
  })
})

describe('snapshots rebuilt out of order (immer)', () => {
  it('do not run the parser until their arguments are read, and then once per snapshot read', () => {
    const fold = new MessageFold({ provider: 'p', modelId: 'm', thinkingLevel: 'off' }, 0)
    fold.push(chunk.start())
    fold.push(chunk.toolStart('c1', 'write_file'))
    const updates = ['{"path":', ' "/a', '", "content": "x', 'y"}'].map((f) => fold.push(chunk.args('c1', f)) as MessageUpdate)
    fold.push(chunk.toolEnd('c1'))
    // The first, then the newest, then back: the middle ones are produced by immer from the
    // first snapshot (whose streaming block has a lazy getter) and the chunks after it.
    const messages = [0, 3, 2, 1].map((i) => updates[i]!.message)
    expect(messages.map((m) => callOf(m)?.partialJson)).toEqual(['{"path":', '{"path": "/a", "content": "xy"}', '{"path": "/a", "content": "x', '{"path": "/a'])
    expect(parseCalls).toEqual([])
    expect(messages.map((m) => callOf(m)?.arguments)).toEqual([{}, { path: '/a', content: 'xy' }, { path: '/a', content: 'x' }, { path: '/a' }])
    expect(parseCalls).toHaveLength(4)
  })
})

describe('final arguments stay strict', () => {
  it('JSON that partial-json accepts but JSON.parse rejects is a parse error at the end', async () => {
    const { model, streamFn } = scriptedModel(script(['{"path": "/a", ', '"content": "x",}']))
    const seen: unknown[] = []
    const events: AgentEvent[] = []
    agentLoop(hello, context([writeFile]), { model, streamFn }).subscribe((e) => {
      events.push(e)
      if (e.type === 'messageUpdate' && e.chunk.type === 'toolUseArgsDelta') seen.push(callOf(e.message)?.arguments)
    })
    expect(seen).toEqual([{ path: '/a' }, { path: '/a', content: 'x' }])
    const end = events.find((e): e is Extract<AgentEvent, { type: 'messageEnd' }> => e.type === 'messageEnd' && e.message.role === 'assistant')!
    const call = callOf(end.message as AssistantMessage)!
    expect(call.arguments).toEqual({})
    expect(call.parseError).toMatch(/^arguments are not valid JSON/)
  })

  it('a call cut off by the end of the stream keeps its text and no arguments in the final message', () => {
    const fold = new MessageFold({ provider: 'p', modelId: 'm', thinkingLevel: 'off' }, 0)
    fold.push(chunk.start())
    fold.push(chunk.toolStart('c1', 'write_file'))
    const update = fold.push(chunk.args('c1', '{"path": "/x", "cont')) as MessageUpdate
    expect(callOf(update.message)?.arguments).toEqual({ path: '/x' })
    const final = fold.finish({ reason: 'error', message: 'connection lost' })
    expect(callOf(final)).toStrictEqual({ type: 'toolCall', id: 'c1', name: 'write_file', arguments: {}, partialJson: '{"path": "/x", "cont' })
    expect(Object.getOwnPropertyDescriptor(callOf(final), 'arguments')?.get).toBeUndefined()
  })
})

describe('hostile fragments', () => {
  it('deep nesting is cut at the argument depth limit: no stack overflow, a bounded view', () => {
    const deep = `{"a": ${'['.repeat(200_000)}`
    const args = partialArguments(deep, 64)
    let depth = 1
    for (let node: unknown = args['a']; Array.isArray(node); node = node[0]) depth++
    expect(depth).toBe(64)
    expect(parseCalls[0]!.length).toBeLessThan(80)
  })

  it('a huge argument is parsed up to a bound per read, and completely at the end', () => {
    const content = 'x'.repeat(3 * MAX_PARTIAL_ARGUMENT_CHARS)
    const fold = new MessageFold({ provider: 'p', modelId: 'm', thinkingLevel: 'off' }, 0)
    fold.push(chunk.start())
    fold.push(chunk.toolStart('c1', 'write_file'))
    fold.push(chunk.args('c1', '{"path": "/big", "content": "'))
    const update = fold.push(chunk.args('c1', content)) as MessageUpdate
    const partial = callOf(update.message)!.arguments
    expect(partial['path']).toBe('/big')
    expect((partial['content'] as string).length).toBeLessThan(MAX_PARTIAL_ARGUMENT_CHARS)
    expect(parseCalls.map((text) => text.length)).toEqual([MAX_PARTIAL_ARGUMENT_CHARS])
    fold.push(chunk.args('c1', '"}'))
    fold.push(chunk.toolEnd('c1'))
    fold.push(chunk.stop('toolUse'))
    expect(callOf(fold.finish())!.arguments['content']).toBe(content)
  })

  it('a "__proto__" key stays an own key, as JSON.parse keeps it', () => {
    const args = partialArguments('{"__proto__": {"polluted": true}, "a": {"__proto__": null}, "b": "x', 64)
    expect(Object.getPrototypeOf(args)).toBe(Object.prototype)
    // Restored after the parse, so it comes last among the keys.
    expect(Object.keys(args)).toEqual(['a', 'b', '__proto__'])
    expect(Object.getOwnPropertyDescriptor(args, '__proto__')?.value).toEqual({ polluted: true })
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined()
    expect(Object.isFrozen(args['a'])).toBe(true)
  })

  it('malformed or non-object text reads as no arguments, without throwing', () => {
    for (const text of ['', '   ', '[1, 2', '"str', '{"a": 1 "b"', '{"a": tru}', '}{', '{"a": -']) {
      expect(typeof partialArguments(text, 64)).toBe('object')
    }
    expect(partialArguments('[1, 2', 64)).toEqual({})
  })
})

/** Whether `partial` could grow into `whole`: keys a subset, arrays shorter, strings a prefix, scalars equal. */
function grows(partial: unknown, whole: unknown): boolean {
  if (typeof partial === 'string') return typeof whole === 'string' && whole.startsWith(partial)
  if (Array.isArray(partial)) {
    return Array.isArray(whole) && partial.length <= whole.length && partial.every((p, i) => grows(p, whole[i]))
  }
  if (typeof partial === 'object' && partial !== null) {
    if (typeof whole !== 'object' || whole === null || Array.isArray(whole)) return false
    return Object.keys(partial).every((k) => Object.hasOwn(whole, k) && grows((partial as Record<string, unknown>)[k], (whole as Record<string, unknown>)[k]))
  }
  return Object.is(partial, whole)
}

describe('property: any split of valid JSON, read in any order', () => {
  const argumentsArb = fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 4 }), { maxKeys: 6 })

  it('each partial grows into the next and into the final, and the final equals JSON.parse', () => {
    fc.assert(
      fc.property(argumentsArb, fc.boolean(), fc.array(fc.nat(), { maxLength: 12 }), fc.array(fc.nat()), (args, pretty, cuts, order) => {
        const text = pretty ? JSON.stringify(args, null, 2) : JSON.stringify(args)
        const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b)
        const pieces = [0, ...points, text.length].slice(1).map((end, i, ends) => text.slice(i === 0 ? 0 : ends[i - 1], end)).filter((p) => p !== '')
        const fold = new MessageFold({ provider: 'p', modelId: 'm', thinkingLevel: 'off' }, 0)
        fold.push(chunk.start())
        fold.push(chunk.toolStart('c1', 'f'))
        const updates = pieces.map((p) => fold.push(chunk.args('c1', p)) as MessageUpdate)
        fold.push(chunk.toolEnd('c1'))
        fold.push(chunk.stop('toolUse'))
        // Read in a random order: older snapshots are then rebuilt from newer memos.
        const partials: unknown[] = new Array(updates.length)
        const indices = updates.map((_, i) => i)
        for (const [k, o] of order.entries()) {
          const i = k % indices.length
          const j = o % indices.length
          ;[indices[i], indices[j]] = [indices[j]!, indices[i]!]
        }
        for (const i of indices) partials[i] = callOf(updates[i]!.message)!.arguments
        const final = callOf(fold.finish())!.arguments
        expect(final).toEqual(JSON.parse(text))
        for (let i = 0; i < partials.length; i++) {
          expect(grows(partials[i], final)).toBe(true)
          if (i > 0) expect(grows(partials[i - 1], partials[i])).toBe(true)
        }
        // The whole text, before its end: everything but what JSON.parse alone can know is complete.
        if (partials.length > 0) expect(grows(partials.at(-1), final)).toBe(true)
      }),
      { numRuns: 300 },
    )
  })
})
