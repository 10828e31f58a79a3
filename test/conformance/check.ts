/** What the conformance suites share: reading JSON loosely, comparing it structurally, saying what differed. */

export type Json = Record<string, unknown>
export const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)
export const obj = (v: unknown): Json => (isObj(v) ? v : {})
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])
export const str = (v: unknown): string => (typeof v === 'string' ? v : '')

/** Structural equality of JSON values: key order ignored, and a key holding `undefined` counts as absent. */
export function same(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i]))
  }
  if (isObj(a) && isObj(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined)
    const kb = Object.keys(b).filter((k) => b[k] !== undefined)
    return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && same(a[k], b[k]))
  }
  return false
}

/** A difference between what the adapter produced and what the recording says. */
export class Mismatch extends Error {}

/** Throws a {@link Mismatch} naming `what` and both values (shortened) unless they are the same. */
export function expectSame(what: string, actual: unknown, expected: unknown): void {
  if (!same(actual, expected)) {
    const show = (v: unknown): string => {
      const s = JSON.stringify(v) ?? String(v)
      return s.length > 160 ? `${s.slice(0, 160)}…` : s
    }
    throw new Mismatch(`${what}: got ${show(actual)}, expected ${show(expected)}`)
  }
}
