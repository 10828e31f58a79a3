/**
 * The generated `is` (src/types/fast-is.ts) against the codec's own: the same
 * answer for valid messages, never a yes where io-ts says no for messages
 * broken at any path (and a no only where io-ts's `validate` says no too),
 * and io-ts's own `is` where code cannot be generated.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest'
import fc from 'fast-check'
import * as t from 'io-ts'
import { compileClassify, compileIs, compileScan, knownValid } from '../src/types/fast-is.js'
import { struct, taggedUnion } from '../src/types/codec.js'
import { AgentMessage, CustomMessage, ToolResultMessage, assistantMessage } from '../src/types/message.js'
import { ToolCallContent } from '../src/types/content.js'
import { ProviderChunk } from '../src/types/chunk.js'
import { AgentEvent } from '../src/types/event.js'
import { Cost, Usage, emptyCost, emptyUsage } from '../src/types/usage.js'
import { SessionRecordBody } from '../src/agent/session-store.js'
import { Agent } from '../src/agent/index.js'
import { reply, scriptedModel } from '../marbles/index.js'
import { arbAgentEvent, arbAgentMessage, arbProviderChunk } from './arbitraries.js'
import { addTool } from './helpers.js'

const isMessage = compileIs(AgentMessage)

/** Every path into a value (object keys and array indexes), the root included. */
function pathsOf(value: unknown, prefix: readonly (string | number)[] = []): (readonly (string | number)[])[] {
  const out: (readonly (string | number)[])[] = [prefix]
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...pathsOf(v, [...prefix, i])))
  else if (typeof value === 'object' && value !== null) for (const [k, v] of Object.entries(value)) out.push(...pathsOf(v, [...prefix, k]))
  return out
}

/** A deep copy of `value` with `replacement` at `path` (or the key deleted, for `undefined` with `remove`). */
function replaced(value: unknown, path: readonly (string | number)[], replacement: unknown, remove: boolean): unknown {
  if (path.length === 0) return replacement
  const [head, ...rest] = path
  const copy = (Array.isArray(value) ? [...(value as unknown[])] : { ...(value as Record<string, unknown>) }) as Record<string | number, unknown>
  if (rest.length === 0 && remove) delete copy[head!]
  else copy[head!] = replaced(copy[head!], rest, replacement, remove)
  return copy
}

/** `u` with one value replaced (or removed) at one of its paths. */
const brokenFrom = <T>(valid: fc.Arbitrary<T>): fc.Arbitrary<unknown> =>
  valid.chain((m) =>
    fc.tuple(fc.constant(m), fc.constantFrom(...pathsOf(m)), fc.anything({ maxDepth: 2 }), fc.boolean()).map(([msg, path, value, remove]) => replaced(msg, path, value, remove)),
  )

/** The generated check against the codec's: yes on every valid value, never a yes where the codec says no, a no only where `validate` says no too. */
function holdsToCodec(name: string, codec: t.Mixed, arbitrary: fc.Arbitrary<unknown> | (() => fc.Arbitrary<unknown>), numRuns = 300): void {
  const is = compileIs(codec)
  const validOf = (): fc.Arbitrary<unknown> => (typeof arbitrary === 'function' ? arbitrary() : arbitrary)
  it(`${name}: accepts every valid value, as the codec's is does`, () => {
    const valid = validOf()
    fc.assert(
      fc.property(valid, (u) => {
        expect(codec.is(u)).toBe(true)
        expect(is(u)).toBe(true)
      }),
      { numRuns },
    )
  })
  it(`${name}: gives the codec's answer for a value broken at any path (a wrong value, a missing field, a hole)`, () => {
    fc.assert(
      fc.property(brokenFrom(validOf()), (u) => {
        const generated = is(u)
        // Never looser than the codec's `is`…
        if (generated) expect(codec.is(u)).toBe(true)
        // …and where it is stricter (io-ts's array `is` skips an array's holes, which its own
        // `validate` does not), it agrees with `validate`, which is what decides at the entries.
        if (!generated && codec.is(u)) expect(codec.validate(u, [])._tag).toBe('Left')
      }),
      { numRuns },
    )
  })
}

describe('compileIs', () => {
  it('accepts every valid message, as AgentMessage.is does', () => {
    fc.assert(
      fc.property(arbAgentMessage, (m) => {
        expect(AgentMessage.is(m)).toBe(true)
        expect(isMessage(m)).toBe(true)
      }),
    )
  })

  it('gives the codec’s answer for a message broken at any path (a wrong value, a missing field, a hole)', () => {
    fc.assert(
      fc.property(brokenFrom(arbAgentMessage), (u) => {
        const generated = isMessage(u)
        // Never looser than the codec's `is`…
        if (generated) expect(AgentMessage.is(u)).toBe(true)
        // …and where it is stricter (io-ts's array `is` skips an array's holes, which its own
        // `validate` does not), it agrees with `validate`, which is what decides at the entries.
        if (!generated && AgentMessage.is(u)) expect(AgentMessage.validate(u, [])._tag).toBe('Left')
      }),
      { numRuns: 500 },
    )
  })

  // Other tagged unions, whose members are written out inline and picked by their tag.
  holdsToCodec('ProviderChunk', ProviderChunk, arbProviderChunk)
  holdsToCodec('AgentEvent', AgentEvent, arbAgentEvent, 150)

  describe('SessionRecordBody (what a session store checks on every stored record it reads)', () => {
    // The log of a real run: init, run start, turns, messages with tool calls and results, run end.
    let entries: readonly unknown[] = []
    beforeAll(async () => {
      const model = scriptedModel([reply.toolCalls([{ id: 'c1', name: 'add', args: { a: 1, b: 2 } }], { text: 'adding' }), reply.text('3')])
      const agent = new Agent({ systemPrompt: 's', model: model.model, streamFn: model.streamFn, tools: [addTool] })
      await agent.prompt('1 + 2?')
      entries = agent.log
    })
    holdsToCodec('SessionRecordBody', SessionRecordBody, () => fc.constantFrom(...entries), 200)
  })

  describe('a tagged union written out inline', () => {
    // Members of every shape the generator writes differently: an interface, a struct (an
    // intersection whose second member is a partial), an intersection that opens with a partial
    // (its object check must not be skipped), a nested tagged union in an array, a record.
    const Leaf = taggedUnion('k', [t.type({ k: t.literal('x'), n: t.number }), t.type({ k: t.literal('y'), s: t.string })], 'Leaf')
    const Node = taggedUnion(
      'tag',
      [
        t.type({ tag: t.literal('a'), leaves: t.readonlyArray(Leaf) }),
        struct('B', { tag: t.literal('b'), s: t.string }, { n: t.number }),
        t.intersection([t.partial({ note: t.string }), t.type({ tag: t.literal('c'), counts: t.record(t.string, t.number) })]),
        // An intersection whose first member checks nothing of an object: the second must.
        t.intersection([t.unknown, t.type({ tag: t.literal('d') })]),
      ],
      'Node',
    )
    const is = compileIs(Node)
    const arbLeaf = fc.oneof(fc.record({ k: fc.constant('x'), n: fc.integer() }), fc.record({ k: fc.constant('y'), s: fc.string() }))
    const arbNode = fc.oneof(
      fc.record({ tag: fc.constant('a'), leaves: fc.array(arbLeaf, { maxLength: 3 }) }),
      fc.record({ tag: fc.constant('b'), s: fc.string(), n: fc.integer() }, { requiredKeys: ['tag', 's'] }),
      // No own `__proto__` key: the generated check is stricter there by design (it reads the prototype
      // through `__proto__`, and a value found that way goes the slow way: see `plainObject` in
      // fast-is.ts), and fast-check writes one now and then: `{"tag":"c","counts":{["__proto__"]:0}}`
      // failed "accepts every valid value" in about one run of three.
      fc.record({ tag: fc.constant('c'), counts: fc.dictionary(fc.string().filter((k) => k !== '__proto__'), fc.integer()), note: fc.string() }, { requiredKeys: ['tag', 'counts'] }),
      fc.record({ tag: fc.constant('d') }),
    )
    holdsToCodec('Node', Node, arbNode)

    it('checks only the member its tag names, and rejects an unknown or missing tag', () => {
      expect(is({ tag: 'a', leaves: [] })).toBe(true)
      // The fields of another member do not make it pass.
      expect(is({ tag: 'a', s: 'x' })).toBe(false)
      expect(is({ tag: 'b', leaves: [] })).toBe(false)
      expect(is({ tag: 'e', s: 'x' })).toBe(false)
      expect(is({ s: 'x' })).toBe(false)
      expect(is({ tag: 'a', leaves: [{ k: 'x', s: 'not n' }] })).toBe(false)
      expect(is({ tag: 'a', leaves: [{ k: 'y', s: 'ok' }, { k: 'x', n: 1 }] })).toBe(true)
      for (const u of [null, undefined, 'a', 1, [], [{ tag: 'a', leaves: [] }]]) expect(is(u)).toBe(false)
    })

    it('checks that a member is a plain object, whatever its intersection opens with', () => {
      class Counts {
        readonly tag = 'c'
        readonly counts = {}
      }
      expect(Node.is(new Counts())).toBe(true)
      expect(is(new Counts())).toBe(false)
      expect(is({ tag: 'c', counts: {} })).toBe(true)
      expect(is(Object.assign(Object.create(null) as object, { tag: 'c', counts: {} }))).toBe(true)
      // An array carrying the fields is no object of the union.
      expect(is(Object.assign([], { tag: 'c', counts: {} }))).toBe(false)
      // Nor, where the first member of an intersection checks nothing, an instance or an array.
      class D {
        readonly tag = 'd'
      }
      expect(Node.is(new D())).toBe(true)
      expect(is(new D())).toBe(false)
      expect(is(Object.assign([], { tag: 'd' }))).toBe(false)
      expect(is({ tag: 'd' })).toBe(true)
    })
  })

  it('is stricter, never looser, about objects that are not plain', () => {
    class Box {
      readonly role = 'user'
      readonly content = []
      readonly timestamp = 0
    }
    expect(AgentMessage.is(new Box())).toBe(true)
    // Rejected here, the value goes to `validate`, which decides (see input.ts).
    expect(isMessage(new Box())).toBe(false)
  })

  it('reads the prototype soundly when an own __proto__ shadows it (JSON.parse makes one)', () => {
    const user = { role: 'user', content: [{ type: 'text', text: 'hi' }], timestamp: 0 }
    // Data can shadow `__proto__` only with a value that is not Object.prototype: no yes comes of it.
    const shadowed = JSON.parse('{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":0,"__proto__":{}}') as object
    expect(Object.prototype.hasOwnProperty.call(shadowed, '__proto__')).toBe(true)
    expect(isMessage(shadowed)).toBe(false)
    const undefinedShadow = Object.defineProperty({ ...user }, '__proto__', { value: undefined, enumerable: true })
    expect(isMessage(undefinedShadow)).toBe(false)
    // An instance shadowed with undefined, a prototype-less array: no plain objects either.
    class Box {
      readonly role = 'user'
      readonly content = user.content
      readonly timestamp = 0
    }
    expect(isMessage(Object.defineProperty(new Box(), '__proto__', { value: undefined }))).toBe(false)
    expect(isMessage(Object.setPrototypeOf(Object.assign([], user), null))).toBe(false)
    // A prototype-less message is plain: accepted, as before.
    expect(isMessage(Object.assign(Object.create(null) as object, user))).toBe(true)
    expect(isMessage(user)).toBe(true)
  })

  it('checks refinements and records the way the codec does', () => {
    const isUsage = compileIs(Usage)
    const usage = { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 3, extra: { searches: 1 } }
    expect(Usage.is(usage)).toBe(isUsage(usage))
    for (const bad of [{ ...usage, input: -1 }, { ...usage, input: 1.5 }, { ...usage, extra: { searches: 'one' } }, { ...usage, extra: [] }]) {
      expect(isUsage(bad)).toBe(Usage.is(bad))
    }
  })

  it('writes out the number codecs exactly as their own is: every edge value gets the same answer', () => {
    const isUsage = compileIs(Usage)
    const isCost = compileIs(Cost)
    const usage = { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, reasoning: 0, total: 3, extra: {} }
    const cost = { input: 0.5, output: 1, cacheRead: 0, cacheWrite: 0, total: 1.5, extra: {} }
    const edges: unknown[] = [0, -0, 1, -1, 1.5, -1.5, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 2 ** 53, Number.MAX_VALUE, Number.MIN_VALUE, '1', null, undefined, true, 1n]
    for (const value of edges) {
      expect(isUsage({ ...usage, input: value })).toBe(Usage.is({ ...usage, input: value }))
      expect(isUsage({ ...usage, extra: { n: value } })).toBe(Usage.is({ ...usage, extra: { n: value } }))
      expect(isCost({ ...cost, total: value })).toBe(Cost.is({ ...cost, total: value }))
    }
    expect(isUsage({ ...usage, input: 1.5 })).toBe(false)
    expect(isCost({ ...cost, total: Number.POSITIVE_INFINITY })).toBe(false)
    expect(isCost({ ...cost, total: 1.5 })).toBe(true)
  })

  it('falls back to the codec’s own is where code cannot be generated (a CSP without unsafe-eval)', () => {
    withoutCodeGeneration(() => {
      const codec = t.type({ a: t.string })
      const spy = vi.spyOn(codec, 'is')
      const is = compileIs(codec)
      expect(is({ a: 'x' })).toBe(true)
      expect(is({ a: 1 })).toBe(false)
      expect(spy).toHaveBeenCalledTimes(2)
    })
  })
})

const TOOL = 2
const CUSTOM = 4
/** The transcript's marks, as `message-input.ts` sets them. */
const marks = new Map<t.Mixed, number>([
  [ToolCallContent, TOOL],
  [ToolResultMessage, TOOL],
  [CustomMessage, CUSTOM],
])

/** Runs `fn` where `new Function` throws, as under a CSP without unsafe-eval. */
function withoutCodeGeneration(fn: () => void): void {
  vi.stubGlobal('Function', () => {
    throw new EvalError('Code generation from strings disallowed for this context')
  })
  try {
    fn()
  } finally {
    vi.unstubAllGlobals()
  }
}

describe('compileClassify', () => {
  const classify = compileClassify(AgentMessage, marks)!
  /** What the bits must say, read from the message by hand. */
  const expected = (m: AgentMessage): number =>
    1 | (m.role === 'toolResult' || (m.role === 'assistant' && m.content.some((b) => b.type === 'toolCall')) ? TOOL : 0) | (m.role === 'custom' ? CUSTOM : 0)

  it('is generated for AgentMessage', () => {
    expect(classify).toBeTypeOf('function')
  })

  it('notes a tool call, a tool result or a custom message exactly when the message holds one', () => {
    fc.assert(
      fc.property(arbAgentMessage, (m) => {
        expect(classify(m)).toBe(expected(m))
      }),
      { numRuns: 500 },
    )
  })

  it('gives the generated check’s answer for a message broken at any path, and its bits when it passes', () => {
    fc.assert(
      fc.property(brokenFrom(arbAgentMessage), (u) => {
        const r = classify(u)
        expect(r !== false).toBe(isMessage(u))
        if (r !== false) expect(r).toBe(expected(u as AgentMessage))
      }),
      { numRuns: 500 },
    )
  })

  it('sets the bits of a marked constant taken by identity (knownValid) too', () => {
    const Box = t.type({ usage: Usage })
    const withUsage = compileClassify(Box, new Map<t.Mixed, number>([[Usage, 8]]))!
    expect(withUsage({ usage: emptyUsage })).toBe(9)
    expect(withUsage({ usage: { ...emptyUsage } })).toBe(9)
    expect(withUsage({ usage: 1 })).toBe(false)
  })

  it('is not generated where a mark could go unseen (an untagged union, a codec checked by its own is), nor without code generation', () => {
    const Inner = t.type({ a: t.string })
    expect(compileClassify(t.union([Inner, t.type({ b: t.number })]), new Map<t.Mixed, number>([[Inner, 2]]))).toBeUndefined()
    interface Tree { readonly kids: Tree[]; readonly leaf: { readonly a: string } }
    const Tree: t.Type<Tree> = t.recursion('Tree', () => t.type({ kids: t.array(Tree), leaf: Inner }))
    expect(compileClassify(t.type({ root: Tree }), new Map<t.Mixed, number>([[Inner, 2]]))).toBeUndefined()
    expect(compileClassify(t.type({ x: Inner }), new Map<t.Mixed, number>([[Inner, 2]]))!({ x: { a: '' } })).toBe(3)
    withoutCodeGeneration(() => expect(compileClassify(AgentMessage, marks)).toBeUndefined())
  })
})

describe('compileScan', () => {
  const scanner = compileScan(AgentMessage, marks)!
  const classify = compileClassify(AgentMessage, marks)!

  it('stops at the first item the check rejects, with the bits of the items before it, from any start', () => {
    const item = fc.oneof(arbAgentMessage, brokenFrom(arbAgentMessage), fc.anything({ maxDepth: 1 }))
    fc.assert(
      fc.property(fc.array(item, { maxLength: 8 }), fc.nat(9), (list, from) => {
        const start = Math.min(from, list.length)
        let end = start
        let bits = 0
        for (; end < list.length; end++) {
          const r = classify(list[end])
          if (r === false) break
          bits |= r
        }
        expect(scanner.scan(list, start)).toBe(end)
        expect(scanner.found()).toBe(bits)
      }),
      { numRuns: 500 },
    )
  })

  it('is not generated without code generation', () => {
    withoutCodeGeneration(() => expect(compileScan(AgentMessage, marks)).toBeUndefined())
  })
})

describe('compileIs: constants known to pass (knownValid)', () => {
  it('takes the shared empty usage and cost by identity, and checks any other usage and cost in full', () => {
    const m = assistantMessage('hi')
    expect(m.usage).toBe(emptyUsage)
    expect(m.cost).toBe(emptyCost)
    expect(isMessage(m)).toBe(true)
    // A copy is not the constant: it is checked, and a broken one rejected.
    expect(isMessage({ ...m, usage: { ...emptyUsage } })).toBe(true)
    expect(isMessage({ ...m, usage: { ...emptyUsage, input: -1 } })).toBe(false)
    expect(isMessage({ ...m, cost: { ...emptyCost, extra: { x: 'y' } } })).toBe(false)
  })

  it('gives the codec’s answer for messages holding the constants, broken at any path', () => {
    const withConstants = arbAgentMessage.map((m) => (m.role === 'assistant' ? { ...m, usage: emptyUsage, cost: emptyCost } : m))
    fc.assert(
      fc.property(withConstants, (m) => {
        expect(AgentMessage.is(m)).toBe(true)
        expect(isMessage(m)).toBe(true)
      }),
    )
    fc.assert(
      fc.property(brokenFrom(withConstants), (u) => {
        const generated = isMessage(u)
        if (generated) expect(AgentMessage.is(u)).toBe(true)
        if (!generated && AgentMessage.is(u)) expect(AgentMessage.validate(u, [])._tag).toBe('Left')
      }),
      { numRuns: 500 },
    )
  })

  it('refuses a constant that is not frozen all the way down, or does not pass', () => {
    const codec = t.type({ a: t.number, b: t.type({ c: t.string }) })
    expect(() => knownValid(codec, Object.freeze({ a: 1, b: { c: 'x' } }))).toThrow(/not frozen through/)
    expect(() => knownValid(codec, Object.freeze({ a: 'x', b: Object.freeze({ c: 'x' }) }))).toThrow(/does not pass/)
    const ok = Object.freeze({ a: 1, b: Object.freeze({ c: 'x' }) })
    knownValid(codec, ok)
    const is = compileIs(codec)
    expect(is(ok)).toBe(true)
    expect(is({ a: 1, b: { c: 2 } })).toBe(false)
  })
})
