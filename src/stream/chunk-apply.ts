/**
 * How a logged chunk changes a message: applied to an immer draft of a
 * snapshot (`applyChunks`, when a `MessageUpdate`'s message is read) or to
 * the fold's own working copy (`Head.apply`, per chunk). Also the strict
 * parse of a tool call's final arguments.
 */
import type { Draft } from 'immer'
import type { ChunkStopReason, ProviderChunk, UsageChunk } from '../types/chunk.js'
import type { StopReason } from '../types/stop-reason.js'
import type { AssistantMessage } from '../types/message.js'
import { sumRecords } from '../types/usage.js'
import { addToRecord } from '../types/codec.js'
import { freezeParsed, MAX_ARGUMENT_DEPTH } from '../types/deep-freeze.js'
import type { MessageUpdate } from './message-update.js'
import { streamingToolCall } from './partial-arguments.js'

/**
 * The chunks of type `K`: what a chunk is once its `type`, read once and handed on, has been
 * compared (see `MessageFold.log`). Internal.
 */
export type ChunkOf<K extends ProviderChunk['type']> = Extract<ProviderChunk, { readonly type: K }>

/** A usage chunk added to the draft's counts. A negative field is a revision down (see `UsageChunk`); no sum goes below 0. */
function addUsageChunk(draft: Working, chunk: UsageChunk): void {
  const u = draft.usage
  u.input = Math.max(0, u.input + (chunk.input ?? 0))
  u.output = Math.max(0, u.output + (chunk.output ?? 0))
  u.reasoning = Math.max(0, u.reasoning + (chunk.reasoning ?? 0))
  u.cacheRead = Math.max(0, u.cacheRead + (chunk.cacheRead ?? 0))
  u.cacheWrite = Math.max(0, u.cacheWrite + (chunk.cacheWrite ?? 0))
  u.total = Math.max(0, u.total + (chunk.total ?? 0))
  // A fresh object rather than edits of the draft: extra keys are data, and
  // defining a key such as `__proto__` safely is not possible on an immer draft.
  if (chunk.extra !== undefined) {
    const extra = sumRecords(u.extra, chunk.extra)
    for (const key of Object.keys(chunk.extra)) if ((extra[key] ?? 0) < 0) addToRecord(extra, key, -(extra[key] ?? 0))
    u.extra = extra
  }
}

/** What chunks change: an immer draft of a snapshot, or the fold's own working copy. */
export type Working = Pick<Draft<AssistantMessage>, 'content' | 'usage'>

/** The text a delta chunk appends, for the delta kinds that append. */
function appendedText(chunk: ProviderChunk): string | undefined {
  switch (chunk.type) {
    case 'textDelta':
    case 'thinkingDelta':
      return chunk.text
    case 'toolUseArgsDelta':
      return chunk.fragment
    default:
      return undefined
  }
}

/**
 * Applies `log[from..to)` to a draft. Runs of deltas into the same block are
 * joined first and written once: every write through an immer draft costs a
 * proxy trap, and a streamed block is mostly such runs.
 */
export function applyChunks(draft: Working, log: readonly MessageUpdate[], from: number, to: number, maxDepth: number): void {
  let i = from
  while (i < to) {
    const update = log[i]!
    const first = appendedText(update.chunk)
    if (first === undefined) {
      applyChunk(draft, update.chunk, update.contentIndex, maxDepth, true)
      i++
      continue
    }
    let joined = first
    let j = i + 1
    for (; j < to; j++) {
      const next = log[j]!
      if (next.chunk.type !== update.chunk.type || next.contentIndex !== update.contentIndex) break
      joined += appendedText(next.chunk)!
    }
    applyChunk(draft, j === i + 1 ? update.chunk : withText(update.chunk, joined), update.contentIndex, maxDepth, true)
    i = j
  }
}

function withText(chunk: ProviderChunk, text: string): ProviderChunk {
  return chunk.type === 'toolUseArgsDelta' ? { ...chunk, fragment: text } : { ...(chunk as { type: 'textDelta' | 'thinkingDelta' }), text }
}

/**
 * Applies one logged chunk to a draft; the log holds only chunks that passed
 * the contract. `drafted`: `draft` is an immer draft of a snapshot, whose
 * streaming tool calls are frozen blocks with a lazy `arguments` getter; such
 * a block is replaced, never edited (immer would copy it, reading the getter).
 * Otherwise it is the fold's own working copy, edited in place.
 */
export function applyChunk(draft: Working, chunk: ProviderChunk, i: number, maxDepth: number, drafted: boolean, type: ProviderChunk['type'] = chunk.type): void {
  const content = draft.content
  // `chunk.type`, or the caller's read of it (see `MessageFold.log`).
  switch (type) {
    case 'textDelta': {
      const block = content[i]
      const { text } = chunk as ChunkOf<'textDelta'>
      if (block?.type === 'text') block.text += text
      else content[i] = { type: 'text', text }
      return
    }
    case 'thinkingDelta': {
      const block = content[i]
      const { text } = chunk as ChunkOf<'thinkingDelta'>
      if (block?.type === 'thinking') block.thinking += text
      else content[i] = { type: 'thinking', thinking: text }
      return
    }
    case 'thinkingSignature': {
      const block = content[i]
      const { signature } = chunk as ChunkOf<'thinkingSignature'>
      if (block?.type === 'thinking') block.signature = (block.signature ?? '') + signature
      else content[i] = { type: 'thinking', thinking: '', signature }
      return
    }
    case 'thinkingRedacted':
      content[i] = { type: 'thinking', thinking: '', signature: (chunk as ChunkOf<'thinkingRedacted'>).data, redacted: true }
      return
    case 'extension': {
      const { typeName, data } = chunk as ChunkOf<'extension'>
      content[i] = { type: 'extension', typeName, data }
      return
    }
    case 'toolUseStart': {
      const { id, name } = chunk as ChunkOf<'toolUseStart'>
      content[i] = { type: 'toolCall', id, name, arguments: noArguments, partialJson: '' }
      return
    }
    case 'toolUseArgsDelta': {
      const block = content[i]
      if (block?.type !== 'toolCall') return
      const partialJson = (block.partialJson ?? '') + (chunk as ChunkOf<'toolUseArgsDelta'>).fragment
      if (drafted) content[i] = streamingToolCall(block.id, block.name, partialJson, maxDepth)
      else block.partialJson = partialJson
      return
    }
    case 'toolUseEnd': {
      const block = content[i]
      if (block?.type !== 'toolCall') return
      const raw = block.partialJson ?? ''
      const parsed = parseArguments(raw, maxDepth)
      // A new block rather than `delete block.partialJson`: deleting a property turns the
      // object into a slow dictionary in V8, and every later reader of the call pays for it.
      // A failed call is a new block too: a snapshot's streaming block is not edited (see `drafted`).
      content[i] = parsed.ok
        ? { type: 'toolCall', id: block.id, name: block.name, arguments: parsed.value }
        : { type: 'toolCall', id: block.id, name: block.name, arguments: noArguments, partialJson: raw, parseError: parsed.error }
      return
    }
    case 'usage':
      addUsageChunk(draft, chunk as ChunkOf<'usage'>)
      return
    case 'messageStart':
    case 'stop':
      return
  }
}

/** The reason a chunk-level stop maps to. `stopSequence` is a normal stop. Internal (see `MessageFold.push`). */
export const stopReasonOf: Record<ChunkStopReason, StopReason> = {
  endTurn: 'stop',
  stopSequence: 'stop',
  maxTokens: 'length',
  toolUse: 'toolUse',
  refusal: 'refusal',
}

/** A chunk's `type` for a violation's text, whatever the chunk is. Internal (see `MessageFold.push`). */
export function describeType(chunk: unknown): string {
  const type = typeof chunk === 'object' && chunk !== null ? (chunk as { type?: unknown }).type : undefined
  return typeof type === 'string' ? type : String(type)
}

/** The arguments of a call before its JSON is parsed, or of one streamed as `""`: shared, so frozen once. */
export const noArguments: Record<string, unknown> = Object.freeze({})

/**
 * Empty arguments mean "no arguments": several providers stream `""` for a
 * zero-argument call. The parsed value is frozen here, in the same walk that
 * checks it nests at most `maxDepth` levels (default {@link MAX_ARGUMENT_DEPTH}): model output is
 * untrusted, and a deeper value would overflow the stack of every recursive
 * walk after this one (immer's freeze, `JSON.stringify`, a tool's own code).
 * `JSON.parse` itself is not recursive in V8. Once per call, never per delta.
 */
function parseArguments(raw: string, maxDepth: number): { ok: true; value: Record<string, unknown> } | { ok: false; error: string } {
  if (raw.trim() === '') return { ok: true, value: noArguments }
  let value: unknown
  try {
    value = JSON.parse(raw)
  } catch (e) {
    return { ok: false, error: `arguments are not valid JSON (${(e as Error).message})` }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, error: `arguments must be a JSON object, got ${Array.isArray(value) ? 'an array' : JSON.stringify(value)}` }
  }
  if (!freezeParsed(value, maxDepth)) return { ok: false, error: `arguments are nested deeper than ${maxDepth} levels` }
  return { ok: true, value: value as Record<string, unknown> }
}
