import { describe, it, expect } from 'vitest'
import * as t from 'io-ts'
import { withDescription, toJsonSchema } from '../src/tools/json-schema.js'
import { NonNegativeInteger, struct, taggedUnion } from '../src/types/codec.js'

/** The schema of `codec` as the single field `x` of a tool's parameters. */
const field = (codec: t.Mixed): unknown => {
  const schema = toJsonSchema(t.type({ x: codec }))
  return (schema['properties'] as Record<string, unknown>)['x']
}

const obj = (properties: Record<string, unknown>, required: string[]) => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
})

describe('toJsonSchema: primitives', () => {
  it.each([
    ['string', t.string, { type: 'string' }],
    ['number', t.number, { type: 'number' }],
    ['boolean', t.boolean, { type: 'boolean' }],
    ['null', t.null, { type: 'null' }],
    ['unknown', t.unknown, {}],
    ['Int', t.Int, { type: 'integer' }],
    ['UnknownRecord', t.UnknownRecord, { type: 'object' }],
    ['UnknownArray', t.UnknownArray, { type: 'array' }],
  ] as const)('%s', (_, codec, expected) => {
    expect(field(codec)).toEqual(expected)
  })

  it('converts branded refinements other than Int to their base type', () => {
    interface NonEmptyBrand {
      readonly NonEmpty: unique symbol
    }
    const NonEmpty = t.brand(t.string, (s): s is t.Branded<string, NonEmptyBrand> => s.length > 0, 'NonEmpty')
    expect(field(NonEmpty)).toEqual({ type: 'string' })
    expect(field(t.brand(t.Int, (n): n is t.Branded<t.Int, NonEmptyBrand> => n > 0, 'NonEmpty'))).toEqual({ type: 'integer' })
  })
})

describe('toJsonSchema: literals and enums', () => {
  it('turns a literal into const with its type', () => {
    expect(field(t.literal('on'))).toEqual({ type: 'string', const: 'on' })
    expect(field(t.literal(3))).toEqual({ type: 'number', const: 3 })
    expect(field(t.literal(true))).toEqual({ type: 'boolean', const: true })
  })

  it('turns unions of literals and keyof into enums', () => {
    expect(field(t.union([t.literal('a'), t.literal('b'), t.literal('c')]))).toEqual({ type: 'string', enum: ['a', 'b', 'c'] })
    expect(field(t.keyof({ read: null, write: null }))).toEqual({ type: 'string', enum: ['read', 'write'] })
    expect(field(t.union([t.literal(1), t.literal(2)]))).toEqual({ type: 'number', enum: [1, 2] })
    expect(field(t.union([t.literal('a'), t.literal(1)]))).toEqual({ enum: ['a', 1] })
  })

  it('flattens nested literal unions and keeps null beside the enum', () => {
    const codec = t.union([t.union([t.literal('a'), t.literal('b')]), t.null, t.keyof({ c: null })])
    expect(field(codec)).toEqual({ anyOf: [{ type: 'string', enum: ['a', 'b', 'c'] }, { type: 'null' }] })
  })
})

describe('toJsonSchema: unions', () => {
  it('uses anyOf for other unions, including nullable ones', () => {
    expect(field(t.union([t.string, t.number]))).toEqual({ anyOf: [{ type: 'string' }, { type: 'number' }] })
    expect(field(t.union([t.string, t.null]))).toEqual({ anyOf: [{ type: 'string' }, { type: 'null' }] })
  })

  it('converts tagged unions of objects', () => {
    const Shape = taggedUnion(
      'kind',
      [t.type({ kind: t.literal('circle'), r: t.number }), t.type({ kind: t.literal('square'), side: t.number })],
      'Shape',
    )
    expect(field(Shape)).toEqual({
      anyOf: [
        obj({ kind: { type: 'string', const: 'circle' }, r: { type: 'number' } }, ['kind', 'r']),
        obj({ kind: { type: 'string', const: 'square' }, side: { type: 'number' } }, ['kind', 'side']),
      ],
    })
  })
})

describe('toJsonSchema: objects', () => {
  it('closes nested objects and lists required fields', () => {
    const codec = t.type({ a: t.string, nested: t.type({ b: t.number, deeper: t.type({ c: t.boolean }) }) })
    expect(toJsonSchema(codec)).toEqual(
      obj(
        {
          a: { type: 'string' },
          nested: obj({ b: { type: 'number' }, deeper: obj({ c: { type: 'boolean' } }, ['c']) }, ['b', 'deeper']),
        },
        ['a', 'nested'],
      ),
    )
  })

  it('makes partial fields and fields admitting undefined optional', () => {
    const codec = t.type({ a: t.string, b: t.union([t.number, t.undefined]), c: t.union([t.string, t.null, t.void]) })
    expect(toJsonSchema(codec)).toEqual(
      obj({ a: { type: 'string' }, b: { type: 'number' }, c: { anyOf: [{ type: 'string' }, { type: 'null' }] } }, ['a']),
    )
    expect(toJsonSchema(t.partial({ a: t.string }))).toEqual(obj({ a: { type: 'string' } }, []))
  })

  it('merges an intersection of objects into one object schema', () => {
    const codec = struct('Opts', { path: t.string }, { limit: t.Int })
    expect(toJsonSchema(codec)).toEqual(obj({ path: { type: 'string' }, limit: { type: 'integer' } }, ['path']))
    const three = t.intersection([t.type({ a: t.string }), t.partial({ b: t.string }), t.exact(t.type({ c: t.null }))])
    expect(toJsonSchema(three)).toEqual(obj({ a: { type: 'string' }, b: { type: 'string' }, c: { type: 'null' } }, ['a', 'c']))
  })

  it('sees through exact, strict, readonly and refinements of objects', () => {
    const expected = obj({ a: { type: 'string' } }, ['a'])
    expect(toJsonSchema(t.exact(t.type({ a: t.string })))).toEqual(expected)
    expect(toJsonSchema(t.strict({ a: t.string }))).toEqual(expected)
    expect(toJsonSchema(t.readonly(t.type({ a: t.string })))).toEqual(expected)
    expect(toJsonSchema(t.refinement(t.type({ a: t.string }), (o) => o.a !== ''))).toEqual(expected)
  })

  it('keeps a field named __proto__ as a field', () => {
    const props: t.Props = {}
    Object.defineProperty(props, '__proto__', { value: t.string, enumerable: true })
    const schema = toJsonSchema(t.type(props))
    expect(Object.keys(schema['properties'] as object)).toEqual(['__proto__'])
  })
})

describe('toJsonSchema: arrays, tuples, records', () => {
  it('converts arrays and readonly arrays to items', () => {
    expect(field(t.array(t.string))).toEqual({ type: 'array', items: { type: 'string' } })
    expect(field(t.readonlyArray(t.type({ a: t.Int })))).toEqual({
      type: 'array',
      items: obj({ a: { type: 'integer' } }, ['a']),
    })
  })

  it('converts tuples to prefixItems with a fixed length', () => {
    expect(field(t.tuple([t.Int, t.string]))).toEqual({
      type: 'array',
      prefixItems: [{ type: 'integer' }, { type: 'string' }],
      minItems: 2,
      maxItems: 2,
    })
  })

  it('converts string-keyed records to additionalProperties', () => {
    expect(field(t.record(t.string, t.number))).toEqual({ type: 'object', additionalProperties: { type: 'number' } })
    expect(toJsonSchema(t.record(t.string, t.array(t.string)))).toEqual({
      type: 'object',
      additionalProperties: { type: 'array', items: { type: 'string' } },
    })
  })

  it('converts records over a finite key set to fixed required properties', () => {
    expect(field(t.record(t.keyof({ x: null, y: null }), t.number))).toEqual(
      obj({ x: { type: 'number' }, y: { type: 'number' } }, ['x', 'y']),
    )
  })
})

describe('toJsonSchema: descriptions', () => {
  it('emits descriptions on fields, nested fields, items, and the root', () => {
    const codec = withDescription(
      t.type({
        path: withDescription(t.string, 'File to read'),
        range: withDescription(
          t.union([t.type({ start: withDescription(t.Int, 'First line, 1-based'), end: t.Int }), t.undefined]),
          'Lines to read',
        ),
        tags: t.array(withDescription(t.string, 'A tag')),
      }),
      'Read a file',
    )
    expect(toJsonSchema(codec)).toEqual({
      ...obj(
        {
          path: { type: 'string', description: 'File to read' },
          range: {
            ...obj({ start: { type: 'integer', description: 'First line, 1-based' }, end: { type: 'integer' } }, ['start', 'end']),
            description: 'Lines to read',
          },
          tags: { type: 'array', items: { type: 'string', description: 'A tag' } },
        },
        ['path', 'tags'],
      ),
      description: 'Read a file',
    })
  })

  it('does not describe the shared codec it was given', () => {
    const described = withDescription(t.string, 'only here')
    expect(described).not.toBe(t.string)
    expect(described).toBeInstanceOf(t.StringType)
    expect(field(t.string)).toEqual({ type: 'string' })
    expect(described.decode('ok')).toEqual(t.string.decode('ok'))
    expect(described.is(1)).toBe(false)
  })

  it('keeps a described literal as its own union member', () => {
    const codec = t.union([t.literal('a'), withDescription(t.literal('b'), 'the b one')])
    expect(field(codec)).toEqual({
      anyOf: [{ type: 'string', const: 'a' }, { type: 'string', const: 'b', description: 'the b one' }],
    })
  })

  it('emits no description by default', () => {
    expect(JSON.stringify(toJsonSchema(t.type({ a: t.string }, 'Named')))).not.toContain('description')
  })
})

describe('toJsonSchema: unsupported codecs', () => {
  const message = (codec: t.Mixed): string => {
    try {
      toJsonSchema(codec)
    } catch (error) {
      expect(error).toBeInstanceOf(TypeError)
      return (error as TypeError).message
    }
    throw new Error('expected a TypeError')
  }

  it('names the path, the codec and what is supported', () => {
    const codec = t.type({ items: t.array(t.type({ when: t.Function })) })
    const text = message(codec)
    expect(text).toContain('parameters.items[].when')
    expect(text).toContain('Function')
    expect(text).toContain('Supported:')
  })

  it.each([
    ['never', t.type({ a: t.never as unknown as t.Mixed }), 'parameters.a'],
    ['undefined alone', t.type({ a: t.undefined }), 'parameters.a'],
    ['undefined in an array', t.type({ a: t.array(t.union([t.string, t.undefined])) }), 'parameters.a[]'],
    ['a custom Type', t.type({ n: NonNegativeInteger }), 'parameters.n'],
    ['bigint', t.partial({ n: t.bigint }), 'parameters.n'],
    ['a number-keyed record', t.type({ r: t.record(t.number, t.string) }), 'parameters.r'],
    ['a tuple member', t.type({ p: t.tuple([t.string, t.Function]) }), 'parameters.p[1]'],
    ['an odd key', t.type({ 'a-b': t.type({ c: t.never as unknown as t.Mixed }) }), 'parameters["a-b"].c'],
    ['a record value', t.type({ r: t.record(t.string, t.Function) }), 'parameters.r[string]'],
    ['a non-object intersection member', t.type({ i: t.intersection([t.type({ a: t.string }), t.string]) }), 'parameters.i'],
  ] as const)('rejects %s', (_, codec, path) => {
    expect(message(codec)).toContain(`at ${path} `)
  })

  it('rejects recursive codecs', () => {
    interface Tree {
      children: Tree[]
    }
    const Tree: t.Type<Tree> = t.recursion('Tree', () => t.type({ children: t.array(Tree) }))
    expect(message(t.type({ tree: Tree }))).toContain('at parameters.tree')
  })

  it('rejects a top level that is not an object', () => {
    for (const codec of [t.string, t.array(t.string), t.union([t.type({ a: t.string }), t.type({ b: t.string })])]) {
      expect(message(codec)).toContain('tool parameters must be an object')
    }
    expect(message(t.undefined)).toContain('at parameters')
    expect(message(t.void)).toContain('at parameters')
  })
})
