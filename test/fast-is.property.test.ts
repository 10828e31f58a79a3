/**
 * The generated `is` (src/types/fast-is.ts) against the codec's own: the same
 * answer for valid messages, never a yes where io-ts says no for messages
 * broken at any path (and a no only where io-ts's `validate` says no too),
 * and io-ts's own `is` where code cannot be generated.
 */
import { describe, expect, it, vi } from 'vitest'
import fc from 'fast-check'
import * as t from 'io-ts'
import { compileIs } from '../src/types/fast-is.js'
import { AgentMessage } from '../src/types/message.js'
import { Cost, Usage } from '../src/types/usage.js'
import { arbAgentMessage } from './arbitraries.js'

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
    const broken = arbAgentMessage.chain((m) =>
      fc.tuple(fc.constant(m), fc.constantFrom(...pathsOf(m)), fc.anything({ maxDepth: 2 }), fc.boolean()).map(([msg, path, value, remove]) =>
        replaced(msg, path, value, remove),
      ),
    )
    fc.assert(
      fc.property(broken, (u) => {
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
    vi.stubGlobal('Function', () => {
      throw new EvalError('Code generation from strings disallowed for this context')
    })
    try {
      const codec = t.type({ a: t.string })
      const spy = vi.spyOn(codec, 'is')
      const is = compileIs(codec)
      expect(is({ a: 'x' })).toBe(true)
      expect(is({ a: 1 })).toBe(false)
      expect(spy).toHaveBeenCalledTimes(2)
    } finally {
      vi.unstubAllGlobals()
    }
  })
})
