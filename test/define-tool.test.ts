import { describe, it, expect } from 'vitest'
import * as t from 'io-ts'
import fc from 'fast-check'
import { isLeft, isRight, type Either } from 'fp-ts/lib/Either.js'
import { defineTool, toolResult } from '../src/tools/define-tool.js'
import { errorText } from '../src/types/codec.js'
import { withDescription } from '../src/tools/json-schema.js'
import { exactDeep } from '../src/tools/strict.js'
import { reportErrors, struct, taggedUnion } from '../src/types/codec.js'

const noop = () => 'ok'

const rightOf = <A>(result: Either<readonly string[], A>): A => {
  if (isLeft(result)) throw new Error(`expected Right, got ${result.left.join('; ')}`)
  return result.right
}
const leftOf = <A>(result: Either<readonly string[], A>): readonly string[] => {
  if (isRight(result)) throw new Error(`expected Left, got ${JSON.stringify(result.right)}`)
  return result.left
}

const ReadFileParams = t.intersection([
  t.type({ path: withDescription(t.string, 'Path of the file, relative to the workspace') }),
  t.partial({ range: withDescription(t.type({ start: t.Int, end: t.Int }), 'Lines to read, 1-based, inclusive') }),
])

const readFile = defineTool({
  name: 'read_file',
  description: 'Read a text file',
  parameters: ReadFileParams,
  execute: ({ path, range }) => `${path}:${range?.start ?? 1}`,
})

describe('defineTool: definition', () => {
  it('derives the schema of a realistic tool', () => {
    expect(readFile.schema).toEqual({
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Path of the file, relative to the workspace' },
        range: {
          type: 'object',
          properties: { start: { type: 'integer' }, end: { type: 'integer' } },
          required: ['start', 'end'],
          additionalProperties: false,
          description: 'Lines to read, 1-based, inclusive',
        },
      },
      required: ['path'],
      additionalProperties: false,
    })
  })

  it('returns a frozen tool that keeps execute and the optional fields given', () => {
    const execute = () => toolResult('done')
    const tool = defineTool({
      name: 'x',
      description: 'd',
      parameters: t.type({}),
      execute,
      timeoutMs: 5,
      needsApproval: true,
      label: 'X',
    })
    expect(Object.isFrozen(tool)).toBe(true)
    expect(tool.execute).toBe(execute)
    expect(tool).toMatchObject({ name: 'x', description: 'd', timeoutMs: 5, needsApproval: true, label: 'X' })
    expect(Object.keys(readFile)).not.toContain('timeoutMs')
    expect(readFile.execute({ path: 'a', range: { start: 3, end: 4 } as { start: t.Int; end: t.Int } }, {
      toolCallId: '1',
      signal: new AbortController().signal,
    })).toBe('a:3')
  })

  it.each(['', 'has space', 'dot.name', 'a'.repeat(65), 'ünïcode', 'semi;colon'])('rejects the name %j', (name) => {
    expect(() => defineTool({ name, description: '', parameters: t.type({}), execute: noop })).toThrow(TypeError)
    expect(() => defineTool({ name, description: '', parameters: t.type({}), execute: noop })).toThrow(/Invalid tool name/)
  })

  it.each(['a', 'A-b_9', 'a'.repeat(64)])('accepts the name %j', (name) => {
    expect(defineTool({ name, description: '', parameters: t.type({}), execute: noop }).name).toBe(name)
  })

  it('fails at definition time for unsupported parameters, naming the tool and the path', () => {
    const define = () =>
      defineTool({ name: 'schedule', description: '', parameters: t.type({ when: t.Function }), execute: noop })
    expect(define).toThrow(TypeError)
    expect(define).toThrow(/^Tool schedule: .*parameters\.when/)
    expect(() => defineTool({ name: 'n', description: '', parameters: t.string, execute: noop })).toThrow(
      /Tool n: tool parameters must be an object/,
    )
  })
})

describe('defineTool: decodeArguments', () => {
  it('decodes valid arguments', () => {
    expect(rightOf(readFile.decodeArguments({ path: 'a.ts', range: { start: 1, end: 2 } }))).toStrictEqual({
      path: 'a.ts',
      range: { start: 1, end: 2 },
    })
  })

  it('strips unknown keys at every level', () => {
    const Target = taggedUnion(
      'kind',
      [t.type({ kind: t.literal('file'), path: t.string }), t.type({ kind: t.literal('url'), url: t.string })],
      'Target',
    )
    const tool = defineTool({
      name: 'deep',
      description: '',
      parameters: t.type({
        list: t.array(t.type({ a: t.string })),
        target: Target,
        either: t.union([t.type({ n: t.number }), t.type({ s: t.string })]),
        both: struct('Both', { x: t.number }, { y: t.number }),
        map: t.record(t.string, t.type({ v: t.boolean })),
        pair: t.tuple([t.type({ p: t.null }), t.string]),
        frozen: t.readonly(t.type({ r: t.string })),
        checked: t.refinement(t.type({ lo: t.number, hi: t.number }), (o) => o.lo <= o.hi, 'Ordered'),
        exact: t.exact(t.partial({ e: t.string })),
      }),
      execute: noop,
    })
    const raw = {
      list: [{ a: 'x', junk: 1 }],
      target: { kind: 'url', url: 'u', junk: 1 },
      either: { s: 's', junk: 1 },
      both: { x: 1, y: 2, junk: 1 },
      map: { k: { v: true, junk: 1 } },
      pair: [{ p: null, junk: 1 }, 'two'],
      frozen: { r: 'r', junk: 1 },
      checked: { lo: 1, hi: 2, junk: 1 },
      exact: { junk: 1 },
      junk: 1,
    }
    expect(rightOf(tool.decodeArguments(raw))).toStrictEqual({
      list: [{ a: 'x' }],
      target: { kind: 'url', url: 'u' },
      either: { s: 's' },
      both: { x: 1, y: 2 },
      map: { k: { v: true } },
      pair: [{ p: null }, 'two'],
      frozen: { r: 'r' },
      checked: { lo: 1, hi: 2 },
      exact: {},
    })
  })

  it('strips inside recursive codecs', () => {
    interface Tree {
      name: string
      children: Tree[]
    }
    const Tree: t.Type<Tree> = t.recursion('Tree', () => t.type({ name: t.string, children: t.array(Tree) }))
    const stripped = exactDeep(Tree).decode({ name: 'a', x: 1, children: [{ name: 'b', y: 2, children: [] }] })
    expect(stripped).toStrictEqual({ _tag: 'Right', right: { name: 'a', children: [{ name: 'b', children: [] }] } })
  })

  it('lists one readable line per problem, with paths', () => {
    expect(leftOf(readFile.decodeArguments({ path: 5, range: { start: 'x', end: 1.5 } }))).toEqual([
      'at path: expected string, got 5',
      'at range.start: expected Int, got "x"',
      'at range.end: expected Int, got 1.5',
    ])
    expect(leftOf(readFile.decodeArguments({}))).toEqual(['at path: expected string, got undefined (missing)'])
    expect(leftOf(readFile.decodeArguments('nope'))).toHaveLength(1)
  })

  it('leaves union and intersection member indices out of paths', () => {
    const tool = defineTool({
      name: 'paths',
      description: '',
      parameters: t.intersection([
        t.type({ a: t.union([t.string, t.number]), b: t.union([t.type({ n: t.number }), t.type({ s: t.string })]) }),
        t.partial({ c: t.Int }),
      ]),
      execute: noop,
    })
    expect(leftOf(tool.decodeArguments({ a: true, b: {}, c: 'x' }))).toEqual([
      'at a: expected (string | number), got true',
      'at b.n: expected number, got undefined (missing)',
      'at b.s: expected string, got undefined (missing)',
      'at c: expected Int, got "x"',
    ])
    expect(leftOf(tool.decodeArguments('nope'))).toEqual([
      'at (root): expected ({ a: (string | number), b: ({ n: number } | { s: string }) } & Partial<{ c: Int }>), got "nope"',
    ])
  })

  it('strips through described codecs', () => {
    const tool = defineTool({
      name: 'described',
      description: '',
      parameters: t.type({ inner: withDescription(t.type({ a: t.string }), 'inner object') }),
      execute: noop,
    })
    expect(rightOf(tool.decodeArguments({ inner: { a: 'x', b: 1 } }))).toStrictEqual({ inner: { a: 'x' } })
  })

  it('keeps a "__proto__" key of a record as a key', () => {
    const tool = defineTool({
      name: 'proto',
      description: '',
      parameters: t.type({ map: t.record(t.string, t.type({ v: t.boolean })) }),
      execute: noop,
    })
    const decoded = rightOf(tool.decodeArguments(JSON.parse('{"map":{"__proto__":{"v":true,"junk":1}}}')))
    expect(Object.getPrototypeOf(decoded.map)).toBe(Object.prototype)
    expect(Object.entries(decoded.map)).toEqual([['__proto__', { v: true }]])
  })

  it('keeps a tagged union’s own message', () => {
    const Target = taggedUnion(
      'kind',
      [t.type({ kind: t.literal('file'), path: t.string }), t.type({ kind: t.literal('url'), url: t.string })],
      'Target',
    )
    const tool = defineTool({ name: 'open', description: '', parameters: t.type({ target: Target }), execute: noop })
    expect(leftOf(tool.decodeArguments({ target: { kind: 'ftp' } }))).toEqual([
      `at target: 'kind' must be one of 'file' | 'url', got "ftp"`,
    ])
    expect(leftOf(tool.decodeArguments({ target: { kind: 'file', path: 1 } }))).toEqual([
      'at target.path: expected string, got 1',
    ])
  })
})

describe('exactDeep', () => {
  it('caches per codec and leaves codecs without objects alone', () => {
    const codec = t.type({ a: t.string })
    expect(exactDeep(codec)).toBe(exactDeep(codec))
    const leaf = t.array(t.Int)
    expect(exactDeep(leaf)).toBe(leaf)
  })
})

/** A valid value (`clean`) and the same value with extra keys at each object level (`noisy`). */
type Pair = readonly [clean: unknown, noisy: unknown]

const extras = fc.dictionary(fc.string().map((s) => `extra_${s}`), fc.jsonValue(), { maxKeys: 3 })

/** With `fuzz`, leaves are sometimes any JSON, so some values are invalid. */
const arbitraries = (fuzz: boolean) => {
  const leaf = <A>(arb: fc.Arbitrary<A>): fc.Arbitrary<Pair> =>
    (fuzz ? fc.oneof({ weight: 9, arbitrary: arb as fc.Arbitrary<unknown> }, { weight: 1, arbitrary: fc.jsonValue() }) : arb).map(
      (v): Pair => [v, v],
    )
  const object = (required: Record<string, fc.Arbitrary<Pair>>, optional: Record<string, fc.Arbitrary<Pair>> = {}) =>
    fc
      .tuple(fc.record({ ...required, ...optional }, { requiredKeys: Object.keys(required) }), extras)
      .map(([fields, extra]): Pair => {
        const entries = Object.entries(fields as Record<string, Pair>)
        return [
          Object.fromEntries(entries.map(([k, [clean]]) => [k, clean])),
          { ...extra, ...Object.fromEntries(entries.map(([k, [, noisy]]) => [k, noisy])) },
        ]
      })
  const array = (item: fc.Arbitrary<Pair>) =>
    fc.array(item, { maxLength: 3 }).map((pairs): Pair => [pairs.map(([c]) => c), pairs.map(([, n]) => n)])
  const dictionary = (value: fc.Arbitrary<Pair>) =>
    fc.array(fc.tuple(fc.string(), value), { maxLength: 3 }).map((entries): Pair => [
      Object.fromEntries(entries.map(([k, [c]]) => [k, c])),
      Object.fromEntries(entries.map(([k, [, n]]) => [k, n])),
    ])
  const int = leaf(fc.integer())
  const params = object(
    {
      path: leaf(fc.string()),
      mode: leaf(fc.constantFrom('read', 'write')),
      items: array(object({ id: int, tags: array(leaf(fc.string())) }, { note: leaf(fc.option(fc.string())) })),
      target: fc.oneof(
        object({ kind: leaf(fc.constant('file')), path: leaf(fc.string()) }),
        object({ kind: leaf(fc.constant('url')), url: leaf(fc.string()) }, { headers: dictionary(leaf(fc.string())) }),
      ),
    },
    {
      range: object({ start: int, end: int }),
      meta: dictionary(object({ v: leaf(fc.boolean()) })),
      pair: fc.tuple(int, object({ p: leaf(fc.constant(null)) })).map(([[c1, n1], [c2, n2]]): Pair => [[c1, c2], [n1, n2]]),
    },
  )
  return params
}

const Params = t.intersection([
  t.type({
    path: t.string,
    mode: t.keyof({ read: null, write: null }),
    items: t.array(struct('Item', { id: t.Int, tags: t.array(t.string) }, { note: t.union([t.string, t.null]) })),
    target: taggedUnion(
      'kind',
      [
        t.type({ kind: t.literal('file'), path: t.string }),
        struct('Url', { kind: t.literal('url'), url: t.string }, { headers: t.record(t.string, t.string) }),
      ],
      'Target',
    ),
  }),
  t.partial({
    range: t.type({ start: t.Int, end: t.Int }),
    meta: t.record(t.string, t.type({ v: t.boolean })),
    pair: t.tuple([t.Int, t.type({ p: t.null })]),
  }),
])

describe('properties', () => {
  const tool = defineTool({ name: 'prop', description: '', parameters: Params, execute: noop })

  it('decodeArguments strips extra keys at every level and keeps everything else', () => {
    fc.assert(
      fc.property(arbitraries(false), ([clean, noisy]) => {
        expect(rightOf(tool.decodeArguments(noisy))).toStrictEqual(clean)
      }),
    )
  })

  it('exactDeep accepts and rejects exactly like the original, with the same messages', () => {
    const strict = exactDeep(Params)
    fc.assert(
      fc.property(fc.oneof(arbitraries(true).map(([, noisy]) => noisy), fc.jsonValue()), (u) => {
        const original = Params.decode(u)
        const stripped = strict.decode(u)
        expect(stripped._tag).toBe(original._tag)
        if (isLeft(original) && isLeft(stripped)) {
          expect(reportErrors(stripped.left)).toEqual(reportErrors(original.left))
        }
      }),
    )
  })
})

describe('toolResult and errorText', () => {
  it('builds a text result, with details only when given', () => {
    expect(toolResult('hi')).toStrictEqual({ content: [{ type: 'text', text: 'hi' }] })
    expect(toolResult('hi', { n: 1 })).toStrictEqual({ content: [{ type: 'text', text: 'hi' }], details: { n: 1 } })
  })

  it('describes whatever was thrown', () => {
    expect(errorText(new Error('boom'))).toBe('boom')
    expect(errorText(new RangeError())).toBe('RangeError')
    expect(errorText('plain')).toBe('plain')
    expect(errorText({ code: 1 })).toBe('{"code":1}')
    expect(errorText(undefined)).toBe('undefined')
    const cyclic: Record<string, unknown> = {}
    cyclic['self'] = cyclic
    expect(errorText(cyclic)).toBe('[object Object]')
  })
})
