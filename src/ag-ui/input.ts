/**
 * The input side of AG-UI: a `RunAgentInput` (what `@ag-ui/client` POSTs)
 * decoded with io-ts and turned into what an rxagent run starts from — the
 * transcript, the system text the client sent, and the client's own tools.
 *
 * Messages map role by role: `user` → user (text and image parts; a string is
 * one text block), `assistant` → assistant (its text, then its `toolCalls`,
 * whose JSON `arguments` must parse to an object), `tool` → a tool result
 * (named after the call it answers; `error` makes it an error result),
 * `system` / `developer` → the run's system text (joined, in order).
 * `reasoning` and `activity` messages are UI-side and are not sent to the model.
 */
import * as t from 'io-ts'
import { struct } from '../types/codec.js'
import { decodeInput, invalidInput } from '../types/input.js'
import { text, type ImageContent, type ToolCallContent, type UserContent } from '../types/content.js'
import { assistantMessage, type AgentMessage } from '../types/message.js'

const Metadata = t.UnknownRecord

const TextPart = struct('TextPart', { type: t.literal('text'), text: t.string }, { id: t.string, metadata: t.unknown })
const Source = t.union(
  [
    struct('DataSource', { type: t.literal('data'), value: t.string, mimeType: t.string }, {}),
    struct('UrlSource', { type: t.literal('url'), value: t.string }, { mimeType: t.string }),
    struct('FileSource', { type: t.literal('file'), value: t.string }, { provider: t.string, mimeType: t.string }),
  ],
  'PartSource',
)
const MediaPart = struct('MediaPart', { type: t.keyof({ image: null, audio: null, video: null, document: null }), source: Source }, { id: t.string, metadata: t.unknown })
const ContentPart = t.union([TextPart, MediaPart], 'ContentPart')
const Content = t.union([t.string, t.array(ContentPart)], 'string | ContentPart[]')

const ToolCall = struct(
  'ToolCall',
  { id: t.string, type: t.literal('function'), function: t.type({ name: t.string, arguments: t.string }, 'FunctionCall') },
  { encryptedValue: t.string },
)

const common = { name: t.string, encryptedValue: t.string, metadata: Metadata }
/** An AG-UI message, as far as rxagent reads it. */
export const AgUiMessage = t.union(
  [
    struct('UserMessage', { id: t.string, role: t.literal('user'), content: Content }, common),
    struct('AssistantMessage', { id: t.string, role: t.literal('assistant') }, { ...common, content: t.union([t.string, t.null]), toolCalls: t.array(ToolCall) }),
    struct('ToolMessage', { id: t.string, role: t.literal('tool'), content: Content, toolCallId: t.string }, { error: t.string, encryptedValue: t.string, metadata: Metadata }),
    struct('SystemMessage', { id: t.string, role: t.keyof({ system: null, developer: null }), content: t.string }, common),
    struct('UiMessage', { id: t.string, role: t.keyof({ reasoning: null, activity: null }) }, {}),
  ],
  'Message',
)
export type AgUiMessage = t.TypeOf<typeof AgUiMessage>

/** A tool the frontend runs (`RunAgentInput.tools`). */
export const AgUiTool = struct('Tool', { name: t.string, description: t.string }, { parameters: t.unknown, metadata: Metadata })
export type AgUiTool = t.TypeOf<typeof AgUiTool>

/** `RunAgentInput`, as far as rxagent reads it (unknown fields are kept in `raw`). */
export const RunAgentInputCodec = struct(
  'RunAgentInput',
  {
    threadId: t.string,
    runId: t.string,
    messages: t.array(AgUiMessage),
    tools: t.array(AgUiTool),
    context: t.array(t.type({ description: t.string, value: t.string }, 'Context')),
  },
  { state: t.unknown, forwardedProps: t.unknown, parentRunId: t.string, protocolVersion: t.string },
)
export type RunAgentInputData = t.TypeOf<typeof RunAgentInputCodec>

/** What a run starts from, decoded from a `RunAgentInput`. */
export interface AgUiRunInput {
  readonly threadId: string
  readonly runId: string
  /** The transcript, in rxagent's form. */
  readonly messages: readonly AgentMessage[]
  /** The client's `system` and `developer` messages and its `context` entries, joined (empty when none). */
  readonly system: string
  /** The tools the frontend runs: the run stops when the model calls one, leaving the call for the client. */
  readonly clientTools: readonly AgUiTool[]
  /** The client's state (`RunAgentInput.state`). */
  readonly state: unknown
  /** The input as received, decoded. */
  readonly raw: RunAgentInputData
}

function userContent(content: t.TypeOf<typeof Content>): UserContent[] {
  if (typeof content === 'string') return [text(content)]
  return content.map((part): UserContent => {
    if (part.type === 'text') return text(part.text)
    if (part.type === 'image' && part.source.type === 'data') return { type: 'image', source: { type: 'base64', data: part.source.value, mimeType: part.source.mimeType } } satisfies ImageContent
    if (part.type === 'image' && part.source.type === 'url') {
      const { mimeType } = part.source
      return { type: 'image', source: mimeType === undefined ? { type: 'url', url: part.source.value } : { type: 'url', url: part.source.value, mimeType } }
    }
    // Audio, video, documents and provider file handles travel as extension blocks: kept, never dropped.
    return { type: 'extension', typeName: `ag-ui.${part.type}`, data: part.source }
  })
}

function toolCall(call: t.TypeOf<typeof ToolCall>, path: string, entry: string): ToolCallContent {
  let args: unknown
  try {
    args = call.function.arguments.trim() === '' ? {} : JSON.parse(call.function.arguments)
  } catch (error) {
    throw invalidInput(entry, 'input', `${path}.function.arguments`, `JSON (${error instanceof Error ? error.message : String(error)})`, call.function.arguments)
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    throw invalidInput(entry, 'input', `${path}.function.arguments`, 'a JSON object', args)
  }
  return { type: 'toolCall', id: call.id, name: call.function.name, arguments: args as ToolCallContent['arguments'] }
}

/**
 * Decodes a `RunAgentInput` (as parsed from the request body) into what a run
 * starts from. Throws an `InvalidInputError` naming the path of the first
 * problem (`decodeRunAgentInput: invalid input at messages[2].toolCallId: …`).
 */
export function decodeRunAgentInput(u: unknown, entry = 'decodeRunAgentInput', now = Date.now()): AgUiRunInput {
  const raw = decodeInput(RunAgentInputCodec, u, entry, 'input')
  const messages: AgentMessage[] = []
  const system: string[] = []
  const callNames = new Map<string, string>()
  raw.messages.forEach((m, i) => {
    const path = `messages[${i}]`
    switch (m.role) {
      case 'user':
        messages.push({ role: 'user', content: userContent(m.content), timestamp: now })
        return
      case 'assistant': {
        const calls = (m.toolCalls ?? []).map((c, j) => toolCall(c, `${path}.toolCalls[${j}]`, entry))
        for (const c of calls) callNames.set(c.id, c.name)
        const content = [...(typeof m.content === 'string' && m.content !== '' ? [text(m.content)] : []), ...calls]
        messages.push(assistantMessage(content, { provider: 'ag-ui', model: 'client', stopReason: calls.length > 0 ? 'toolUse' : 'stop', timestamp: now }))
        return
      }
      case 'tool': {
        const name = callNames.get(m.toolCallId)
        if (name === undefined) throw invalidInput(entry, 'input', `${path}.toolCallId`, 'the id of a tool call of an earlier assistant message', m.toolCallId)
        const content = userContent(m.content)
        messages.push({ role: 'toolResult', toolCallId: m.toolCallId, toolName: name, content: m.error === undefined ? content : [...content, text(m.error)], isError: m.error !== undefined, timestamp: now })
        return
      }
      case 'system':
      case 'developer':
        system.push(m.content)
        return
      default:
        return
    }
  })
  for (const c of raw.context) system.push(`${c.description}: ${c.value}`)
  return { threadId: raw.threadId, runId: raw.runId, messages, system: system.join('\n\n'), clientTools: raw.tools, state: raw.state, raw }
}
