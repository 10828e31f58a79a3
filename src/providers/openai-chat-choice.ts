/**
 * The parts of a Chat Completions chunk read outside the decoder's state:
 * the choice it is about, and content sent as a list of parts (Mistral).
 */
import type { ProviderChunk } from '../types/chunk.js'
import { isRecord, stringOf } from './json.js'

/** The choice of index 0 (or without an index), else the first. A loop: no closure per event. */
export function firstChoice(choices: readonly unknown[]): unknown {
  for (let i = 0; i < choices.length; i++) {
    const c = choices[i]
    if (isRecord(c) && (c['index'] === undefined || c['index'] === 0)) return c
  }
  return choices[0]
}

/** Content as a list of parts (Mistral): text, and thinking whose own parts hold text. */
export function contentParts(parts: readonly unknown[], out: ProviderChunk[]): void {
  for (const part of parts) {
    if (!isRecord(part)) continue
    if (part['type'] === 'text') {
      const text = stringOf(part['text']) ?? ''
      if (text !== '') out.push({ type: 'textDelta', text })
    } else if (part['type'] === 'thinking') {
      const inner = part['thinking']
      const text = typeof inner === 'string' ? inner : Array.isArray(inner) ? inner.map((p) => (isRecord(p) ? (stringOf(p['text']) ?? '') : '')).join('') : ''
      if (text !== '') out.push({ type: 'thinkingDelta', text })
    } else out.push({ type: 'extension', typeName: String(part['type'] ?? 'unknown'), data: part })
  }
}
