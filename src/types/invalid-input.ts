/**
 * The one error the public entries throw for a value they cannot accept, and
 * the helpers that raise it: {@link decodeInput} decodes with a codec and
 * reports every failing path, {@link invalidInput} reports one; {@link optional}
 * makes an argument's codec accept `undefined` without a union's noise in the message.
 */
import * as t from 'io-ts'
import { describeValue, reportErrors, type DecodeIssue } from './codec.js'

/** Problems listed in the message after the first; `errors` holds them all. */
const MORE_SHOWN = 4

/**
 * A value a public entry cannot accept. `entry` is the function that was
 * called, `what` the argument, and `errors` every problem found, each with
 * its path (`messages[0].content`). The message names the first one.
 */
export class InvalidInputError extends TypeError {
  override readonly name = 'InvalidInputError'
  constructor(
    readonly entry: string,
    readonly what: string,
    readonly errors: readonly DecodeIssue[],
  ) {
    const [first, ...more] = errors
    const head = `${entry}: invalid ${what} ${first?.message ?? 'value'}`
    const shown = more.slice(0, MORE_SHOWN).map((e) => `\n  and ${e.message}`)
    const rest = more.length > MORE_SHOWN ? `\n  and ${more.length - MORE_SHOWN} more (see .errors)` : ''
    super(`${head}${shown.join('')}${rest}`)
  }
}

/** The failure for one issue at `path`. */
export const invalidInput = (entry: string, what: string, path: string, message: string, value?: unknown): InvalidInputError =>
  new InvalidInputError(entry, what, [{ path, expected: message, actual: describeValue(value), message: `at ${path}: ${message}` }])

/** `codec`, or nothing: for an optional argument or field, without a union's noise in the message. */
export const optional = <A, O>(codec: t.Type<A, O, unknown>): t.Type<A | undefined, O | undefined, unknown> =>
  new t.Type<A | undefined, O | undefined, unknown>(
    codec.name,
    (u): u is A | undefined => u === undefined || codec.is(u),
    (u, c) => (u === undefined ? t.success(undefined) : codec.validate(u, c)),
    (a) => (a === undefined ? undefined : codec.encode(a)),
  )

/**
 * The context given to a decoder whose failure is not reported: the entries decode a valid
 * input directly, without io-ts's contexts (its machinery, cold after a full garbage collection,
 * took 50–60 µs of each run), and decode a failing one again with them, for the paths.
 */
export const UNREPORTED: t.Context = []

/** Decodes `u` with `codec` or throws an {@link InvalidInputError}; paths start at `root` (`prompts`, `messages`…). */
export function decodeInput<A>(codec: t.Decoder<unknown, A>, u: unknown, entry: string, what: string, root = ''): A {
  const result = codec.validate(u, [{ key: '', type: codec as t.Decoder<unknown, unknown> as t.Mixed, actual: u }])
  if (result._tag === 'Right') return result.right
  throw new InvalidInputError(entry, what, reportErrors(result.left, root))
}
