/** Builders for provider chunks and whole scripted responses. */
import type { ChunkStopReason, ProviderChunk, UsageChunk } from '../src/types/chunk.js'

/** Single chunks. */
export const chunk = {
  start: (id = 'msg', model = ''): ProviderChunk => ({ type: 'messageStart', id, model }),
  text: (text: string): ProviderChunk => ({ type: 'textDelta', text }),
  thinking: (text: string): ProviderChunk => ({ type: 'thinkingDelta', text }),
  signature: (signature: string): ProviderChunk => ({ type: 'thinkingSignature', signature }),
  redacted: (data: string): ProviderChunk => ({ type: 'thinkingRedacted', data }),
  toolStart: (id: string, name: string): ProviderChunk => ({ type: 'toolUseStart', id, name }),
  args: (id: string, fragment: string): ProviderChunk => ({ type: 'toolUseArgsDelta', id, fragment }),
  toolEnd: (id: string): ProviderChunk => ({ type: 'toolUseEnd', id }),
  stop: (reason: ChunkStopReason = 'endTurn'): ProviderChunk => ({ type: 'stop', reason }),
  usage: (fields: Omit<UsageChunk, 'type'>): ProviderChunk => ({ type: 'usage', ...fields }),
}

/** Splits `text` into `parts` pieces of near-equal length (at least one, never empty unless `text` is). */
export function splitText(text: string, parts: number): string[] {
  const n = Math.max(1, Math.min(parts, text.length))
  const size = Math.ceil(text.length / n)
  const out: string[] = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out.length === 0 ? [''] : out
}

/** A tool call as a model would stream it: start, `fragments` argument pieces, end. */
export function toolCallChunks(id: string, name: string, args: Record<string, unknown>, fragments = 1): ProviderChunk[] {
  return [chunk.toolStart(id, name), ...splitText(JSON.stringify(args), fragments).map((f) => chunk.args(id, f)), chunk.toolEnd(id)]
}

export interface ReplyOptions {
  /** Text deltas the text is split into. Default 1. */
  readonly deltas?: number
  /** Usage reported after `stop`. */
  readonly usage?: Omit<UsageChunk, 'type'>
  readonly id?: string
}

/** One tool call in a scripted reply. */
export interface ScriptedCall {
  readonly id: string
  readonly name: string
  readonly args: Record<string, unknown>
  /** Argument fragments. Default 1. */
  readonly fragments?: number
}

function tail(stop: ChunkStopReason, options: ReplyOptions): ProviderChunk[] {
  return options.usage === undefined ? [chunk.stop(stop)] : [chunk.stop(stop), chunk.usage(options.usage)]
}

/** Whole responses, from `messageStart` to `stop` (and usage). */
export const reply = {
  /** A text answer. */
  text: (text: string, options: ReplyOptions = {}): ProviderChunk[] => [
    chunk.start(options.id),
    ...splitText(text, options.deltas ?? 1).map(chunk.text),
    ...tail('endTurn', options),
  ],
  /** Optional text, then tool calls, stopping with `toolUse`. */
  toolCalls: (calls: readonly ScriptedCall[], options: ReplyOptions & { readonly text?: string } = {}): ProviderChunk[] => [
    chunk.start(options.id),
    ...(options.text === undefined ? [] : splitText(options.text, options.deltas ?? 1).map(chunk.text)),
    ...calls.flatMap((c) => toolCallChunks(c.id, c.name, c.args, c.fragments ?? 1)),
    ...tail('toolUse', options),
  ],
  /** Thinking (signed), then a text answer. */
  thinking: (thinking: string, text: string, options: ReplyOptions & { readonly signature?: string } = {}): ProviderChunk[] => [
    chunk.start(options.id),
    ...splitText(thinking, options.deltas ?? 1).map(chunk.thinking),
    chunk.signature(options.signature ?? 'sig'),
    ...splitText(text, options.deltas ?? 1).map(chunk.text),
    ...tail('endTurn', options),
  ],
}
