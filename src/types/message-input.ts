/**
 * Messages as the public entries accept them, decoded to their canonical
 * form: a user or tool-result message's `content` may be a string (one text
 * block) and its `timestamp` may be left out (the entry's clock fills it in).
 * Assistant and custom messages are taken in their canonical form only.
 *
 * Lists of frozen messages that passed are remembered (weakly): the
 * transcript an Agent passes to every run is checked once, and a longer one
 * over its new messages only.
 */
import * as t from 'io-ts'
import { NonNegativeInteger, describeValue, struct, taggedUnion } from './codec.js'
import { ToolCallContent, UserContent, text } from './content.js'
import { compileClassify, compileIs, compileScan } from './fast-is.js'
import { TranscriptMemo, type PrefixFacts } from './transcript-memo.js'
import { AgentMessage, AssistantMessage, CustomMessage, ToolResultMessage, type UserMessage } from './message.js'

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
export function withFields<M extends object>(message: M, fields: object): M {
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
export function frozen(message: AgentMessage): AgentMessage {
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
 *
 * Two of them, compiled apart: this one for prompts, and
 * {@link checkTranscriptMessage} for transcripts. Each reads the content
 * list of every message it checks, and V8 keeps one record of the array
 * layouts each read has seen: a prompt is frozen once a run took it
 * (`agentLoop`), a history loaded from storage is not, and a read that has
 * seen both layouts is a call into V8's generic element load (about 85
 * instructions) instead of an inline one. With one check for both, every
 * user message of LONG's 5,000 fresh ones paid it once a run's prompt (the
 * same `userMessage('go')` each run) had been frozen; and so did the
 * tool-call scan of every assistant message (`hasToolCall`, which also reads
 * the frozen answers of every turn). LONG 5,000 messages, 5 runs after a
 * full GC each, callgrind: 18.8M -> 16.9M instructions (and 16.1M with the
 * check noting the shape: see `compileClassify`).
 */
const isPromptMessage = compileIs(AgentMessage)

/** What the check of a transcript's message notes on the way (see {@link TranscriptShape}): a tool call or result. */
const TOOL_CALLS = 2
/** …a custom message. */
const CUSTOM = 4

/**
 * What {@link checkTranscriptMessage} notes of a message, read from it: for
 * a message that was normalized, and where the check cannot note it itself.
 */
function factsOf(message: AgentMessage): number {
  switch (message.role) {
    case 'assistant':
      return anyToolCall(message) ? TOOL_CALLS : 0
    case 'toolResult':
      return TOOL_CALLS
    case 'custom':
      return CUSTOM
    default:
      return 0
  }
}

/**
 * Whether an assistant message's content holds a tool call: `hasToolCall`,
 * with a read of content lists of its own, for the reason given above.
 */
function anyToolCall(message: AssistantMessage): boolean {
  const content = message.content
  for (let i = 0; i < content.length; i++) if (content[i]!.type === 'toolCall') return true
  return false
}

/**
 * The check of a transcript's messages (the other one of the two above):
 * `false`, or 1 with the bits of what it met ({@link TOOL_CALLS},
 * {@link CUSTOM}; see `compileClassify`).
 */
const TRANSCRIPT_MARKS = new Map<t.Mixed, number>([
  [ToolCallContent, TOOL_CALLS],
  [ToolResultMessage, TOOL_CALLS],
  [CustomMessage, CUSTOM],
])
const checkTranscriptMessage: (u: unknown) => number | false = compileClassify(AgentMessage, TRANSCRIPT_MARKS) ?? ((u) => (AgentMessage.is(u) ? 1 | factsOf(u) : false))

/** The same check over a transcript's messages in one generated loop (see `compileScan`); `undefined` where code cannot be generated. */
const transcriptScanner = compileScan(AgentMessage, TRANSCRIPT_MARKS)

/**
 * What {@link scanCanonical} found besides where it stopped: module variables (one scan at a
 * time), not fields of an object. A store to a field needs type feedback: a loop compiled (OSR)
 * in the first long transcript's scan, before a store after it ever ran, leaves its compiled code
 * there ("insufficient type feedback"), at every run (`--trace-deopt`).
 */
let scannedFrozenTo = 0
let scannedFacts = 0
let scannedFirstCustom = Number.POSITIVE_INFINITY

/**
 * The index of the first message from `start` on that is not a canonical
 * transcript message (`list.length` when all are), noting in module variables
 * the end of the frozen run from `start`, the bits the checks met and the
 * first custom message. The common case of {@link decodeList} (a valid
 * transcript) in the generated scanner, with each message's check inline.
 * Measured (LONG, 5,000 fresh messages, 10 runs after a full GC each,
 * callgrind): the check and the general loop took 285 instructions a message
 * (177 + 108), the scanner 187 (14.3M -> 9.3M over the 10 runs).
 */
function scanCanonical(list: readonly unknown[], start: number): number {
  // Where code cannot be generated, the general loop checks every message.
  if (transcriptScanner === undefined) {
    scannedFrozenTo = start
    scannedFacts = 0
    scannedFirstCustom = Number.POSITIVE_INFINITY
    return start
  }
  const end = transcriptScanner.scan(list, start)
  const facts = transcriptScanner.found()
  let frozenTo = start
  while (frozenTo < end && Object.isFrozen(list[frozenTo])) frozenTo++
  let firstCustom = Number.POSITIVE_INFINITY
  // Passed the check: messages. Read again only when a custom message is among them.
  if ((facts & CUSTOM) !== 0) for (let i = start; i < end && firstCustom === Number.POSITIVE_INFINITY; i++) if ((list[i] as AgentMessage).role === 'custom') firstCustom = i
  scannedFrozenTo = frozenTo
  scannedFacts = facts
  scannedFirstCustom = firstCustom
  return end
}

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
 * What the decoding pass over a transcript learned on the way, for the run's
 * later checks: each of them was a walk over the whole history of its own
 * (see `agentLoop`). Filled by {@link decodeList} when it is given one.
 */
export interface TranscriptShape {
  /** Whether every message was read (none skipped as known-checked): only then do the facts below hold. */
  complete: boolean
  /** Whether some message is a tool result, or an assistant message with a tool call. */
  toolCalls: boolean
  /** The index of the first custom message (Infinity if none). */
  firstCustom: number
}

/** A shape to fill (see {@link TranscriptShape}). */
export const newShape = (): TranscriptShape => ({ complete: false, toolCalls: false, firstCustom: Number.POSITIVE_INFINITY })

/**
 * A list of messages decoded and normalized: the same array when every message
 * was canonical already (a transcript keeps its identity), else a new one.
 * Strings in the list are read as user messages only when `strings` is set
 * (prompts); `indexed: false` reports a one-item list's paths without `[0]`.
 * With `shape`, the pass also notes what the run checks next (see
 * {@link TranscriptShape}) while each message is still in the cache.
 */
export function decodeList(
  list: readonly unknown[],
  now: number,
  strings: boolean,
  context: t.Context,
  indexed = true,
  shape?: TranscriptShape,
): t.Validation<readonly AgentMessage[]> {
  // A list that is, or extends, one whose messages all passed frozen is checked from where that one ended.
  const known = checkedLists.find(list as readonly AgentMessage[])
  const start = known === undefined ? 0 : Math.min(known.length, list.length)
  if (shape !== undefined) shape.complete = start === 0
  if (start === list.length) return t.success(list as readonly AgentMessage[])
  let out: unknown[] | undefined
  const errors: t.ValidationError[] = []
  // A transcript's canonical messages first, in a loop of their own (see `scanCanonical`).
  const from = strings ? start : scanCanonical(list, start)
  /** The end of the run of canonical frozen messages from the start. */
  let frozenTo = strings ? start : scannedFrozenTo
  let toolCalls = !strings && (scannedFacts & TOOL_CALLS) !== 0
  let firstCustom = strings ? Number.POSITIVE_INFINITY : scannedFirstCustom
  for (let i = from; i < list.length; i++) {
    const u = list[i]
    let m = u
    // What the check noted (see `checkTranscriptMessage`); -1 when it has to be read from the message.
    let facts = -1
    // Each check called by name: a call through a variable holding either was a generic call (19 instructions a message).
    const passed = typeof u === 'object' && u !== null && (strings ? isPromptMessage(u) : (facts = checkTranscriptMessage(u) || -1) !== -1)
    if (passed) {
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
    if (shape !== undefined) {
      // In locals, written to `shape` once at the end.
      if (facts === -1 || m !== u) facts = factsOf(m as AgentMessage)
      if ((facts & TOOL_CALLS) !== 0) toolCalls = true
      if ((facts & CUSTOM) !== 0 && firstCustom > i) firstCustom = i
    }
    if (frozenTo === i && m === u && Object.isFrozen(u)) frozenTo++
  }
  if (errors.length > 0) return t.failures(errors)
  if (shape !== undefined) {
    shape.toolCalls = toolCalls
    shape.firstCustom = firstCustom
  }
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
