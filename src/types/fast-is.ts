/**
 * A codec's `is`, generated once as one straight-line function, the way ajv
 * compiles a JSON Schema. The loop checks every message of the transcript it
 * is given at every run; a conversation loaded from storage is all fresh
 * objects, and io-ts's own `is` (closures over closures, `toString` on every
 * nested object) took 1.7 ms for 5,000 messages, six times the rest of the
 * time to the first delta. The generated check took 0.27 ms (a closure-based
 * compilation, without code generation, only 1.6 ms), and 0.16 ms since it
 * is written as one function: array items and the member a tagged union's
 * tag names inline, not a call each. The codec stays the one
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
import { Integer, NonNegativeInteger, NonNegativeNumber, taggedUnionOf } from './codec.js'

/** A compiled predicate. */
type Is = (u: unknown) => boolean

/**
 * Values known to pass their codec, by codec: frozen all the way down, so that
 * they pass for good. The generated check compares a value with them first and
 * checks it only when it is none of them (see {@link knownValid}).
 */
const known = new Map<t.Mixed, unknown[]>()

/**
 * Notes that `value`, a constant the library shares between messages (the
 * empty usage and cost every message built without a model call holds), is a
 * `codec`: checks compiled after this call take it by identity. Measured
 * (5,000 fresh history messages as `userMessage`/`assistantMessage` build
 * them, after a full GC): the usage and cost of an assistant message were 40%
 * of its check, though the same two objects each time.
 *
 * @throws Error when `value` is not frozen all the way down or not a `codec`.
 */
export function knownValid(codec: t.Mixed, value: unknown): void {
  if (!codec.is(value) || !frozenThrough(value)) throw new Error(`knownValid: ${codec.name} constant is not frozen through or does not pass`)
  const list = known.get(codec) ?? []
  list.push(value)
  known.set(codec, list)
}

/** Whether `value` and every object in it are frozen (a constant: small, no cycles). */
function frozenThrough(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true
  return Object.isFrozen(value) && Object.values(value).every(frozenThrough)
}

/** `codec.is`, generated (see the module comment); the codec's own `is` where code cannot be generated. */
export function compileIs(codec: t.Mixed): Is {
  try {
    return generate(codec) as Is
  } catch {
    return (u) => codec.is(u)
  }
}

/**
 * A check that also tells what it met on the way: `false` when the value is
 * not a `codec`, else 1 with the bits `marks` gives every codec that some
 * part of the value passed as (a union's member, an array's item type…) set.
 * What a caller would otherwise learn by reading the value again, while the
 * check has it in hand: decoding a transcript notes whether it holds a tool
 * call or a custom message, and reading each message's role and an assistant
 * message's content a second time was 47 instructions a message (5,000 fresh
 * messages, callgrind), a tenth of the check and decoding together.
 *
 * `undefined` where it cannot be generated, or when a marked codec could be
 * reached only through what the generated code hands to a check of its own
 * (an untagged union's member, a custom codec): the caller then reads the
 * value itself.
 */
export function compileClassify(codec: t.Mixed, marks: ReadonlyMap<t.Mixed, number>): ((u: unknown) => number | false) | undefined {
  try {
    return generate(codec, marks) as (u: unknown) => number | false
  } catch {
    return undefined
  }
}

/** A scanner of lists (see {@link compileScan}). */
export interface Scanner {
  /** The index of the first item of `list` from `start` on that is not a `codec` (`list.length` if none). */
  scan(list: readonly unknown[], start: number): number
  /** The bits (see {@link compileClassify}) of the items the last `scan` passed, or-ed together (0 when it passed none). */
  found(): number
}

/**
 * {@link compileClassify} for the items of a list, in one loop: how far
 * from `start` the items are `codec`s, and the bits met on the way. The
 * check of each item is written inline: a loop calling the check took 79
 * instructions an item besides it, most of them the call (LONG, 5,000 fresh
 * messages, callgrind). `undefined` where {@link compileClassify} is.
 */
export function compileScan(codec: t.Mixed, marks: ReadonlyMap<t.Mixed, number>): Scanner | undefined {
  try {
    return generate(codec, marks, true) as Scanner
  } catch {
    return undefined
  }
}

/** The condition each of the library's number codecs adds to `typeof x === 'number'`, as its `is` states it. */
const NUMBER_CHECKS = new Map<t.Mixed, (x: string) => string>([
  [NonNegativeInteger, (x) => `(Number.isInteger(${x}) && ${x} >= 0)`],
  [Integer, (x) => `Number.isInteger(${x})`],
  [NonNegativeNumber, (x) => `(Number.isFinite(${x}) && ${x} >= 0)`],
])

/** Whether `__proto__` reads an object's prototype here (see {@link plainObject}). */
const PROTO_READ = ((): boolean => {
  try {
    const probe: unknown = ({} as { __proto__?: unknown }).__proto__
    return probe === Object.prototype
  } catch {
    return false
  }
})()

/**
 * A plain object: an object whose prototype is `Object.prototype` or `null`. The prototype is read
 * through `__proto__` first: V8 inline-caches that read, where `Object.getPrototypeOf` of an object of
 * unknown shape is a builtin call: 5,000 fresh history messages (two plain objects each) took
 * 150–240 µs with `Object.getPrototypeOf`, 50–100 µs with `__proto__` (against 35–75 µs without any
 * prototype check). An own `__proto__` property (`JSON.parse` makes one) shadows the read: data can
 * only give it a value that is not `Object.prototype` itself, which then fails here and goes the slow
 * way. Only code can make an object lie about its prototype, as a Proxy already could. `undefined`
 * (no inherited `__proto__` getter: a null prototype, or a shadow) is settled by `Object.getPrototypeOf`;
 * an array's `__proto__` is `Array.prototype`, so only an array made prototype-less needs `Array.isArray`.
 * Where `__proto__` is removed or throws (Deno, `node --disable-proto`), `Object.getPrototypeOf` only.
 */
const plainObject = (x: string, fail: string): string =>
  PROTO_READ
    ? `if (typeof ${x} !== 'object' || ${x} === null) ${fail}\n` +
      `{ const p = ${x}.__proto__; if (p !== OP && (p !== undefined || Object.getPrototypeOf(${x}) !== null || Array.isArray(${x}))) ${fail} }\n`
    : `if (typeof ${x} !== 'object' || ${x} === null || Array.isArray(${x})) ${fail}\n` +
      `{ const p = Object.getPrototypeOf(${x}); if (p !== OP && p !== null) ${fail} }\n`


/**
 * The generated check of `codec`: `true` or `false`; with `marks`, `false` or
 * 1 with the bits of the marked codecs met (see {@link compileClassify}).
 */
function generate(codec: t.Mixed, marks?: ReadonlyMap<t.Mixed, number>, scan = false): unknown {
  const externs: unknown[] = []
  let vars = 0
  const extern = (value: unknown): string => `e[${externs.push(value) - 1}]`
  const fresh = (): string => `v${vars++}`
  /** What the code does where a value fails: leave the check, or (a scanner, {@link compileScan}) stop the scan there. */
  const fail = scan ? 'break items;' : 'return false;'

  /**
   * Statements that fail (`fail`) unless the value in variable `x` is a `c`. `plain`: `x` is
   * known to be a plain object already (a member of an intersection after the first).
   *
   * Everything is written into one function: array items, record values and the member a tagged
   * union's tag names are checked inline: a call through `e[i]` per item, and one per member
   * tried until the tag matched, made 5,000 fresh messages after a full GC take 0.27 ms (now 0.16).
   * Only an untagged union's members are functions of their own: each is tried in turn, and a
   * member's `return false` must not end the whole check.
   */
  const emit = (c: t.Mixed, x: string, plain = false): string => {
    const constants = known.get(c)
    const mark = marks?.get(c)
    // A marked codec: its bits are set once the value passed it (the checks above `return false` otherwise).
    const marked = mark === undefined ? '' : `k |= ${mark | 0};\n`
    if (constants === undefined) return emitCheck(c, x, plain) + marked
    return `if (${constants.map((v) => `${x} !== ${extern(v)}`).join(' && ')}) {\n${emitCheck(c, x, plain)}}\n${marked}`
  }

  /** {@link emit} without the comparison with known constants. */
  const emitCheck = (c: t.Mixed, x: string, plain: boolean): string => {
    if (isKind(c, 'InterfaceType', 'StrictType')) {
      let s = plain ? '' : plainObject(x, fail)
      for (const [key, sub] of Object.entries(c.props)) {
        const y = fresh()
        const k = JSON.stringify(key)
        s += `{ const ${y} = ${x}[${k}]; if (${y} === undefined && !HO.call(${x}, ${k})) ${fail}\n${emit(sub, y)}}\n`
      }
      return s
    }
    if (isKind(c, 'PartialType')) {
      let s = plain ? '' : plainObject(x, fail)
      for (const [key, sub] of Object.entries(c.props)) {
        const y = fresh()
        s += `{ const ${y} = ${x}[${JSON.stringify(key)}]; if (${y} !== undefined) {\n${emit(sub, y)}} }\n`
      }
      return s
    }
    if (isKind(c, 'ExactType', 'ReadonlyType')) return emit(c.type, x, plain)
    if (isKind(c, 'RefinementType')) return `${emit(c.type, x, plain)}if (!${extern(c.predicate)}(${x})) ${fail}\n`
    if (isKind(c, 'IntersectionType')) {
      // Only object members (interfaces, partials, and those wrapped) leave `x` known to be a plain object.
      let known = plain
      let s = ''
      for (const member of c.types) {
        s += emit(member, x, known)
        known ||= isObjectCodec(member)
      }
      return s
    }
    if (isKind(c, 'UnionType')) {
      const tagged = taggedUnionOf(c)
      if (tagged !== undefined) {
        // The member its tag names, and only that one (as the union's own `is`): written out here.
        let s = `if (typeof ${x} !== 'object' || ${x} === null) ${fail}\nswitch (${x}[${JSON.stringify(tagged.tag)}]) {\n`
        for (const [value, member] of tagged.members) s += `case ${JSON.stringify(value)}: {\n${emit(member, x)}break; }\n`
        return `${s}default: ${fail}\n}\n`
      }
      // Each member its own function: the first that accepts decides. It could not set the
      // caller's bits: with marks, no code (a mark under it would go unseen).
      if (marks !== undefined) throw new Error('fast-is: marks under an untagged union')
      return `if (!(${c.types.map((member) => `${extern(generate(member))}(${x})`).join(' || ')})) ${fail}\n`
    }
    if (isKind(c, 'ArrayType', 'ReadonlyArrayType')) {
      const i = fresh()
      const y = fresh()
      return `if (!Array.isArray(${x})) ${fail}\nfor (let ${i} = 0; ${i} < ${x}.length; ${i}++) { const ${y} = ${x}[${i}];\n${emit(c.type, y)}}\n`
    }
    if (isKind(c, 'DictionaryType') && isKind(c.domain, 'StringType')) {
      const k = fresh()
      const y = fresh()
      return `${plain ? '' : plainObject(x, fail)}for (const ${k} in ${x}) if (HO.call(${x}, ${k})) { const ${y} = ${x}[${k}];\n${emit(c.codomain, y)}}\n`
    }
    if (isKind(c, 'LiteralType')) return `if (${x} !== ${JSON.stringify(c.value)}) ${fail}\n`
    if (isKind(c, 'KeyofType')) {
      // A few keys as a `switch` (strict equality: a non-string matches no case), not a call to
      // `hasOwnProperty` on the keys object: an assistant message's `stopReason` is one, and 5,000
      // fresh history messages took 135 µs instead of 156 µs (the fastest of five runs each).
      const keys = Object.keys(c.keys)
      if (keys.length > 0 && keys.length <= 32) return `switch (${x}) {\n${keys.map((k) => `case ${JSON.stringify(k)}:`).join(' ')} break;\ndefault: ${fail}\n}\n`
      return `if (typeof ${x} !== 'string' || !HO.call(${extern(c.keys)}, ${x})) ${fail}\n`
    }
    if (isKind(c, 'StringType')) return `if (typeof ${x} !== 'string') ${fail}\n`
    if (isKind(c, 'NumberType')) return `if (typeof ${x} !== 'number') ${fail}\n`
    if (isKind(c, 'BooleanType')) return `if (typeof ${x} !== 'boolean') ${fail}\n`
    if (isKind(c, 'NullType')) return `if (${x} !== null) ${fail}\n`
    if (isKind(c, 'UndefinedType', 'VoidType')) return `if (${x} !== undefined) ${fail}\n`
    if (isKind(c, 'UnknownType', 'AnyType')) return ''
    // The library's own number codecs, written out: 13 of them in every assistant message's usage
    // and cost, and a call through each codec's `is` made the check of one 88 ns (written out: see below).
    const number = NUMBER_CHECKS.get(c)
    if (number !== undefined) return `if (typeof ${x} !== 'number' || !${number(x)}) ${fail}\n`
    // Anything else: the codec's own check (with marks, only where no marked codec can hide under it).
    if (marks !== undefined && !opaqueWithoutMarks(c, marks)) throw new Error(`fast-is: a mark could hide under ${c.name}`)
    return `if (!${extern(c)}.is(${x})) ${fail}\n`
  }

  const checks = emit(codec, 'u')
  // A scanner: the check of each item inline, the bits of all items kept for `found` (a closure
  // variable: its store needs no type feedback, which the code compiled inside the loop lacks).
  const source = scan
    ? `let found = 0;\nreturn { scan(list, start) {\nlet i = start;\nlet all = 0;\nitems: for (; i < list.length; i++) {\nconst u = list[i];\nlet k = 1;\n${checks}all |= k;\n}\nfound = all;\nreturn i;\n}, found: () => found };`
    : `return function is(u) {\n${marks === undefined ? `${checks}return true;` : `let k = 1;\n${checks}return k;`}\n}`
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- generated from our own codecs only (see the module comment)
  const make = new Function('OP', 'HO', 'e', source) as (op: object, ho: typeof Object.prototype.hasOwnProperty, e: unknown[]) => unknown
  return make(Object.prototype, Object.prototype.hasOwnProperty, externs)
}

/** Whether the code `emit` writes for `c` starts by checking that the value is a plain object. */
function isObjectCodec(c: t.Mixed): boolean {
  if (isKind(c, 'InterfaceType', 'StrictType', 'PartialType')) return true
  if (isKind(c, 'ExactType', 'ReadonlyType', 'RefinementType')) return isObjectCodec(c.type)
  if (isKind(c, 'IntersectionType')) return c.types.some(isObjectCodec)
  return false
}

/**
 * Whether a codec the generated code hands to its own `is` cannot hold a
 * marked codec: a marked one itself could (its bits would go unset), and so
 * could any codec with parts (io-ts's own `is` is opaque here); one with none
 * (a `t.unknown`-like leaf such as JSON, a primitive refinement) cannot.
 */
function opaqueWithoutMarks(c: t.Mixed, marks: ReadonlyMap<t.Mixed, number>): boolean {
  if (marks.has(c)) return false
  const parts = c as unknown as { props?: unknown; types?: unknown; type?: unknown; codomain?: unknown }
  return parts.props === undefined && parts.types === undefined && parts.type === undefined && parts.codomain === undefined
}
