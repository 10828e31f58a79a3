/**
 * Request bodies assembled from each message's JSON text, cached.
 *
 * A conversation resends its whole transcript every turn: a 50-turn tool
 * conversation converts and serializes each old message once per later turn,
 * O(turns²) work and garbage. A message that cannot change converts to the
 * same wire text every time for the same target model, so its text is kept in
 * a weak table keyed on the message object, and a request body is the
 * concatenation of the texts of the old messages and of the new ones.
 *
 * Sound only for messages that cannot change: the message and everything the
 * conversion reads of it must be frozen plain data (see {@link isFrozenMessage}),
 * checked once, when the text is stored — a frozen object stays frozen. A
 * message that is not is converted afresh on every request, as before.
 * Redacting or editing a message makes a new message object: a new key.
 *
 * Internal: not exported from the package.
 */
import { resident } from '../rx/resident.js'

/**
 * A request body already serialized as JSON text, from a builder that
 * assembled it from cached pieces; `streamFnOf` sends `text` as it is.
 * `JSON.stringify` of it gives the same text (for code that inspects a
 * built request as data).
 */
export class JsonText {
  constructor(readonly text: string) {
    Object.freeze(this)
  }

  /** The value the text stands for. */
  toJSON(): unknown {
    return JSON.parse(this.text)
  }
}

// Its hidden class outlives a request (see `resident`): freezing an instance moves it to a map that
// V8 holds only while a frozen instance lives, and the body builders that inline this constructor
// embed that map. Without it, the full GC between two WIRE runs threw `anthropicRequestText` away
// ("deoptimizing … reason: weak objects") and the next run compiled it again.
resident(new JsonText(''))

const objectProto: unknown = Object.prototype
const arrayProto: unknown = Array.prototype

/** Whether `node` is a frozen plain object or array whose own properties are all data (no getters), pushing its object values on `stack`. */
function frozenNode(node: object, stack: object[]): boolean {
  if (!Object.isFrozen(node)) return false
  const proto: unknown = Object.getPrototypeOf(node)
  if (proto !== objectProto && proto !== arrayProto && proto !== null) return false
  for (const key of Reflect.ownKeys(node)) {
    const descriptor = Object.getOwnPropertyDescriptor(node, key)
    if (descriptor === undefined || !('value' in descriptor)) return false
    const value: unknown = descriptor.value
    if (typeof value === 'function') return false
    if (typeof value === 'object' && value !== null) stack.push(value)
  }
  return true
}

/**
 * Whether `value` is plain data that cannot change: primitives, and frozen
 * plain objects and arrays with data properties only, all the way down
 * (iteratively: any depth). A class instance (a `Date` is mutable even when
 * frozen), a function or a getter is not.
 */
export function isFrozenData(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return typeof value !== 'function'
  const stack: object[] = [value]
  while (stack.length > 0) if (!frozenNode(stack.pop()!, stack)) return false
  return true
}

/**
 * Whether a message's wire form cannot change: the message itself a frozen
 * plain object with data properties, and its `content` frozen plain data.
 * Nothing else of a message is sent (a tool result's `details` never is, and
 * may hold anything).
 */
export function isFrozenMessage(message: { readonly content: unknown }): boolean {
  const top: object[] = []
  if (!frozenNode(message, top)) return false
  return isFrozenData(message.content)
}

/** One cached piece and the target it was built for. */
interface Entry<P> {
  readonly target: string
  readonly piece: P
}

/**
 * Each message's wire piece, per target (the model and whatever settings
 * shape the conversion, as one string that tells them apart): the last
 * target a message was built for is kept, so a conversation that switches
 * model rebuilds once.
 */
export class WirePieces<M extends { readonly content: unknown }, P> {
  private readonly entries = new WeakMap<M, Entry<P>>()

  /**
   * The piece of `message` for `target`: cached, or `build(message)` (cached
   * when the message cannot change). `build` must depend on nothing but the
   * message and what `target` names.
   */
  of(message: M, target: string, build: (message: M) => P): P {
    const entry = this.entries.get(message)
    if (entry !== undefined && entry.target === target) return entry.piece
    const piece = build(message)
    if (entry !== undefined || isFrozenMessage(message)) this.entries.set(message, { target, piece })
    return piece
  }

  /** Whether the piece of `message` for `target` is cached (then it cannot change). */
  has(message: M, target: string): boolean {
    return this.entries.get(message)?.target === target
  }
}
