/** `deepFreeze`: own properties all the way down, any depth, the depth check, and nothing that belongs to a prototype. */
import { describe, expect, it } from 'vitest'
import { deepFreeze } from '../src/types/deep-freeze.js'

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
})
