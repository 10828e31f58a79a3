/**
 * Messages in the GenAI conventions' JSON format (`gen_ai.input.messages`,
 * `gen_ai.output.messages`): `{ role, parts: [{ type, … }] }`. Written only
 * when the user opts in to content capture.
 */
import type { Content } from '../types/content.js'
import type { AgentMessage } from '../types/message.js'
import { finishReason } from './semconv.js'

/** One part of a message, as the conventions spell it. */
type Part =
  | { readonly type: 'text'; readonly content: string }
  | { readonly type: 'reasoning'; readonly content: string }
  | { readonly type: 'tool_call'; readonly id: string; readonly name: string; readonly arguments: unknown }
  | { readonly type: 'tool_call_response'; readonly id: string; readonly response: unknown }
  | { readonly type: 'uri'; readonly modality: 'image'; readonly uri: string }
  | { readonly type: 'blob'; readonly modality: 'image'; readonly mime_type: string; readonly content: string }
  | { readonly type: string; readonly content: unknown }

/** A message in the conventions' format. */
export interface SemconvMessage {
  readonly role: string
  readonly parts: readonly Part[]
  readonly finish_reason?: string
}

function part(block: Content): Part {
  switch (block.type) {
    case 'text':
      return { type: 'text', content: block.text }
    case 'thinking':
      return { type: 'reasoning', content: block.redacted === true ? '' : block.thinking }
    case 'toolCall':
      return { type: 'tool_call', id: block.id, name: block.name, arguments: block.arguments }
    case 'image':
      return block.source.type === 'url'
        ? { type: 'uri', modality: 'image', uri: block.source.url }
        : { type: 'blob', modality: 'image', mime_type: block.source.mimeType, content: block.source.data }
    case 'extension':
      return { type: block.typeName, content: block.data }
  }
}

/** `message` in the conventions' format; custom messages (never sent to a model) give `undefined`. */
export function semconvMessage(message: AgentMessage): SemconvMessage | undefined {
  switch (message.role) {
    case 'user':
      return { role: 'user', parts: message.content.map(part) }
    case 'assistant':
      return { role: 'assistant', parts: message.content.map(part), finish_reason: finishReason(message.stopReason) }
    case 'toolResult':
      return { role: 'tool', parts: [{ type: 'tool_call_response', id: message.toolCallId, response: message.content.map(part) }] }
    case 'custom':
      return undefined
  }
}

/** Messages as the JSON string an attribute holds. */
export function messagesJson(messages: readonly AgentMessage[]): string {
  const out: SemconvMessage[] = []
  for (const m of messages) {
    const converted = semconvMessage(m)
    if (converted !== undefined) out.push(converted)
  }
  return JSON.stringify(out)
}

/** Any value as a JSON string (a tool's arguments or result); what JSON cannot hold becomes its `String`. */
export function jsonString(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}
