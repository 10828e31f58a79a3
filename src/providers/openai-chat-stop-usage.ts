/**
 * How a Chat Completions answer ends in the runtime's terms: the chunk stop
 * reason of a `finish_reason`, and the token counts of a usage report.
 */
import type { ChunkStopReason, UsageChunk } from '../types/chunk.js'
import { openaiCompat, type Compat } from './openai-chat-compat.js'
import { asCount, asRecord, type Json } from './json.js'

/** `finish_reason` → chunk stop reason. `function_call` is the legacy name of `tool_calls`. */
const finishReasons: Readonly<Record<string, ChunkStopReason>> = {
  stop: 'endTurn',
  eos: 'endTurn',
  end_turn: 'endTurn',
  length: 'maxTokens',
  model_length: 'maxTokens',
  max_tokens: 'maxTokens',
  tool_calls: 'toolUse',
  function_call: 'toolUse',
  content_filter: 'refusal',
  stop_sequence: 'stopSequence',
}

/**
 * The chunk stop reason of a `finish_reason`. A refusal streamed as
 * `refusal` deltas is a refusal whatever the reason says; a server that
 * says `stop` after tool calls (Ollama, some vLLM parsers) asked for tools.
 */
export function openaiStopReason(reason: string | undefined, calledTools: boolean, refused: boolean): ChunkStopReason {
  if (refused) return 'refusal'
  const mapped = reason !== undefined && Object.hasOwn(finishReasons, reason) ? finishReasons[reason]! : 'endTurn'
  return mapped === 'endTurn' && calledTools ? 'toolUse' : mapped
}

/** Token counts in this runtime's terms (see `usage.ts`), from one OpenAI-style usage object. */
export function openaiUsage(usage: Json, compat: Pick<Compat, 'completionTokensIncludeReasoning'> = openaiCompat): Omit<UsageChunk, 'type'> {
  const prompt = asCount(usage['prompt_tokens']) ?? 0
  const completion = asCount(usage['completion_tokens']) ?? 0
  const total = asCount(usage['total_tokens'])
  // DeepSeek reports cache hits beside the standard details.
  const cached = Math.min(prompt, asCount(asRecord(usage['prompt_tokens_details'])?.['cached_tokens']) ?? asCount(usage['prompt_cache_hit_tokens']) ?? 0)
  const reasoning = asCount(asRecord(usage['completion_tokens_details'])?.['reasoning_tokens']) ?? asCount(usage['reasoning_tokens']) ?? 0
  // xAI counts reasoning outside completion_tokens; its total shows it.
  const excluded =
    reasoning > 0 && (total !== undefined ? total === prompt + completion + reasoning && total !== prompt + completion : !compat.completionTokensIncludeReasoning)
  const output = excluded ? completion + reasoning : completion
  return {
    input: prompt - cached,
    output,
    reasoning: Math.min(reasoning, output),
    cacheRead: cached,
    ...(total === undefined ? {} : { total }),
  }
}
