/**
 * Messages, tagged by `role`. `LlmMessage` is what a model sees; `AgentMessage`
 * adds custom messages that live in the transcript for the app and are never
 * sent to a model.
 */
import * as t from 'io-ts'
import { NonNegativeInteger, struct, taggedUnion } from './codec.js'
import { AssistantContent, UserContent, text, type Content } from './content.js'
import { StopReason } from './stop-reason.js'
import { ProviderErrorKind } from './provider-error.js'
import { Cost, Usage, emptyCost, emptyUsage } from './usage.js'

/** What the user said: text, images, extension blocks. `timestamp` is milliseconds since the epoch. */
export const UserMessage = t.type(
  { role: t.literal('user'), content: t.readonlyArray(UserContent), timestamp: NonNegativeInteger },
  'UserMessage',
)
export type UserMessage = t.TypeOf<typeof UserMessage>

/** What a model answered, fully annotated; failed and aborted answers are kept too. */
export const AssistantMessage = struct(
  'AssistantMessage',
  {
    role: t.literal('assistant'),
    content: t.readonlyArray(AssistantContent),
    provider: t.string,
    model: t.string,
    usage: Usage,
    cost: Cost,
    stopReason: StopReason,
    timestamp: NonNegativeInteger,
  },
  {
    /** Set when `stopReason` is `error` or `aborted`: what went wrong, in words. */
    errorMessage: t.string,
    /** The provider's id for this response. */
    responseId: t.string,
    /** Set when a classified provider error ended the message: its kind, for retry and fallback decisions. */
    errorKind: ProviderErrorKind,
  },
)
export type AssistantMessage = t.TypeOf<typeof AssistantMessage>

/** A tool's answer to one tool call. `details` is for the app and is never sent to a model. */
export const ToolResultMessage = struct(
  'ToolResultMessage',
  {
    role: t.literal('toolResult'),
    toolCallId: t.string,
    toolName: t.string,
    content: t.readonlyArray(UserContent),
    isError: t.boolean,
    timestamp: NonNegativeInteger,
  },
  { details: t.unknown },
)
export type ToolResultMessage = t.TypeOf<typeof ToolResultMessage>

/** A message a model can see. */
export const LlmMessage = taggedUnion('role', [UserMessage, AssistantMessage, ToolResultMessage], 'LlmMessage')
export type LlmMessage = t.TypeOf<typeof LlmMessage>

/**
 * An app's own message in the transcript (a notice, a marker, UI state). It is
 * dropped by the default `convertToLlm`, so it never reaches a model.
 */
export const CustomMessage = struct(
  'CustomMessage',
  { role: t.literal('custom'), kind: t.string, data: t.unknown },
  { timestamp: NonNegativeInteger },
)
export type CustomMessage = t.TypeOf<typeof CustomMessage>

/** Any message in an agent's transcript. */
export const AgentMessage = taggedUnion(
  'role',
  [UserMessage, AssistantMessage, ToolResultMessage, CustomMessage],
  'AgentMessage',
)
export type AgentMessage = t.TypeOf<typeof AgentMessage>

/** A custom message kind with a typed `data` payload. */
export interface CustomMessageKind<K extends string, D> {
  readonly kind: K
  /** Validates a whole custom message of this kind. */
  readonly codec: t.Type<CustomMessageOf<K, D>, unknown, unknown>
  /** Builds a message of this kind. */
  readonly create: (data: D, timestamp?: number) => CustomMessageOf<K, D>
  /** Whether `m` is a message of this kind (by its `kind` tag; decode with `codec` to check the data). */
  readonly is: (m: AgentMessage) => m is CustomMessageOf<K, D> & AgentMessage
}

/** The static type of a custom message of kind `K` with data `D`. */
export interface CustomMessageOf<K extends string, D> {
  readonly role: 'custom'
  readonly kind: K
  readonly data: D
  readonly timestamp?: number
}

/**
 * Registers a custom message kind: its data is validated by `data` wherever
 * an {@link agentMessageCodec} built with it decodes a transcript.
 *
 * @example
 * const Note = defineCustomMessage('note', t.type({ text: t.string }))
 * const Transcript = t.readonlyArray(agentMessageCodec([Note]))
 */
export function defineCustomMessage<K extends string, D>(kind: K, data: t.Type<D, unknown, unknown>): CustomMessageKind<K, D> {
  const codec = struct(`CustomMessage<${kind}>`, { role: t.literal('custom'), kind: t.literal(kind), data }, { timestamp: NonNegativeInteger })
  return {
    kind,
    codec: codec as unknown as t.Type<CustomMessageOf<K, D>, unknown, unknown>,
    create: (d, timestamp) => (timestamp === undefined ? { role: 'custom', kind, data: d } : { role: 'custom', kind, data: d, timestamp }),
    is: (m): m is CustomMessageOf<K, D> & AgentMessage => m.role === 'custom' && m.kind === kind,
  }
}

/** What {@link agentMessageCodec} needs of a kind: any {@link CustomMessageKind} fits. */
export interface RegisteredKind {
  readonly kind: string
  readonly codec: t.Decoder<unknown, unknown> & { readonly is: (u: unknown) => boolean; readonly encode: (a: never) => unknown }
}

/**
 * An `AgentMessage` codec that also checks the data of the given custom kinds,
 * and rejects custom kinds it does not know.
 */
export function agentMessageCodec(kinds: readonly RegisteredKind[]): t.Type<AgentMessage, unknown, unknown> {
  const byKind = new Map(kinds.map((k) => [k.kind, k.codec] as const))
  const known = [...byKind.keys()].map((k) => `'${k}'`).join(' | ') || '(none registered)'
  return new t.Type<AgentMessage, unknown, unknown>(
    'AgentMessage',
    (u): u is AgentMessage => AgentMessage.is(u) && (u.role !== 'custom' || (byKind.get(u.kind)?.is(u) ?? false)),
    (u, c) => {
      const base = AgentMessage.validate(u, c)
      if (base._tag === 'Left' || base.right.role !== 'custom') return base
      const codec = byKind.get(base.right.kind)
      if (codec === undefined) return t.failure(u, c, `unknown custom message kind '${base.right.kind}', expected one of ${known}`)
      const checked = codec.validate(u, t.appendContext(c, '', codec, u))
      // The kind's codec may convert or strip its data: its output is the decoded message.
      return checked._tag === 'Left' ? checked : t.success(checked.right as AgentMessage)
    },
    (a) => {
      const codec = a.role === 'custom' ? byKind.get(a.kind) : undefined
      return codec === undefined ? AgentMessage.encode(a) : codec.encode(a as never)
    },
  )
}

/** Whether `m` can be sent to a model. */
export const isLlmMessage = (m: AgentMessage): m is LlmMessage => m.role !== 'custom'

/** A user message with one text block (or the given blocks). */
export function userMessage(content: string | readonly UserContent[], timestamp = 0): UserMessage {
  return { role: 'user', content: typeof content === 'string' ? [text(content)] : [...content], timestamp }
}

/** An assistant message with the given content and neutral metadata; handy in tests and fixtures. */
export function assistantMessage(
  content: string | readonly AssistantContent[],
  fields: Partial<Omit<AssistantMessage, 'role' | 'content'>> = {},
): AssistantMessage {
  return {
    role: 'assistant',
    content: typeof content === 'string' ? [text(content)] : [...content],
    provider: 'unknown',
    model: 'unknown',
    usage: emptyUsage,
    cost: emptyCost,
    stopReason: 'stop',
    timestamp: 0,
    ...fields,
  }
}

/**
 * Whether an assistant message has a tool call. A loop, not `toolCallsOf(…)
 * .length` nor `some` with an arrow: the turn protocol asks twice a turn, and
 * decoding a transcript asks of every assistant message in the history.
 */
export function hasToolCall(message: AssistantMessage): boolean {
  const content = message.content
  for (let i = 0; i < content.length; i++) if (content[i]!.type === 'toolCall') return true
  return false
}

/** The tool calls of an assistant message, in order. */
export function toolCallsOf(message: AssistantMessage): Extract<Content, { type: 'toolCall' }>[] {
  // A loop, not `filter` with an arrow: called on every tool turn, over a frozen array.
  const calls: Extract<Content, { type: 'toolCall' }>[] = []
  const content = message.content
  for (let i = 0; i < content.length; i++) {
    const block = content[i]!
    if (block.type === 'toolCall') calls.push(block)
  }
  return calls
}
