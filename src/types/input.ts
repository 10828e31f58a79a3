/**
 * What the public entries accept, and the one error they throw for anything
 * else. Each entry (`agentLoop`, `Agent.prompt`, `Agent.restore`, a checkpoint
 * store's `load`, `defineTool`…) decodes its input here once: the forms users
 * of other runtimes write are normalized to the canonical one, and anything
 * else wrong is an {@link InvalidInputError} naming the path — never a value
 * silently dropped or sent in the wrong role.
 *
 * Accepted beyond the canonical form:
 * - a plain string wherever a prompt is expected (a user message with one text block);
 * - `content: 'text'` on a user or tool-result message (one text block);
 * - no `timestamp` on a user or tool-result message (the entry's clock fills it in).
 *
 * Lists of frozen messages that passed are remembered (weakly): the
 * transcript an Agent passes to every run is checked once, and a longer one
 * over its new messages only.
 */
import * as t from 'io-ts'
import { NonNegativeInteger, describeValue, reportErrors, struct, taggedUnion, type DecodeIssue } from './codec.js'
import { ImageContent, UserContent, text } from './content.js'
import { AgentTools, type AgentTool } from './tool.js'
import { compileIs } from './fast-is.js'
import { TranscriptMemo, type PrefixFacts } from './transcript-memo.js'
import { AgentMessage, AssistantMessage, CustomMessage, type ToolResultMessage, type UserMessage } from './message.js'

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
const UNREPORTED: t.Context = []

/** Decodes `u` with `codec` or throws an {@link InvalidInputError}; paths start at `root` (`prompts`, `messages`…). */
export function decodeInput<A>(codec: t.Decoder<unknown, A>, u: unknown, entry: string, what: string, root = ''): A {
  const result = codec.validate(u, [{ key: '', type: codec as t.Decoder<unknown, unknown> as t.Mixed, actual: u }])
  if (result._tag === 'Right') return result.right
  throw new InvalidInputError(entry, what, reportErrors(result.left, root))
}

const UserContentList = t.readonlyArray(UserContent)

/** Message content as users write it: canonical blocks, or a string read as one text block. */
const ContentInput = new t.Type<readonly UserContent[], readonly UserContent[], unknown>(
  'string | ReadonlyArray<UserContent>',
  UserContentList.is,
  (u, c) =>
    typeof u === 'string' ? t.success([text(u)]) : Array.isArray(u) ? UserContentList.validate(u, t.appendContext(c, '', UserContentList, u)) : t.failure(u, c),
  t.identity,
)

/** A user message as users write it: `content` may be a string, `timestamp` may be left out. */
export const UserMessageInput = struct('UserMessage', { role: t.literal('user'), content: ContentInput }, { timestamp: NonNegativeInteger })
export type UserMessageInput = Omit<UserMessage, 'content' | 'timestamp'> & { readonly content: string | readonly UserContent[]; readonly timestamp?: number }

/** A tool result as users write it: `content` may be a string, `timestamp` may be left out. */
export const ToolResultMessageInput = struct(
  'ToolResultMessage',
  { role: t.literal('toolResult'), toolCallId: t.string, toolName: t.string, content: ContentInput, isError: t.boolean },
  { timestamp: NonNegativeInteger, details: t.unknown },
)
export type ToolResultMessageInput = Omit<ToolResultMessage, 'content' | 'timestamp'> & {
  readonly content: string | readonly UserContent[]
  readonly timestamp?: number
}

/** Any message as an entry accepts it. Assistant and custom messages are taken in their canonical form only. */
export const AgentMessageInput = taggedUnion('role', [UserMessageInput, AssistantMessage, ToolResultMessageInput, CustomMessage], 'AgentMessage')
export type AgentMessageInput = AgentMessage | UserMessageInput | ToolResultMessageInput

/** What a prompt can be: text, a message, or several (each text or a message). */
export type PromptInput = string | AgentMessageInput | readonly (string | AgentMessageInput)[]

/**
 * Lists whose first `length` messages passed and are frozen (see
 * transcript-memo.ts): the transcript an Agent or an app passes to every run,
 * grown by a few messages, is checked over those few.
 *
 * Lists, not messages: a weak set of every message checked cost 1.5 ms of
 * lookups for 60,000 messages at every run, and after a full garbage
 * collection its first addition rehashed the whole set (17 to 50 ms with
 * 60,000 messages alive, measured on the first prompt of a restored Agent),
 * besides the work a large weak table adds to every collection. A message
 * no list covers gets the generated check, 20 to 75 ns.
 */
const checkedLists = new TranscriptMemo<PrefixFacts>()

/**
 * `{ ...message, ...fields }`, built property by property: on Node 20 an
 * object built by a spread and then frozen is slow to read ever after (its
 * `role` over 5,000 messages: 0.25 ms, against 0.005 ms for one built this
 * way), and every message decoded here stays in the history that later runs
 * walk. Own data properties, as a spread makes them (`Object.assign` would
 * call a `__proto__` setter instead).
 */
function withFields<M extends object>(message: M, fields: object): M {
  const out = {}
  for (const source of [message, fields]) {
    for (const key of Reflect.ownKeys(source)) {
      if (!Object.prototype.propertyIsEnumerable.call(source, key)) continue
      const value: unknown = (source as Record<PropertyKey, unknown>)[key]
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true })
    }
  }
  return out as M
}

/** A normalized message, frozen with its content list (copied unless frozen already: the caller's list stays theirs). */
function frozen(message: AgentMessage): AgentMessage {
  if (message.role === 'custom' || Object.isFrozen(message.content)) return Object.freeze(message)
  return Object.freeze(withFields(message, { content: Object.freeze([...message.content]) }))
}

/**
 * `AgentMessage.is`, generated (see fast-is.ts): whether a message no
 * remembered list covers is in canonical form. It builds no contexts and no
 * Either: 5,000 fresh messages take about 0.3 ms, against 1.7 ms with io-ts's
 * `is`, 12 ms to `validate` and 24 ms with a context per message, on this
 * machine. `validate` runs only for what needs normalizing or is wrong, and
 * then explains it.
 */
const isAgentMessage = compileIs(AgentMessage)

/**
 * A text prompt as {@link normalize} makes it (`{ role: 'user', content: 'text' }` decoded, then
 * timed and frozen), without io-ts: every `prompt('…')` and `agentLoop('…')` comes here, and
 * the decoder's first run after a full garbage collection took 50–100 µs of a short run.
 */
function textPrompt(value: string, now: number): UserMessage {
  return Object.freeze({ role: 'user', content: Object.freeze([text(value)]), timestamp: now })
}

/** One message, decoded and normalized (a new, frozen object when it changed). */
function normalize(u: unknown, now: number, context: t.Context): t.Validation<AgentMessage> {
  const decoded = AgentMessageInput.validate(typeof u === 'string' ? { role: 'user', content: u } : u, context)
  if (decoded._tag === 'Left') return decoded
  const m = decoded.right as AgentMessage | (AgentMessageInput & { timestamp?: number })
  const untimed = (m.role === 'user' || m.role === 'toolResult') && m.timestamp === undefined
  if (m === u && !untimed) return t.success(m as AgentMessage)
  return t.success(frozen((untimed ? withFields(m, { timestamp: now }) : m) as AgentMessage))
}

/**
 * A list of messages decoded and normalized: the same array when every message
 * was canonical already (a transcript keeps its identity), else a new one.
 * Strings in the list are read as user messages only when `strings` is set
 * (prompts); `indexed: false` reports a one-item list's paths without `[0]`.
 */
function decodeList(list: readonly unknown[], now: number, strings: boolean, context: t.Context, indexed = true): t.Validation<readonly AgentMessage[]> {
  // A list that is, or extends, one whose messages all passed frozen is checked from where that one ended.
  const known = checkedLists.find(list as readonly AgentMessage[])
  const start = known === undefined ? 0 : Math.min(known.length, list.length)
  if (start === list.length) return t.success(list as readonly AgentMessage[])
  let out: unknown[] | undefined
  const errors: t.ValidationError[] = []
  /** The end of the run of canonical frozen messages from the start. */
  let frozenTo = start
  for (let i = start; i < list.length; i++) {
    const u = list[i]
    let m = u
    if (typeof u === 'object' && u !== null && isAgentMessage(u)) {
      // Canonical already: no context built, nothing copied.
    } else if (typeof u === 'string' && strings) {
      m = textPrompt(u, now)
    } else {
      const c = indexed ? t.appendContext(context, String(i), AgentMessageInput, u) : context
      if (typeof u === 'string' && !strings) {
        errors.push({ value: u, context: c, message: `expected a message object, got ${describeValue(u)}` })
        continue
      }
      const r = normalize(u, now, c)
      if (r._tag === 'Left') {
        errors.push(...r.left)
        continue
      }
      m = r.right
    }
    if (m !== u && out === undefined) out = list.slice(0, i)
    out?.push(m)
    if (frozenTo === i && m === u && Object.isFrozen(u)) frozenTo++
  }
  if (errors.length > 0) return t.failures(errors)
  if (out === undefined && frozenTo > start) checkedLists.record(list as readonly AgentMessage[], { length: frozenTo })
  return t.success((out ?? list) as readonly AgentMessage[])
}

/** `readonly AgentMessage[]` from a list of message inputs (a transcript: strings are not messages). */
export const MessagesInput = (now: number): t.Type<readonly AgentMessage[], unknown, unknown> =>
  new t.Type<readonly AgentMessage[], unknown, unknown>(
    'ReadonlyArray<AgentMessage>',
    (u): u is readonly AgentMessage[] => Array.isArray(u),
    (u, c) => (Array.isArray(u) ? decodeList(u, now, false, c) : t.failure(u, c)),
    t.identity,
  )

/**
 * The time untimed messages get, while one of the codecs below decodes
 * (decoding is synchronous; set and restored around it). The codecs a run's
 * entry decodes with are built once, not per call: io-ts builds a codec's
 * closures, key lists and bound `decode` at construction, and `agentLoop`
 * decodes its prompts and context at every call. Measured (1,000 FANOUT runs
 * of an empty answer, allocation sampled with collected objects included):
 * 23.7 → 22.6 KB per run.
 */
let decodeTime = 0

/** Runs `decode` with `now` as the time untimed messages get. */
function decodedAt<A>(now: number, decode: () => A): A {
  const outer = decodeTime
  decodeTime = now
  try {
    return decode()
  } finally {
    decodeTime = outer
  }
}

const isList = (u: unknown): u is readonly AgentMessage[] => Array.isArray(u)

/** A list of prompts (strings are user messages), at {@link decodeTime}. */
const PromptList = new t.Type<readonly AgentMessage[], unknown, unknown>(
  'ReadonlyArray<string | AgentMessage>',
  isList,
  (u, c) => decodeList(u as unknown[], decodeTime, true, c, true),
  t.identity,
)

/** One prompt as a list of one, at {@link decodeTime}. */
const PromptOne = new t.Type<readonly AgentMessage[], unknown, unknown>('string | AgentMessage', isList, (u, c) => decodeList([u], decodeTime, true, c, false), t.identity)

/** One prompt or message, or a list: paths start at `what` (or `whats` for a list). */
function decodeOneOrMany(input: unknown, entry: string, now: number, what: string): readonly AgentMessage[] {
  const list = Array.isArray(input)
  // Decoded directly (see `UNREPORTED`); only a failure is decoded again through io-ts, for its paths.
  const direct = decodeList(list ? input : [input], now, true, UNREPORTED, list)
  if (direct._tag === 'Right') return direct.right
  const name = list ? `${what}s` : what
  return decodedAt(now, () => decodeInput(list ? PromptList : PromptOne, input, entry, name, name))
}

/**
 * Decodes a prompt (a string, a message, or a list of them) to canonical
 * messages. `images` join a text prompt's message.
 *
 * @throws InvalidInputError naming the path (`prompt.content`, `prompts[1].role`).
 */
export function decodePrompts(input: unknown, entry: string, now: number, images: readonly unknown[] = []): readonly AgentMessage[] {
  const messages = decodeOneOrMany(input, entry, now, 'prompt')
  if (images.length === 0) return messages
  const pictures = decodeInput(t.readonlyArray(ImageContent), images, entry, 'images', 'images')
  if (typeof input !== 'string') throw invalidInput(entry, 'images', 'images', 'images join a text prompt; put them in the message content instead')
  const m = messages[0] as UserMessage
  return [frozen(withFields<UserMessage>(m, { content: [...m.content, ...pictures] }))]
}

/** Decodes one message (a string is a user message). */
export function decodeMessage(input: unknown, entry: string, now: number): AgentMessage {
  if (Array.isArray(input)) throw invalidInput(entry, 'message', 'message', `expected one message, got ${describeValue(input)}`, input)
  return decodeOneOrMany(input, entry, now, 'message')[0]!
}

/**
 * Decodes a list of messages (not strings) that paths start at `root`.
 *
 * @throws InvalidInputError naming the path (`steering[0].content`).
 */
export function decodeMessages(list: readonly unknown[], entry: string, what: string, root: string, now: number): readonly AgentMessage[] {
  return decodedAt(now, () => decodeInput(MessagesNow, list, entry, what, root))
}

/** What a run works on, as the loop's entries decode it: a system prompt, a transcript, tools. */
export interface ContextInput {
  readonly systemPrompt: string
  readonly messages: readonly AgentMessage[]
  readonly tools: readonly AgentTool[]
}

/**
 * Decodes a run's context: the same object when it was canonical already.
 *
 * @throws InvalidInputError naming the path (`messages[3].content`, `tools[0].execute`).
 */
export function decodeContext<C extends ContextInput>(input: C, entry: string, now: number): C {
  // What the codec does for a valid context, without building it: its `t.type` takes an
  // `[object Object]` and returns it unless a field decoded to something new, then a copy
  // (`Object.assign`) with that field. Only a failure is decoded again through io-ts, for its paths.
  const u: unknown = input
  if (Object.prototype.toString.call(u) === '[object Object]') {
    const { systemPrompt, messages, tools } = u as Record<string, unknown>
    if (typeof systemPrompt === 'string' && Array.isArray(messages) && AgentTools.validate(tools, UNREPORTED)._tag === 'Right') {
      const decoded = decodeList(messages, now, false, UNREPORTED)
      if (decoded._tag === 'Right') return decoded.right === messages ? input : (Object.assign(Object.assign({}, input), { messages: decoded.right }) as C)
    }
  }
  return decodedAt(now, () => decodeInput(ContextCodec, input, entry, 'context') as C)
}

/** A transcript at {@link decodeTime}. */
const MessagesNow = new t.Type<readonly AgentMessage[], unknown, unknown>(
  'ReadonlyArray<AgentMessage>',
  isList,
  (u, c) => (Array.isArray(u) ? decodeList(u, decodeTime, false, c) : t.failure(u, c)),
  t.identity,
)

const ContextCodec = t.type({ systemPrompt: t.string, messages: MessagesNow, tools: AgentTools }, 'AgentContext')
