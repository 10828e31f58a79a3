/**
 * How a Responses API stream ends: the error of an `error` event, and the
 * stop reason and token usage of a finished response.
 */
import type { ChunkStopReason, UsageChunk } from '../types/chunk.js'
import { asCount, asRecord, stringOf, type Json } from './json.js'

/** The error object of an `error` event: flat (`{type:'error', code, message}`) or nested under `error`. */
export function errorOf(json: Json): { code?: string; message: string } {
  const inner = asRecord(json?.['error']) ?? json
  const code = stringOf(inner?.['code']) ?? (inner === json ? undefined : stringOf(inner?.['type']))
  const message = stringOf(inner?.['message']) ?? 'the response failed'
  return code === undefined ? { message } : { code, message }
}

/** Token counts of a finished response, as usage chunk fields (input excludes cached tokens). */
export function openaiUsage(usage: Json | undefined): UsageChunk | undefined {
  if (usage === undefined) return undefined
  const input = asCount(usage?.['input_tokens']) ?? 0
  const cached = Math.min(asCount(asRecord(usage?.['input_tokens_details'])?.['cached_tokens']) ?? 0, input)
  const output = asCount(usage?.['output_tokens']) ?? 0
  const reasoning = asCount(asRecord(usage?.['output_tokens_details'])?.['reasoning_tokens']) ?? 0
  const total = asCount(usage?.['total_tokens'])
  return {
    type: 'usage',
    input: input - cached,
    output,
    // Reasoning is part of output; a server reporting more would break the invariant.
    reasoning: Math.min(reasoning, output),
    cacheRead: cached,
    ...(total === undefined ? {} : { total }),
  }
}

/** The chunk stop reason of a finished response. */
export function openaiStopReason(status: string | undefined, incompleteReason: string | undefined, calledTools: boolean, refused: boolean): ChunkStopReason {
  if (status === 'incomplete') {
    if (incompleteReason === 'max_output_tokens') return 'maxTokens'
    if (incompleteReason === 'content_filter') return 'refusal'
  }
  if (refused) return 'refusal'
  return calledTools ? 'toolUse' : 'endTurn'
}
