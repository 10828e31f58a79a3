/**
 * Anthropic content as extension and content chunks: blocks that arrive
 * complete (a non-streamed message, or a `message_start` that lists content),
 * and the message-level data (stop details, container, context edits) kept
 * under {@link metaPrefix}, the prefix of extension type names that are not
 * content blocks of the API.
 */
import type { ExtensionChunk, ProviderChunk } from '../types/chunk.js'
import { protocolError } from './errors.js'
import { ANTHROPIC } from './anthropic-errors.js'
import { asRecord, isRecord, stringOf, type Json } from './json.js'

/** Prefix of extension type names that are not content blocks of the API (never replayed to it). */
export const metaPrefix = 'anthropic.'

/** The arguments of a complete tool call, as a JSON fragment (`""` for none). */
export function argsJson(input: unknown): string {
  if (input === undefined || input === null) return ''
  if (isRecord(input) && Object.keys(input).length === 0) return ''
  return JSON.stringify(input)
}

/** The chunks of one complete content block (from a non-streamed message, or a `message_start` that lists content). */
export function completeBlock(block: Json): ProviderChunk[] {
  switch (block['type']) {
    case 'text': {
      const text = stringOf(block['text']) ?? ''
      const out: ProviderChunk[] = text === '' ? [] : [{ type: 'textDelta', text }]
      const citations = block['citations']
      if (Array.isArray(citations) && citations.length > 0) out.push({ type: 'extension', typeName: `${metaPrefix}citations`, data: { type: 'citations', citations } })
      return out
    }
    case 'thinking': {
      const thinking = stringOf(block['thinking']) ?? ''
      const signature = stringOf(block['signature']) ?? ''
      const out: ProviderChunk[] = []
      if (thinking !== '') out.push({ type: 'thinkingDelta', text: thinking })
      if (signature !== '') out.push({ type: 'thinkingSignature', signature })
      return out
    }
    case 'redacted_thinking':
      return [{ type: 'thinkingRedacted', data: stringOf(block['data']) ?? '' }]
    case 'tool_use': {
      const id = stringOf(block['id'])
      const name = stringOf(block['name'])
      if (id === undefined || name === undefined) throw protocolError(ANTHROPIC, "a 'tool_use' block without an id or a name")
      const args = argsJson(block['input'])
      return [
        { type: 'toolUseStart', id, name },
        ...(args === '' ? [] : [{ type: 'toolUseArgsDelta' as const, id, fragment: args }]),
        { type: 'toolUseEnd', id },
      ]
    }
    default:
      return [{ type: 'extension', typeName: String(block['type'] ?? 'unknown'), data: block }]
  }
}

/** Adds the message-level data of a `message_delta` event (`json`, its `delta`) to `meta`, as extension chunks. */
export function addMessageMeta(meta: ExtensionChunk[], json: Json, delta: Json | undefined): void {
  const details = asRecord(delta?.['stop_details'])
  if (details !== undefined) meta.push({ type: 'extension', typeName: `${metaPrefix}stop_details`, data: details })
  const container = asRecord(delta?.['container'])
  if (container !== undefined) meta.push({ type: 'extension', typeName: `${metaPrefix}container`, data: container })
  const management = asRecord(json['context_management'])
  const edits = management?.['applied_edits']
  if (management !== undefined && Array.isArray(edits) && edits.length > 0) {
    meta.push({ type: 'extension', typeName: `${metaPrefix}context_management`, data: management })
  }
}
