/**
 * The Anthropic request body as JSON text, assembled from each message's
 * cached text (see `wire-cache.ts`): the same text as
 * `JSON.stringify(anthropicRequestBody(request, settings))`, without
 * converting and serializing the whole transcript again every turn.
 *
 * WIRE 50 tool turns, client CPU µs per delta, medians of 10 alternating
 * rounds of `node --expose-gc bench/wire/worker.mjs rxagent <api> tools 10`
 * (the build before, then with this file, `openai-chat-request-text.ts` and
 * frozen tool results), on a loaded 2-core machine: Anthropic 60.4 → 57.2,
 * OpenAI 62.7 → 51.8 (OpenAI's builder also serialized every tool call's
 * arguments again each turn). Building the 51 bodies of that conversation,
 * UTF-8 encoding included, alone: 4.6 → 0.9 ms (min of 40).
 *
 * Nor assembling it again: a transcript that extends one built before for the
 * same model (the next turn of a conversation) goes on from the text that one
 * reached before its last user message (the one that may get
 * `cache_control`), so a turn reads its new messages only (see
 * `openai-chat-request-text.ts`).
 */
import type { AgentMessage, LlmMessage } from '../types/message.js'
import { TranscriptMemo, type PrefixFacts } from '../types/transcript-memo.js'
import type { LlmRequest } from '../types/request.js'
import type { Json } from './json.js'
import { anthropicBodyFields, anthropicCacheControl, anthropicWireMessage, type AnthropicRequestSettings } from './anthropic-request.js'
import { replayedWithPrefix } from './replay.js'
import { JsonText, WirePieces } from './wire-cache.js'

/** One message's blocks as JSON text: all but the last joined by commas, and the last apart (it may get `cache_control`). */
interface Piece {
  readonly role: 'user' | 'assistant'
  /** The blocks before the last, comma-separated ('' when there is one block or none). */
  readonly head: string
  /** The last block (`undefined`: the message has no blocks and is left out), and its text. */
  readonly last: Json | undefined
  readonly lastText: string
}

const pieces = new WirePieces<LlmMessage, Piece>()

/**
 * What the request for a transcript's first `length` messages (all frozen,
 * replayed as they are) reached for `target`: the messages text of its
 * first `resume` messages, not yet closed, where the next request of the
 * conversation goes on. It stops before the last user piece (which gets
 * `cache_control`), or covers the whole transcript when it has none.
 */
interface Assembled extends PrefixFacts {
  readonly target: string
  readonly resume: number
  readonly text: string
  /** The role of the message left open at the end of `text`. */
  readonly role: Piece['role'] | undefined
  /**
   * The body last built from this assembly, and where `text` starts in it:
   * the next turn takes its prefix from there (see {@link prefixText}). Only
   * the newest assembly of a conversation keeps one: handed on, it is dropped.
   */
  sent: { readonly body: string; readonly at: number } | undefined
}

/**
 * The text of `from`, as the next body is assembled from it. `from.text` is
 * a tree of every piece of the conversation so far (shared by the
 * assemblies of all its turns), and sending a body flattens it: a walk of
 * every leaf, each turn, that was the largest single cost of the Anthropic
 * adapter's request (`Buffer.byteLength` in `--cpu-prof`/`perf` of WIRE
 * Anthropic tools). The body sent last holds the same text flat (the
 * transport flattened it), so a slice of it makes the new body's
 * flattening a copy.
 */
function prefixText(from: Assembled): string {
  const sent = from.sent
  return sent === undefined ? from.text : sent.body.slice(sent.at, sent.at + from.text.length)
}

/** Texts reached, by transcript (see transcript-memo.ts): the next turn's transcript finds its prefix's. */
const assemblies = new TranscriptMemo<Assembled>()

/** Block text as an array element: `JSON.stringify` of a block whose `toJSON` gives nothing is `null` there. */
const blockText = (block: Json): string => JSON.stringify(block) ?? 'null'

/** The piece of one replayed message for the request's model (its provider and id: nothing else of the request is read). */
function pieceOf(message: LlmMessage, request: LlmRequest): Piece {
  const { role, content } = anthropicWireMessage(message, request.model)
  const last = content.at(-1)
  const head = content.length <= 1 ? '' : content.slice(0, -1).map(blockText).join(',')
  return { role, head, last, lastText: last === undefined ? '' : blockText(last) }
}

/** The body of {@link anthropicRequestBody}, serialized. Throws what `JSON.stringify` of that body would (a cycle, a `BigInt`, a value nested too deep). */
export function anthropicRequestText(request: LlmRequest, settings: AnthropicRequestSettings = {}): JsonText {
  const cache = anthropicCacheControl(request.options)
  const target = `${request.model.provider}\u0000${request.model.modelId}`
  const build = (m: LlmMessage): Piece => pieceOf(m, request)
  const all = request.messages
  const { replayed, prefix } = replayedWithPrefix(assemblies, all)
  // Replayed as it is (the usual case): the messages an earlier request assembled for this model need not be read again.
  const from = replayed === all && prefix?.target === target ? prefix : undefined
  const start = from?.resume ?? 0
  let cached = replayed === all
  const parts: Piece[] = []
  /** The index in `replayed` of each part. */
  const at: number[] = []
  // The last user message's last block gets `cache_control`: the last block of the last user piece with blocks.
  let marked = -1
  for (let i = start; i < replayed.length; i++) {
    const m = replayed[i]!
    const piece = pieces.of(m, target, build)
    // Only what cannot change is remembered: every message's piece cached.
    if (cached && !pieces.has(m, target)) cached = false
    if (piece.last === undefined) continue
    if (piece.role === 'user') marked = parts.length
    parts.push(piece)
    at.push(i)
  }
  // The new messages' text, after `from`'s (or after the opening bracket).
  const base = from?.text ?? '['
  let added = ''
  let role: Piece['role'] | undefined = from?.role
  let reached: Assembled | undefined
  for (let i = 0; i < parts.length; i++) {
    const piece = parts[i]!
    if (i === marked) reached = { length: replayed.length, target, resume: at[i]!, text: base + added, role, sent: undefined }
    if (piece.role !== role) {
      added += role === undefined ? `{"role":"${piece.role}","content":[` : `]},{"role":"${piece.role}","content":[`
      role = piece.role
    } else added += ','
    if (piece.head !== '') added += `${piece.head},`
    added += cache !== undefined && i === marked ? blockText({ ...piece.last, cache_control: cache }) : piece.lastText
  }
  reached ??= { length: replayed.length, target, resume: replayed.length, text: base + added, role, sent: undefined }
  // The whole transcript is covered (a frozen one is then remembered as it is, not copied).
  const recorded = cached && reached.length > (from?.length ?? 0)
  if (recorded) assemblies.record(all as readonly AgentMessage[], reached)
  const messages = `${from === undefined ? base : prefixText(from)}${added}${role === undefined ? ']' : ']}]'}`
  const { head, tail } = anthropicBodyFields(request, settings, cache)
  const tailText = JSON.stringify(tail)
  const opening = `${JSON.stringify(head).slice(0, -1)},"messages":`
  const body = `${opening}${messages}${tailText === '{}' ? '}' : `,${tailText.slice(1)}`}`
  if (recorded) {
    reached.sent = { body, at: opening.length }
    if (from !== undefined) from.sent = undefined
  }
  return new JsonText(body)
}
