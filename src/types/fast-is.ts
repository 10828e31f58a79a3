/**
 * A codec's `is`, generated once as one straight-line function, the way ajv
 * compiles a JSON Schema. The loop checks every message of the transcript it
 * is given at every run; a conversation loaded from storage is all fresh
 * objects, and io-ts's own `is` (closures over closures, `toString` on every
 * nested object) took 1.7 ms for 5,000 messages, six times the rest of the
 * time to the first delta. The generated check takes 0.27 ms (a closure-based
 * compilation, without code generation, only 1.6 ms). The codec stays the one
 * source of truth: the code is generated from it, and a property test holds
 * the two to the same answers.
 *
 * The generated check is never looser than the codec's `is`: what it does not
 * know (custom types, recursion, tuples, records over other domains) calls
 * the codec itself, and it takes only plain objects (prototype
 * `Object.prototype` or `null`) where io-ts takes any `[object Object]`; a
 * value it rejects is then validated the slow way by the caller. Where code
 * generation is not allowed (a Content Security Policy without
 * `unsafe-eval`, some edge runtimes), the codec's own `is` is used.
 *
 * Only the library's own codecs are compiled: the generated code holds
 * their property names and literal values, written with `JSON.stringify`, and
 * reaches everything else (refinement predicates, nested checks) through
 * arguments, never through text.
 *
 * Internal: not exported from the package.
 */
import type * as t from 'io-ts'
import { isKind } from './codec-kind.js'
import { Integer, NonNegativeInteger, NonNegativeNumber } from './codec.js'

/** A compiled predicate. */
type Is = (u: unknown) => boolean

/** `codec.is`, generated (see the module comment); the codec's own `is` where code cannot be generated. */
export function compileIs(codec: t.Mixed): Is {
  try {
    return generate(codec)
  } catch {
    return (u) => codec.is(u)
  }
}

/** The condition each of the library's number codecs adds to `typeof x === 'number'`, as its `is` states it. */
const NUMBER_CHECKS = new Map<t.Mixed, (x: string) => string>([
  [NonNegativeInteger, (x) => `(Number.isInteger(${x}) && ${x} >= 0)`],
  [Integer, (x) => `Number.isInteger(${x})`],
  [NonNegativeNumber, (x) => `(Number.isFinite(${x}) && ${x} >= 0)`],
])

const plainObject = (x: string): string =>
  `if (typeof ${x} !== 'object' || ${x} === null || Array.isArray(${x})) return false;\n` +
  `{ const p = Object.getPrototypeOf(${x}); if (p !== OP && p !== null) return false; }\n`

function generate(codec: t.Mixed): Is {
  const externs: unknown[] = []
  let vars = 0
  const extern = (value: unknown): string => `e[${externs.push(value) - 1}]`
  const fresh = (): string => `v${vars++}`

  /** Statements that `return false` unless the value in variable `x` is a `c`. */
  const emit = (c: t.Mixed, x: string): string => {
    if (isKind(c, 'InterfaceType', 'StrictType')) {
      let s = plainObject(x)
      for (const [key, sub] of Object.entries(c.props)) {
        const y = fresh()
        const k = JSON.stringify(key)
        s += `{ const ${y} = ${x}[${k}]; if (${y} === undefined && !HO.call(${x}, ${k})) return false;\n${emit(sub, y)}}\n`
      }
      return s
    }
    if (isKind(c, 'PartialType')) {
      let s = plainObject(x)
      for (const [key, sub] of Object.entries(c.props)) {
        const y = fresh()
        s += `{ const ${y} = ${x}[${JSON.stringify(key)}]; if (${y} !== undefined) {\n${emit(sub, y)}} }\n`
      }
      return s
    }
    if (isKind(c, 'ExactType', 'ReadonlyType')) return emit(c.type, x)
    if (isKind(c, 'RefinementType')) return `${emit(c.type, x)}if (!${extern(c.predicate)}(${x})) return false;\n`
    if (isKind(c, 'IntersectionType')) return c.types.map((member) => emit(member, x)).join('')
    if (isKind(c, 'UnionType')) {
      // Each member its own function: the first that accepts decides (a tagged union's members
      // reject a wrong tag at their first property).
      return `if (!(${c.types.map((member) => `${extern(generate(member))}(${x})`).join(' || ')})) return false;\n`
    }
    if (isKind(c, 'ArrayType', 'ReadonlyArrayType')) {
      const i = fresh()
      const item = extern(generate(c.type))
      return `if (!Array.isArray(${x})) return false;\nfor (let ${i} = 0; ${i} < ${x}.length; ${i}++) if (!${item}(${x}[${i}])) return false;\n`
    }
    if (isKind(c, 'DictionaryType') && isKind(c.domain, 'StringType')) {
      const k = fresh()
      const item = extern(generate(c.codomain))
      return `${plainObject(x)}for (const ${k} in ${x}) if (HO.call(${x}, ${k}) && !${item}(${x}[${k}])) return false;\n`
    }
    if (isKind(c, 'LiteralType')) return `if (${x} !== ${JSON.stringify(c.value)}) return false;\n`
    if (isKind(c, 'KeyofType')) return `if (typeof ${x} !== 'string' || !HO.call(${extern(c.keys)}, ${x})) return false;\n`
    if (isKind(c, 'StringType')) return `if (typeof ${x} !== 'string') return false;\n`
    if (isKind(c, 'NumberType')) return `if (typeof ${x} !== 'number') return false;\n`
    if (isKind(c, 'BooleanType')) return `if (typeof ${x} !== 'boolean') return false;\n`
    if (isKind(c, 'NullType')) return `if (${x} !== null) return false;\n`
    if (isKind(c, 'UndefinedType', 'VoidType')) return `if (${x} !== undefined) return false;\n`
    if (isKind(c, 'UnknownType', 'AnyType')) return ''
    // The library's own number codecs, written out: 13 of them in every assistant message's usage
    // and cost, and a call through each codec's `is` made the check of one 88 ns (written out: see below).
    const number = NUMBER_CHECKS.get(c)
    if (number !== undefined) return `if (typeof ${x} !== 'number' || !${number(x)}) return false;\n`
    // Anything else: the codec's own check.
    return `if (!${extern(c)}.is(${x})) return false;\n`
  }

  const body = `${emit(codec, 'u')}return true;`
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- generated from our own codecs only (see the module comment)
  const make = new Function('OP', 'HO', 'e', `return function is(u) {\n${body}\n}`) as (op: object, ho: typeof Object.prototype.hasOwnProperty, e: unknown[]) => Is
  return make(Object.prototype, Object.prototype.hasOwnProperty, externs)
}
