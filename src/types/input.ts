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
 * This file holds the entries' decoders (prompts, messages, a run's context);
 * the error is in invalid-input.ts, the message forms and the list decoding
 * (which remembers the lists that passed) in message-input.ts, both
 * re-exported here.
 */
import * as t from 'io-ts'
import { describeValue } from './codec.js'
import { ImageContent } from './content.js'
import { AgentTools, type AgentTool } from './tool.js'
import type { AgentMessage, UserMessage } from './message.js'
import { UNREPORTED, decodeInput, invalidInput } from './invalid-input.js'
import { decodeList, frozen, withFields, type TranscriptShape } from './message-input.js'

export { InvalidInputError, decodeInput, invalidInput, optional } from './invalid-input.js'
export { AgentMessageInput, MessagesInput, ToolResultMessageInput, UserMessageInput, newShape, type PromptInput, type TranscriptShape } from './message-input.js'

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
 * With `shape`, notes what the pass learned of the transcript (see
 * {@link TranscriptShape}; `complete` is false when it does not hold).
 *
 * @throws InvalidInputError naming the path (`messages[3].content`, `tools[0].execute`).
 */
export function decodeContext<C extends ContextInput>(input: C, entry: string, now: number, shape?: TranscriptShape): C {
  // What the codec does for a valid context, without building it: its `t.type` takes an
  // `[object Object]` and returns it unless a field decoded to something new, then a copy
  // (`Object.assign`) with that field. Only a failure is decoded again through io-ts, for its paths.
  const u: unknown = input
  if (Object.prototype.toString.call(u) === '[object Object]') {
    const { systemPrompt, messages, tools } = u as Record<string, unknown>
    if (typeof systemPrompt === 'string' && Array.isArray(messages) && AgentTools.validate(tools, UNREPORTED)._tag === 'Right') {
      const decoded = decodeList(messages, now, false, UNREPORTED, true, shape)
      if (decoded._tag === 'Right') return decoded.right === messages ? input : (Object.assign(Object.assign({}, input), { messages: decoded.right }) as C)
    }
  }
  if (shape !== undefined) shape.complete = false
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
