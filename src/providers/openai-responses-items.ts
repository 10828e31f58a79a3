/**
 * The output items of a Responses API stream: what the decoder tracks of
 * each, and the chunks a finished message or reasoning item adds (what its
 * deltas missed, then its `openai.message` marker or its signature), and
 * the chunks that end a call.
 */
import type { ProviderChunk } from '../types/chunk.js'
import { isRecord, stringOf, type Json } from './json.js'
import { unwrapParallel } from './openai-responses-parallel.js'

/** Type name of the extension chunk closing each message item. */
export const MESSAGE_MARKER = 'openai.message'

/** What the decoder tracks of one output item. */
export type ItemState =
  /** `text`: what was streamed of the item so far; `part`: which summary or content part it is in. */
  | { kind: 'message'; text: string }
  | { kind: 'reasoning'; text: string; part: string | undefined }
  | {
      kind: 'call'
      custom: boolean
      /** A parallel wrapper: nothing is emitted until its arguments are complete. */
      wrapper: boolean
      runtimeId: string
      name: string
      callId: string
      ended: boolean
      /** Arguments (or custom input) received so far. */
      args: string
    }
  | { kind: 'other' }

/** The non-empty `text` fields of a list of parts, one blank line apart (how summary parts are streamed). */
function joinTexts(parts: unknown): string {
  if (!Array.isArray(parts)) return ''
  return parts
    .map((p) => (isRecord(p) ? (stringOf(p?.['text']) ?? '') : ''))
    .filter((t) => t !== '')
    .join('\n\n')
}

/**
 * What a finished item holds beyond what was streamed of it: the first of
 * `finals` that extends `streamed`, minus `streamed`. Streamed text cannot be
 * taken back, so a final text that contradicts it adds nothing.
 */
export function remainder(streamed: string, finals: readonly string[]): string {
  for (const final of finals) if (final.length > streamed.length && final.startsWith(streamed)) return final.slice(streamed.length)
  return ''
}

/**
 * A finished message item (`output_item.done`): the text its deltas missed
 * (`streamed` is what they gave), then its marker. Returns whether the item
 * holds a refusal.
 */
export function messageItemDone(out: ProviderChunk[], item: Json, streamed: string): boolean {
  const parts = Array.isArray(item['content']) ? item['content'].filter(isRecord) : []
  const refused = parts.some((p) => stringOf(p?.['type']) === 'refusal')
  const full = parts.map((p) => stringOf(p?.['text']) ?? stringOf(p?.['refusal']) ?? '').join('')
  const rest = remainder(streamed, [full])
  if (rest !== '') out.push({ type: 'textDelta', text: rest })
  const annotations = parts.flatMap((p) => (Array.isArray(p['annotations']) ? p['annotations'] : []))
  const phase = item['phase']
  out.push({
    type: 'extension',
    typeName: MESSAGE_MARKER,
    data: { id: stringOf(item?.['id']) ?? '', ...(phase === undefined || phase === null ? {} : { phase }), ...(annotations.length === 0 ? {} : { annotations }) },
  })
  return refused
}

/**
 * A finished reasoning item: the thinking its deltas missed (added to
 * `state`, when the item was streamed), then its signature, the JSON of
 * `{id, encrypted_content, summary}` (`key` stands for a missing id).
 */
export function reasoningItemDone(out: ProviderChunk[], item: Json, key: string, state: (ItemState & { kind: 'reasoning' }) | undefined): void {
  const summary = Array.isArray(item['summary']) ? item['summary'] : []
  const reasoning = state ?? { kind: 'reasoning' as const, text: '', part: undefined }
  const rest = remainder(reasoning.text, [joinTexts(summary), joinTexts(item['content'])])
  if (rest !== '') {
    reasoning.text += rest
    out.push({ type: 'thinkingDelta', text: rest })
  }
  const encrypted = stringOf(item?.['encrypted_content'])
  out.push({
    type: 'thinkingSignature',
    signature: JSON.stringify({ id: stringOf(item?.['id']) ?? key, ...(encrypted === undefined ? {} : { encrypted_content: encrypted }), summary }),
  })
}

/** Ends a call with the complete arguments the server stated (if any): what the deltas missed is sent first. */
export function endCall(out: ProviderChunk[], call: ItemState & { kind: 'call' }, complete: string | undefined): void {
  if (call.ended) return
  call.ended = true
  const rest = remainder(call.args, complete === undefined ? [] : [complete])
  if (rest !== '') {
    call.args += rest
    if (!call.custom && !call.wrapper) out.push({ type: 'toolUseArgsDelta', id: call.runtimeId, fragment: rest })
  }
  if (call.wrapper) {
    const calls = unwrapParallel(call.args)
    if (calls !== undefined) {
      calls.forEach((c, k) => {
        const id = `${call.callId}_${k + 1}`
        out.push({ type: 'toolUseStart', id, name: c.name }, { type: 'toolUseArgsDelta', id, fragment: JSON.stringify(c.args) }, { type: 'toolUseEnd', id })
      })
      return
    }
    // Not the wrapper's shape after all: the call is kept as the model made it.
    out.push({ type: 'toolUseStart', id: call.runtimeId, name: call.name }, { type: 'toolUseArgsDelta', id: call.runtimeId, fragment: call.args })
  } else if (call.custom) {
    out.push({ type: 'toolUseArgsDelta', id: call.runtimeId, fragment: JSON.stringify({ input: call.args }) })
  }
  out.push({ type: 'toolUseEnd', id: call.runtimeId })
}
