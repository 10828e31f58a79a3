/**
 * What a Gemini response's `finishReason` and `usageMetadata` mean in the
 * runtime's terms: the stop reason (or a failed turn), and the cumulative
 * counts with the usage chunk that brings the emitted sums up to them.
 */
import type { ChunkStopReason, UsageChunk } from '../types/chunk.js'
import type { ProviderErrorKind } from '../types/provider-error.js'
import { isRecord } from './json.js'

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.round(value) : 0)

/** Finish reasons that mean "the model would not answer this". */
const refusalReasons: ReadonlySet<string> = new Set([
  'SAFETY',
  'RECITATION',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'IMAGE_RECITATION',
])

/** Finish reasons that mean the model produced something unusable: the turn failed. */
export const failedReasons: ReadonlyMap<string, ProviderErrorKind> = new Map([
  ['MALFORMED_FUNCTION_CALL', 'protocol'],
  ['UNEXPECTED_TOOL_CALL', 'protocol'],
  ['TOO_MANY_TOOL_CALLS', 'protocol'],
  ['MALFORMED_RESPONSE', 'protocol'],
  // Our own replay lost a signature: sending the same request again fails the same way.
  ['MISSING_THOUGHT_SIGNATURE', 'invalidRequest'],
])

/**
 * How a finish reason ends the stream: a stop reason, or `error` for the
 * reasons that make the answer unusable. `STOP` with function calls is
 * `toolUse` (Gemini has no finish reason of its own for them).
 *
 * `OTHER`, `LANGUAGE`, `NO_IMAGE`, `IMAGE_OTHER` and reasons this adapter does
 * not know are a normal end: the content is kept, and the decoder records
 * the reason as a `google.finishReason` extension block so that apps can
 * see that the answer may be incomplete. Failing the turn instead would
 * throw away text the model did produce.
 */
export function googleStopReason(finishReason: string, hadToolCalls: boolean): ChunkStopReason | 'error' {
  if (failedReasons.has(finishReason)) return 'error'
  if (finishReason === 'MAX_TOKENS') return 'maxTokens'
  if (refusalReasons.has(finishReason)) return 'refusal'
  return hadToolCalls ? 'toolUse' : 'endTurn'
}

/** Cumulative counts in the runtime's terms (see `types/usage.ts`). */
export interface Counts {
  input: number
  output: number
  reasoning: number
  cacheRead: number
  total: number
}

/**
 * `usageMetadata` in the runtime's terms: `promptTokenCount` includes the
 * cached tokens, so input is the rest, plus the prompt of built-in tools;
 * `candidatesTokenCount` excludes thoughts, so output adds them back.
 */
export function googleUsage(meta: unknown): (Counts & { readonly promptKnown: boolean }) | undefined {
  if (!isRecord(meta)) return undefined
  const prompt = count(meta['promptTokenCount'])
  const cached = Math.min(count(meta['cachedContentTokenCount']), prompt)
  const toolPrompt = count(meta['toolUsePromptTokenCount'])
  const thoughts = count(meta['thoughtsTokenCount'])
  const candidates = count(meta['candidatesTokenCount'])
  const input = prompt - cached + toolPrompt
  const output = candidates + thoughts
  const total = typeof meta['totalTokenCount'] === 'number' ? count(meta['totalTokenCount']) : input + output + cached
  return { input, output, reasoning: thoughts, cacheRead: cached, total, promptKnown: typeof meta['promptTokenCount'] === 'number' }
}

/**
 * The usage chunk that brings the counts already `emitted` up to `target`
 * (adding its changes to `emitted`), or `undefined` when nothing changed.
 */
export function usageDelta(target: Counts, emitted: Counts): UsageChunk | undefined {
  const chunk: UsageChunk = { type: 'usage' }
  let any = false
  for (const field of ['input', 'output', 'reasoning', 'cacheRead', 'total'] as const) {
    // A count the last report lowered (promptTokenCount may go down) is a negative change: the last report wins.
    const delta = target[field] - emitted[field]
    if (delta === 0) continue
    chunk[field] = delta
    emitted[field] += delta
    any = true
  }
  return any ? chunk : undefined
}
