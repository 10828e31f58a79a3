/** `jsonLength` (src/context/json-length.ts) against `JSON.stringify(value)?.length ?? 0` (0 where it throws), for any value. */
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { jsonLength } from '../src/context/json-length.js'

const exact = (value: unknown): number => {
  try {
    return JSON.stringify(value)?.length ?? 0
  } catch {
    return 0
  }
}

/** Strings of any UTF-16 code units: quotes, backslashes, control characters, lone and paired surrogates. */
const anyString = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.string({ unit: fc.constantFrom('"', '\\', '\b', '\f', '\n', '\r', '\t', '\u0000', '\u001f', '\u007f', '\ud800', '\udc00', '\ud83d', '\ude00', 'a', 'é') }),
  fc.string({ unit: fc.constantFrom('a', '"', '\ud800', '\udc00', '\u0001'), minLength: 60, maxLength: 140 }),
  // Long enough to be scanned by the regular expression first, with and without an escape.
  fc.string({ unit: fc.constantFrom('a', ' ', 'é'), minLength: 60, maxLength: 140 }),
  fc.tuple(fc.string({ unit: fc.constantFrom('a', ' '), minLength: 70, maxLength: 100 }), fc.constantFrom('"', '\n', '\ud800', '\u0001')).map(([s, c]) => s + c),
)

const leaf = fc.oneof(
  anyString,
  fc.double(),
  fc.constantFrom(0, -0, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1e21, 1e-7, -1.5),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.constant(() => 1),
  fc.constant(Symbol('s')),
  fc.bigInt(),
  fc.date({ noInvalidDate: false }),
  fc.constant({ toJSON: () => 'x' }),
  fc.constant(new Number(3)),
  fc.constant(Object.create(null) as object),
)

const { value } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('array'), tie('object'), tie('sparse')),
  array: fc.array(tie('value'), { maxLength: 5 }),
  sparse: fc.sparseArray(tie('value'), { maxLength: 5 }),
  object: fc.dictionary(anyString, tie('value'), { maxKeys: 5 }),
}))

describe('jsonLength', () => {
  it('is the length of JSON.stringify, 0 where that throws or gives nothing', () => {
    fc.assert(
      fc.property(value, (v) => {
        expect(jsonLength(v)).toBe(exact(v))
      }),
      { numRuns: 3000 },
    )
  })

  it('plain JSON data, as tool-call arguments are parsed, frozen or not', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.boolean(), (v, freeze) => {
        if (freeze && typeof v === 'object' && v !== null) Object.freeze(v)
        expect(jsonLength(v)).toBe(exact(v))
      }),
      { numRuns: 2000 },
    )
  })

  it('leaves cycles, deep values, toJSON and BigInt to JSON.stringify', () => {
    const cycle: Record<string, unknown> = { a: 1 }
    cycle['self'] = cycle
    expect(jsonLength(cycle)).toBe(0)
    let deep: unknown = 'leaf'
    for (let i = 0; i < 40; i++) deep = i % 2 === 0 ? [deep] : { next: deep }
    expect(jsonLength(deep)).toBe(exact(deep))
    expect(jsonLength({ at: new Date(0) })).toBe(exact({ at: new Date(0) }))
    expect(jsonLength({ n: 1n })).toBe(0)
    expect(jsonLength([undefined, () => 1, Symbol('s')])).toBe('[null,null,null]'.length)
    expect(jsonLength({ a: undefined, b: 1, c: undefined })).toBe('{"b":1}'.length)
    expect(jsonLength(undefined)).toBe(0)
    expect(jsonLength('\ud83d\ude00\ud800')).toBe(exact('\ud83d\ude00\ud800'))
  })

  it('counts a value whose getter throws as nothing, as before (JSON.stringify throws)', () => {
    const hostile = { a: 1 }
    Object.defineProperty(hostile, 'b', {
      enumerable: true,
      get: () => {
        throw new Error('no')
      },
    })
    expect(jsonLength(hostile)).toBe(0)
    expect(jsonLength([hostile])).toBe(0)
    expect(exact(hostile)).toBe(0)
  })

  it('sees a toJSON put on a shared prototype', () => {
    const proto = Object.prototype as { toJSON?: () => string }
    proto.toJSON = () => 'patched'
    try {
      expect(jsonLength({ a: 1 })).toBe(exact({ a: 1 }))
    } finally {
      delete proto.toJSON
    }
  })
})
