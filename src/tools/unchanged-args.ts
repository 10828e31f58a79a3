/**
 * A shortcut for the commonest decode of tool arguments: a value the exact
 * decoder (`exactDeep`, see strict.ts) would accept and hand back as it is,
 * nothing stripped, nothing converted. Such a value is recognized by a plain
 * walk, without io-ts's validation (a context array per key, an Either per
 * level, a failure list per object). Anything else, and every codec this file
 * does not know through and through, goes through io-ts as before, so
 * rejections and their messages do not change.
 *
 * Measured: TOOLS 200 turns (600 calls a run of a `{ value: string, n: number,
 * tags: string[] }` tool), callgrind, node --single-threaded, full GC before
 * each of 6 runs: io-ts's own code and the keyed loads and stores it made,
 * 12.3 M for the 6 runs, against 2.7 M for these checks; JIT code and
 * builtins 300.9 -> 292.8 M (about 1.35 M instructions a run of ~86 M).
 *
 * Internal: not exported from the package.
 */
import type * as t from 'io-ts'
import { isKind } from '../types/codec-kind.js'

/** Whether a value passes unchanged. */
type Check = (u: unknown) => boolean

const hasOwn = (o: object, key: string): boolean => Object.prototype.hasOwnProperty.call(o, key)
const toTag = (u: unknown): string => Object.prototype.toString.call(u)

/**
 * A check that `exactDeep(codec).decode(u)` succeeds with `u` itself, or
 * `undefined` when `codec` holds a kind whose decode this cannot follow
 * exactly (partials, unions, refinements, records, recursion, custom codecs).
 * The check may say `false` for a value the decoder accepts: it then decodes
 * as before.
 */
export function unchangedCheck(codec: t.Mixed): Check | undefined {
  if (isKind(codec, 'StringType')) return isString
  if (isKind(codec, 'NumberType')) return isNumber
  if (isKind(codec, 'BooleanType')) return isBoolean
  if (isKind(codec, 'NullType')) return isNull
  if (isKind(codec, 'UnknownType')) return anyButNaN
  if (isKind(codec, 'LiteralType')) {
    const value = codec.value
    return (u) => u === value
  }
  if (isKind(codec, 'ArrayType', 'ReadonlyArrayType')) {
    const element = unchangedCheck(codec.type as t.Mixed)
    return element === undefined ? undefined : (u) => Array.isArray(u) && everyElement(u, element)
  }
  if (isKind(codec, 'ExactType')) return isKind(codec.type, 'InterfaceType', 'StrictType') ? exactObject(codec.type.props) : undefined
  // `exactDeep` makes every object level exact.
  if (isKind(codec, 'InterfaceType', 'StrictType')) return exactObject(codec.props)
  return undefined
}

// NaN (which JSON cannot carry, but a caller's value can) is not "unchanged": io-ts compares each
// validated property and array item with `!==` and copies the object or array holding one that
// differs, and NaN differs from itself. Such a value goes through io-ts, as the exact decode does.
const isString: Check = (u) => typeof u === 'string'
const isNumber: Check = (u) => typeof u === 'number' && u === u
const isBoolean: Check = (u) => typeof u === 'boolean'
const isNull: Check = (u) => u === null
const anyButNaN: Check = (u) => u === u

function everyElement(items: readonly unknown[], element: Check): boolean {
  for (let i = 0; i < items.length; i++) if (!element(items[i])) return false
  return true
}

/**
 * An object with exactly the own properties of `props` (io-ts strips any
 * other own property name, and gives a missing key a copy), each unchanged.
 */
function exactObject(props: t.Props): Check | undefined {
  const keys = Object.keys(props)
  const checks: Check[] = []
  for (const key of keys) {
    const check = unchangedCheck(props[key]!)
    if (check === undefined) return undefined
    checks.push(check)
  }
  return (u) => {
    // io-ts's `UnknownRecord`: what `Object.prototype.toString` calls an Object.
    if (typeof u !== 'object' || u === null || toTag(u) !== '[object Object]') return false
    const names = Object.getOwnPropertyNames(u)
    if (names.length !== keys.length) return false
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!
      if (!hasOwn(u, key) || !checks[i]!((u as Record<string, unknown>)[key])) return false
    }
    return true
  }
}
