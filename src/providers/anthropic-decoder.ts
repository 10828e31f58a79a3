/**
 * Anthropic Messages API responses → `ProviderChunk`s: the streamed form
 * (SSE events) and the non-streamed form (one JSON message body).
 *
 * Quirks handled here, each seen in real or proxied streams:
 * - `message_start` may be sent twice identically (ignored), or again after
 *   content when a proxy restarts the response (a `retry` chunk discards the
 *   partial attempt).
 * - `message_start` may already carry finished content and a stop reason
 *   (programmatic tool calling), followed directly by `message_stop`.
 * - `message_delta.usage` is cumulative and may revise `input_tokens`, so
 *   the final usage is emitted as the difference to what was already sent.
 * - A `tool_use` block may arrive with its whole `input` and no deltas, and
 *   a zero-argument call streams `""`.
 * - Blocks the runtime has no type for (server tools and their results,
 *   citations, stop details, containers) become extension chunks.
 */
import type { ExtensionChunk, ProviderChunk } from '../types/chunk.js'
import { ProviderError } from '../types/provider-error.js'
import { parseEventJson, protocolError, truncatedError } from './errors.js'
import { AppendingDecoder } from './appending-decoder.js'
import type { SseEvent } from './sse.js'
import { asCount, asRecord, isRecord, stringOf, type Json } from './json.js'
import { scanDelta, scanned } from './anthropic-scan.js'
import { addMessageMeta, argsJson, completeBlock, metaPrefix } from './anthropic-blocks.js'
import { ANTHROPIC, anthropicStreamError } from './anthropic-errors.js'
import { anthropicStopReason, noCounts, readCounts, usageDelta } from './anthropic-stop-usage.js'

/** A content block being streamed, by its `index`. */
type OpenBlock =
  | { readonly kind: 'text'; readonly citations: unknown[] }
  | { readonly kind: 'thinking'; signature: string }
  | { readonly kind: 'redacted' }
  | { readonly kind: 'tool'; readonly id: string; readonly input: unknown; sentArgs: boolean }
  | { readonly kind: 'other'; readonly block: Json; partialJson: string; readonly citations: unknown[] }

/**
 * The stateful decoder of one streamed response. Throws a `ProviderError`
 * for an `error` event, malformed JSON or an impossible event, and from
 * `end()` when `message_stop` never came.
 */
export class AnthropicDecoder extends AppendingDecoder {
  private phase: 'before' | 'streaming' | 'done' = 'before'
  private startId = ''
  /** Whether anything but pings arrived since `message_start` (a repeated start is then a restart, not a duplicate). */
  private dirty = false
  private restarts = 0
  private blocks = new Map<number, OpenBlock>()
  private stopReason: string | undefined
  private calledTools = false
  private counts = noCounts()
  private sent = noCounts()
  /** Message-level data without a block of its own, emitted just before `stop`. */
  private meta: ExtensionChunk[] = []

  /** A scanned delta costs no array (see `AppendingDecoder`). */
  eventInto(e: SseEvent, out: ProviderChunk[]): void {
    if (this.phase === 'streaming') {
      const fast = this.scannedDelta(e.data)
      if (fast !== undefined) {
        if (fast !== null) out.push(fast)
        return
      }
    }
    if (e.event === 'ping' && e.data.trim() === '') return
    const json = parseEventJson(ANTHROPIC, e.data, e.event)
    if (!isRecord(json)) throw protocolError(ANTHROPIC, `an event is not a JSON object: ${e.data.slice(0, 120)}`)
    const chunks = this.handle(json, e.event)
    for (let i = 0; i < chunks.length; i++) out.push(chunks[i]!)
  }

  end(): readonly ProviderChunk[] {
    if (this.phase === 'done') return []
    throw truncatedError(ANTHROPIC, this.phase === 'before' ? 'the response ended before it started' : "the stream ended before 'message_stop'")
  }

  /**
   * A text or argument delta to an open block of its kind, read by `scanDelta` (no `JSON.parse`):
   * the same chunk `handle` would give (`null`: none, for an empty one). Anything else is `undefined`,
   * for `handle` to decide.
   */
  private scannedDelta(data: string): ProviderChunk | null | undefined {
    const value = scanDelta(data)
    if (value === undefined) return undefined
    const open = this.blocks.get(scanned.index)
    if (open === undefined) return undefined
    if (scanned.json) {
      if (open.kind !== 'tool') return undefined
      this.dirty = true
      if (value === '') return null
      open.sentArgs = true
      return { type: 'toolUseArgsDelta', id: open.id, fragment: value }
    }
    if (open.kind !== 'text') return undefined
    this.dirty = true
    return value === '' ? null : { type: 'textDelta', text: value }
  }

  /** Handles one event's JSON; `name` is the SSE event name, used when the JSON has no `type`. */
  handle(json: Json, name?: string): ProviderChunk[] {
    const type = stringOf(json['type']) ?? name
    if (type === 'ping') return []
    if (type === 'error') throw anthropicStreamError(asRecord(json['error']))
    if (this.phase === 'done') throw protocolError(ANTHROPIC, `'${String(type)}' arrived after 'message_stop'`)
    if (type === 'message_start') return this.messageStart(json)
    if (this.phase === 'before') throw protocolError(ANTHROPIC, `'${String(type)}' arrived before 'message_start'`)
    this.dirty = true
    switch (type) {
      case 'content_block_start':
        return this.blockStart(json)
      case 'content_block_delta':
        return this.blockDelta(json)
      case 'content_block_stop':
        return this.blockStop(asCount(json['index']))
      case 'message_delta':
        this.messageDelta(json)
        return []
      case 'message_stop':
        return this.messageStop()
      default:
        // Event types added to the API later carry nothing this decoder can place.
        return []
    }
  }

  private messageStart(json: Json): ProviderChunk[] {
    const message = asRecord(json['message'])
    if (message === undefined) throw protocolError(ANTHROPIC, "'message_start' has no message")
    const id = stringOf(message['id']) ?? ''
    const out: ProviderChunk[] = []
    if (this.phase === 'streaming') {
      // A repeat with nothing in between is the same response announced twice.
      if (!this.dirty && id === this.startId) return []
      this.restarts++
      out.push({
        type: 'retry',
        attempt: this.restarts,
        delayMs: 0,
        error: ProviderError.of('protocol', ANTHROPIC, `${ANTHROPIC} restarted the response mid-stream (a second 'message_start'); the partial attempt is discarded`, { retryable: true }).info,
      })
      this.blocks = new Map()
      this.stopReason = undefined
      this.calledTools = false
      this.meta = []
      // The discarded attempt's usage stays counted downstream; the new one starts from zero.
      this.counts = noCounts()
      this.sent = noCounts()
    }
    this.phase = 'streaming'
    this.startId = id
    this.dirty = false
    out.push({ type: 'messageStart', id, model: stringOf(message['model']) ?? '' })
    this.counts = readCounts(asRecord(message['usage']), this.counts)
    const early = usageDelta(this.counts, this.sent)
    if (early !== undefined) out.push(early)
    // A message announced already finished (programmatic tool calling) lists its content here.
    const content = message['content']
    if (Array.isArray(content)) {
      for (const block of content) {
        if (!isRecord(block)) throw protocolError(ANTHROPIC, "a content block of 'message_start' is not an object")
        out.push(...completeBlock(block))
        if (block['type'] === 'tool_use') this.calledTools = true
      }
      if (content.length > 0) this.dirty = true
    }
    this.stopReason = stringOf(message['stop_reason']) ?? undefined
    return out
  }

  private blockStart(json: Json): ProviderChunk[] {
    const index = asCount(json['index'])
    const block = asRecord(json['content_block'])
    if (index === undefined || block === undefined) throw protocolError(ANTHROPIC, "'content_block_start' without an index or a block")
    const out: ProviderChunk[] = []
    switch (block['type']) {
      case 'text': {
        const text = stringOf(block['text']) ?? ''
        if (text !== '') out.push({ type: 'textDelta', text })
        const citations = Array.isArray(block['citations']) ? [...(block['citations'] as unknown[])] : []
        this.blocks.set(index, { kind: 'text', citations })
        break
      }
      case 'thinking': {
        const thinking = stringOf(block['thinking']) ?? ''
        if (thinking !== '') out.push({ type: 'thinkingDelta', text: thinking })
        this.blocks.set(index, { kind: 'thinking', signature: stringOf(block['signature']) ?? '' })
        break
      }
      case 'redacted_thinking':
        out.push({ type: 'thinkingRedacted', data: stringOf(block['data']) ?? '' })
        this.blocks.set(index, { kind: 'redacted' })
        break
      case 'tool_use': {
        const id = stringOf(block['id'])
        const name = stringOf(block['name'])
        if (id === undefined || name === undefined) throw protocolError(ANTHROPIC, "a 'tool_use' block without an id or a name")
        out.push({ type: 'toolUseStart', id, name })
        this.calledTools = true
        this.blocks.set(index, { kind: 'tool', id, input: block['input'], sentArgs: false })
        break
      }
      default:
        this.blocks.set(index, { kind: 'other', block: { ...block }, partialJson: '', citations: [] })
    }
    return out
  }

  private blockDelta(json: Json): ProviderChunk[] {
    const index = asCount(json['index'])
    const delta = asRecord(json['delta'])
    const open = index === undefined ? undefined : this.blocks.get(index)
    if (open === undefined || delta === undefined) throw protocolError(ANTHROPIC, `'content_block_delta' for block ${String(index)}, which is not open`)
    switch (delta['type']) {
      case 'text_delta': {
        const text = stringOf(delta['text']) ?? ''
        if (open.kind === 'text') return text === '' ? [] : [{ type: 'textDelta', text }]
        break
      }
      case 'thinking_delta': {
        const text = stringOf(delta['thinking']) ?? ''
        if (open.kind === 'thinking') return text === '' ? [] : [{ type: 'thinkingDelta', text }]
        break
      }
      case 'signature_delta':
        // Sent at the block's end; buffered so that one chunk closes the block.
        if (open.kind === 'thinking') open.signature += stringOf(delta['signature']) ?? ''
        return []
      case 'input_json_delta': {
        const fragment = stringOf(delta['partial_json']) ?? ''
        if (open.kind === 'tool') {
          if (fragment === '') return []
          open.sentArgs = true
          return [{ type: 'toolUseArgsDelta', id: open.id, fragment }]
        }
        if (open.kind === 'other') open.partialJson += fragment
        return []
      }
      case 'citations_delta':
        if (open.kind === 'text' || open.kind === 'other') open.citations.push(delta['citation'])
        return []
    }
    // A delta kind this block does not take (or a newer one): kept on a block we keep whole, else nothing to place.
    if (open.kind === 'other') {
      const deltas = Array.isArray(open.block['deltas']) ? (open.block['deltas'] as unknown[]) : []
      open.block['deltas'] = [...deltas, delta]
    }
    return []
  }

  private blockStop(index: number | undefined): ProviderChunk[] {
    const open = index === undefined ? undefined : this.blocks.get(index)
    if (open === undefined || index === undefined) return []
    this.blocks.delete(index)
    switch (open.kind) {
      case 'text':
        return open.citations.length === 0 ? [] : [{ type: 'extension', typeName: `${metaPrefix}citations`, data: { type: 'citations', citations: open.citations } }]
      case 'thinking':
        return open.signature === '' ? [] : [{ type: 'thinkingSignature', signature: open.signature }]
      case 'redacted':
        return []
      case 'tool': {
        const out: ProviderChunk[] = []
        // No deltas: the call came whole in its start block.
        if (!open.sentArgs) {
          const args = argsJson(open.input)
          if (args !== '') out.push({ type: 'toolUseArgsDelta', id: open.id, fragment: args })
        }
        out.push({ type: 'toolUseEnd', id: open.id })
        return out
      }
      case 'other': {
        const data: Json = { ...open.block }
        if (open.partialJson.trim() !== '') data['input'] = parseEventJson(ANTHROPIC, open.partialJson, `${String(data['type'])} input`)
        if (open.citations.length > 0) data['citations'] = [...(Array.isArray(data['citations']) ? (data['citations'] as unknown[]) : []), ...open.citations]
        return [{ type: 'extension', typeName: String(data['type'] ?? 'unknown'), data }]
      }
    }
  }

  private messageDelta(json: Json): void {
    const delta = asRecord(json['delta'])
    const reason = stringOf(delta?.['stop_reason'])
    if (reason !== undefined) this.stopReason = reason
    this.counts = readCounts(asRecord(json['usage']), this.counts)
    addMessageMeta(this.meta, json, delta)
  }

  private messageStop(): ProviderChunk[] {
    const out: ProviderChunk[] = []
    // Blocks a server left open are closed rather than lost.
    for (const index of [...this.blocks.keys()]) out.push(...this.blockStop(index))
    out.push(...this.meta)
    out.push({ type: 'stop', reason: anthropicStopReason(this.stopReason, this.calledTools) })
    const final = usageDelta(this.counts, this.sent)
    if (final !== undefined) out.push(final)
    this.phase = 'done'
    return out
  }
}
