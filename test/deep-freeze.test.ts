/** `deepFreeze`: own properties all the way down, any depth, the depth check, and nothing that belongs to a prototype. */
import { describe, expect, it } from 'vitest'
import { deepFreeze, freezeParsed, MAX_ARGUMENT_DEPTH } from '../src/types/deep-freeze.js'

describe('deepFreeze', () => {
  it('freezes own objects and arrays at any depth without recursion', () => {
    let deep: unknown = { leaf: [1, { x: 2 }] }
    for (let i = 0; i < 20_000; i++) deep = i % 2 === 0 ? [deep] : { next: deep }
    expect(deepFreeze(deep)).toBe(true)
    let node = deep as Record<string, unknown> | unknown[]
    let levels = 0
    while (!('leaf' in node)) {
      expect(Object.isFrozen(node)).toBe(true)
      node = (Array.isArray(node) ? node[0] : node.next) as typeof node
      levels++
    }
    expect(levels).toBe(20_000)
    expect(Object.isFrozen((node as { leaf: unknown[] }).leaf[1])).toBe(true)
  })

  it('stops at maxDepth with false', () => {
    expect(deepFreeze({ a: { b: { c: {} } } }, 3)).toBe(false)
    expect(deepFreeze({ a: { b: { c: 1 } } }, 3)).toBe(true)
    expect(deepFreeze([[[[]]]], 3)).toBe(false)
  })

  it('leaves what an object inherits alone: only its own properties are its data', () => {
    const shared = { settings: { mode: 'a' } }
    const value = Object.create(shared) as { own: { x: number } }
    value.own = { x: 1 }
    deepFreeze(value)
    expect(Object.isFrozen(value.own)).toBe(true)
    expect(Object.isFrozen(shared.settings)).toBe(false)
    shared.settings.mode = 'b'
    expect(shared.settings.mode).toBe('b')
  })

  it('freezeParsed: what deepFreeze answers for fresh JSON at every limit, every node frozen when it fits', () => {
    const texts = ['1', '"s"', 'null', '{}', '[]', '{"a":{"b":{"c":{}}}}', '{"a":{"b":{"c":1}}}', '[[[[]]]]', '{"v":"x","n":1,"tags":["a","b"],"o":{"k":[{"z":null}]}}', '{"__proto__":{"x":{}}}']
    const frozenAll = (v: unknown): boolean =>
      typeof v !== 'object' || v === null || (Object.isFrozen(v) && Object.keys(v).every((k) => frozenAll((v as Record<string, unknown>)[k])))
    for (const text of texts) {
      for (const limit of [0, 1, 2, 3, 4, MAX_ARGUMENT_DEPTH, MAX_ARGUMENT_DEPTH + 1]) {
        const parsed: unknown = JSON.parse(text)
        const expected = deepFreeze(JSON.parse(text), limit)
        expect(freezeParsed(parsed, limit), `${text} at ${limit}`).toBe(expected)
        if (expected) expect(frozenAll(parsed)).toBe(true)
      }
    }
  })

  it('freezeParsed leaves what an object inherits alone', () => {
    const polluted = { mode: 'a' }
    Object.defineProperty(Object.prototype, 'inheritedForTest', { value: polluted, enumerable: true, configurable: true, writable: true })
    try {
      const parsed: unknown = JSON.parse('{"own":{"x":1}}')
      expect(freezeParsed(parsed, MAX_ARGUMENT_DEPTH)).toBe(true)
      expect(Object.isFrozen((parsed as { own: object }).own)).toBe(true)
      expect(Object.isFrozen(polluted)).toBe(false)
    } finally {
      delete (Object.prototype as Record<string, unknown>).inheritedForTest
    }
  })
})
