import { describe, it, expect } from 'vitest'
import * as t from 'io-ts'
import fc from 'fast-check'
import { isRight } from 'fp-ts/lib/Either.js'
import { codecDecoder } from '../src/tools/define-tool.js'
import { exactDeep } from '../src/tools/strict.js'
import { unchangedCheck } from '../src/tools/unchanged-args.js'

// Every kind the shortcut follows, nested.
const Covered = t.type({
  value: t.string,
  n: t.number,
  ok: t.boolean,
  none: t.null,
  any: t.unknown,
  mode: t.literal('fast'),
  tags: t.array(t.string),
  points: t.readonlyArray(t.strict({ x: t.number, label: t.string })),
  inner: t.exact(t.type({ deep: t.array(t.type({ flag: t.boolean })) })),
})

const clean = fc.record({
  value: fc.string(),
  // No NaN: io-ts copies the object holding one (NaN !== NaN), so it is not "handed back as it is" (see below).
  n: fc.oneof(fc.double({ noNaN: true }), fc.integer()),
  ok: fc.boolean(),
  none: fc.constant(null),
  any: fc.jsonValue(),
  mode: fc.constant('fast'),
  tags: fc.array(fc.string(), { maxLength: 3 }),
  points: fc.array(fc.record({ x: fc.integer(), label: fc.string() }), { maxLength: 3 }),
  inner: fc.record({ deep: fc.array(fc.record({ flag: fc.boolean() }), { maxLength: 3 }) }),
})

/** A clean value with one thing changed somewhere: a key dropped or added, a value replaced. */
const noisy = fc.tuple(clean, fc.nat(), fc.jsonValue(), fc.constantFrom('drop', 'add', 'replace')).map(([value, at, other, how]) => {
  const copy = JSON.parse(JSON.stringify(value)) as Record<string, unknown>
  const objects: Record<string, unknown>[] = []
  const walk = (u: unknown): void => {
    if (Array.isArray(u)) u.forEach(walk)
    else if (typeof u === 'object' && u !== null) {
      objects.push(u as Record<string, unknown>)
      Object.values(u).forEach(walk)
    }
  }
  walk(copy)
  const target = objects[at % objects.length]!
  const keys = Object.keys(target)
  if (how === 'add' || keys.length === 0) target['extra'] = other
  else if (how === 'drop') delete target[keys[at % keys.length]!]
  else target[keys[at % keys.length]!] = other
  return copy
})

describe('unchanged tool arguments', () => {
  const decode = codecDecoder(Covered)
  const exact = exactDeep(Covered)
  const check = unchangedCheck(Covered)!

  it('covers every kind of this codec', () => {
    expect(check).toBeDefined()
  })

  it('hands a clean value back as it is, as the exact decode does', () => {
    fc.assert(
      fc.property(clean, (u) => {
        const viaIoTs = exact.decode(u)
        expect(isRight(viaIoTs) && viaIoTs.right === u).toBe(true)
        expect(check(u)).toBe(true)
        const result = decode(u)
        expect(isRight(result) && result.right === u).toBe(true)
      }),
    )
  })

  it('decodes anything else exactly as io-ts does: stripped, or rejected with the same messages', () => {
    fc.assert(
      fc.property(fc.oneof(noisy, fc.jsonValue(), clean), (u) => {
        const viaIoTs = exact.decode(u)
        // The shortcut says yes only to what the exact decode gives back unchanged.
        if (check(u)) expect(isRight(viaIoTs) && viaIoTs.right === u).toBe(true)
        const result = decode(u)
        expect(result._tag).toBe(viaIoTs._tag)
        if (isRight(result) && isRight(viaIoTs)) expect(result.right).toStrictEqual(viaIoTs.right)
      }),
    )
  })

  it('leaves a NaN to io-ts, which hands back a copy of what holds it, as the exact decode does', () => {
    const holder = { value: '', n: Number.NaN, ok: true, none: null, any: Number.NaN, mode: 'fast', tags: [], points: [], inner: { deep: [] } }
    expect(check(holder)).toBe(false)
    expect(check({ ...holder, n: 1 })).toBe(false)
    expect(check({ ...holder, n: 1, any: 1 })).toBe(true)
    const viaIoTs = exact.decode(holder)
    const result = decode(holder)
    expect(isRight(viaIoTs) && viaIoTs.right !== holder).toBe(true)
    expect(isRight(result) && result.right !== holder).toBe(true)
    if (isRight(result) && isRight(viaIoTs)) expect(result.right).toStrictEqual(viaIoTs.right)
  })

  it('leaves to io-ts what it cannot follow, and what is not a plain object', () => {
    expect(unchangedCheck(t.partial({ a: t.string }))).toBeUndefined()
    expect(unchangedCheck(t.type({ a: t.union([t.string, t.number]) }))).toBeUndefined()
    expect(unchangedCheck(t.type({ a: t.Int }))).toBeUndefined()
    const simple = unchangedCheck(t.type({ a: t.string }))!
    expect(simple({ a: 'x' })).toBe(true)
    expect(simple({ a: 'x', b: 1 })).toBe(false)
    expect(simple({})).toBe(false)
    expect(simple(Object.create({ a: 'x' }))).toBe(false)
    const hidden = { a: 'x' }
    Object.defineProperty(hidden, 'b', { value: 1, enumerable: false })
    expect(simple(hidden)).toBe(false)
    expect(simple({ a: 'x', [Symbol.toStringTag]: 'Other' })).toBe(false)
    expect(simple(['x'])).toBe(false)
    expect(simple(null)).toBe(false)
  })
})
