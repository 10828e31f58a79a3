/**
 * Anthropic stop reasons and token usage in the runtime's terms: the chunk
 * stop reason, and the cumulative counts with the usage chunk that brings
 * what was already sent up to them.
 */
import type { ChunkStopReason, UsageChunk } from '../types/chunk.js'
import { asCount, asRecord, countAt, type Json } from './json.js'

/**
 * Anthropic stop reasons → chunk stop reasons. `pause_turn` (a server tool
 * paused a long turn) ends the turn: the app may send the message back to
 * let the model continue. `model_context_window_exceeded` is a length stop.
 */
const stopReasons: Readonly<Record<string, ChunkStopReason>> = {
  end_turn: 'endTurn',
  max_tokens: 'maxTokens',
  stop_sequence: 'stopSequence',
  tool_use: 'toolUse',
  pause_turn: 'endTurn',
  refusal: 'refusal',
  model_context_window_exceeded: 'maxTokens',
}

/** The chunk stop reason of an Anthropic `stop_reason`; an unknown or missing one ends the turn (or asks for tools, if any were called). */
export function anthropicStopReason(reason: string | undefined, calledTools: boolean): ChunkStopReason {
  if (reason !== undefined && Object.hasOwn(stopReasons, reason)) return stopReasons[reason]!
  return calledTools ? 'toolUse' : 'endTurn'
}

/** Cumulative token counts, as Anthropic reports them (input already excludes cache reads and writes). */
export interface Counts {
  input: number
  output: number
  cacheRead: number
  cacheWrite: number
  extra: Record<string, number>
}

export const noCounts = (): Counts => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, extra: {} })

/** `usage` over `base`: fields the server sent replace the earlier ones (they are cumulative). */
export function readCounts(usage: Json | undefined, base: Counts): Counts {
  if (usage === undefined) return base
  const extra = { ...base.extra }
  const server = asRecord(usage['server_tool_use'])
  if (server !== undefined) {
    for (const key of Object.keys(server)) {
      const n = countAt(server, key)
      if (n !== undefined && n > 0) extra[key] = n
    }
  }
  return {
    input: asCount(usage['input_tokens']) ?? base.input,
    output: asCount(usage['output_tokens']) ?? base.output,
    cacheRead: asCount(usage['cache_read_input_tokens']) ?? base.cacheRead,
    cacheWrite: asCount(usage['cache_creation_input_tokens']) ?? base.cacheWrite,
    extra,
  }
}

/**
 * What `next` changes from `sent`, as a usage chunk (undefined if nothing),
 * and `sent` moved to `next`. A count the server revised down (context
 * editing lowers `input_tokens` in `message_delta`) is a negative field: the
 * server's last report wins, and the summed chunks equal it.
 */
export function usageDelta(next: Counts, sent: Counts): UsageChunk | undefined {
  const chunk: { -readonly [K in keyof UsageChunk]: UsageChunk[K] } = { type: 'usage' }
  const step = (key: 'input' | 'output' | 'cacheRead' | 'cacheWrite'): void => {
    const d = next[key] - sent[key]
    if (d !== 0) {
      chunk[key] = d
      sent[key] = next[key]
    }
  }
  step('input')
  step('output')
  step('cacheRead')
  step('cacheWrite')
  const extra: Record<string, number> = {}
  for (const key of Object.keys(next.extra)) {
    const d = (next.extra[key] ?? 0) - (sent.extra[key] ?? 0)
    if (d !== 0) {
      extra[key] = d
      sent.extra[key] = next.extra[key]!
    }
  }
  if (Object.keys(extra).length > 0) chunk.extra = extra
  return Object.keys(chunk).length > 1 ? chunk : undefined
}
