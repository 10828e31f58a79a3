/**
 * Chat Completions stream (`chat.completion.chunk` events) → `ProviderChunk`s.
 *
 * Quirks handled here, each seen in real streams of OpenAI or of a
 * compatible server:
 * - Tool calls are keyed by `index`, which need not start at 0. The id and
 *   name may come after the first argument fragment, continuation deltas may
 *   repeat the id or carry an empty name; fragments are buffered until the
 *   call has both. A call may also arrive whole in one delta.
 * - A new id at an index already in use is a new call (servers that number
 *   every call 0).
 * - Reasoning text arrives as `reasoning_content` or `reasoning`; Mistral
 *   streams `content` as parts with `thinking` ones; OpenRouter's encrypted
 *   `reasoning_details` become redacted thinking (the whole detail as data).
 * - Usage comes in a final chunk with `choices: []` (`stream_options`), in
 *   `x_groq.usage`, or inside the last choice. It is cumulative: the latest
 *   report wins, and it is emitted once, after `stop`.
 * - `data: [DONE]` ends the stream; some servers omit it, so a body that ends
 *   after a `finish_reason` is complete too.
 * - `{"error": {...}}` as a data payload (OpenRouter, vLLM) fails the stream.
 * - Azure may open with a content-filter chunk whose `id` and `model` are
 *   empty and whose `choices` are `[]`: the message starts with the first
 *   chunk that names the response or carries a choice, so the id and the
 *   routed model of the later chunks are kept.
 * - Citations outside the content (Perplexity's top-level `citations` and
 *   `search_results`, repeated on every chunk) are kept: the latest arrays
 *   become one `openai.citations` extension block before `stop`.
 */
import type { ProviderChunk } from '../types/chunk.js'
import { parseEventJson, protocolError, streamError, truncatedError } from './errors.js'
import { openaiStreamError } from './openai-errors.js'
import { ChatScan } from './openai-chat-scan.js'
import { AppendingDecoder } from './appending-decoder.js'
import type { SseEvent } from './sse.js'
import type { ProviderError } from '../types/provider-error.js'
import { openaiCompat, type Compat } from './openai-chat-compat.js'
import { asCount, asRecord, isRecord, stringOf, type Json } from './json.js'
import { contentParts, firstChoice } from './openai-chat-choice.js'
import { openaiStopReason, openaiUsage } from './openai-chat-stop-usage.js'

/** A tool call being streamed, by its `index`. */
interface ToolSlot {
  id: string | undefined
  name: string | undefined
  /** The id it was announced under (unique in the message), once started. */
  started: string | undefined
  /** Argument fragments received before the call could start. */
  buffered: string
}

/**
 * The stateful decoder of one streamed Chat Completions response. Throws a
 * `ProviderError` for an error payload or malformed JSON, and from `end()`
 * when the body ended before a `finish_reason` or `[DONE]`.
 */
export class OpenAIChatDecoder extends AppendingDecoder {
  private started = false
  private done = false
  private finishReason: string | undefined
  private finished = false
  private refused = false
  private readonly slots = new Map<number, ToolSlot>()
  private readonly usedIds = new Set<string>()
  private calledTools = false
  private readonly scan = new ChatScan()
  private usage: Json | undefined
  private annotations: unknown[] = []
  /** The latest top-level `citations` / `search_results` arrays (references, not copies). */
  private citations: unknown[] | undefined
  private searchResults: unknown[] | undefined

  constructor(
    private readonly provider: string = 'openai',
    private readonly compat: Compat = openaiCompat,
  ) {
    super()
  }

  /** A scanned delta costs no array (see `AppendingDecoder`). */
  eventInto(e: SseEvent, out: ProviderChunk[]): void {
    if (this.started && !this.done && e.event === undefined) {
      const fast = this.scanned(e.data)
      if (fast !== undefined) {
        if (fast !== null) out.push(fast)
        return
      }
    }
    const data = e.data.trim()
    if (data === '') return
    if (data === '[DONE]') {
      if (this.done) return
      this.done = true
      return append(out, this.finish())
    }
    if (this.done) return
    const json = parseEventJson(this.provider, data, e.event)
    if (!isRecord(json)) throw protocolError(this.provider, `an event is not a JSON object: ${data.slice(0, 120)}`)
    const chunks = this.handle(json, e.event === 'error')
    if (this.started) this.scan.learn(data, json)
    append(out, chunks)
  }

  /**
   * A content delta, or an argument fragment of a call already announced, read by `ChatScan` (no
   * `JSON.parse`): the same chunk `handle` would give (`null`: none, for an empty one). Anything else
   * is `undefined`, for `handle`.
   */
  private scanned(data: string): ProviderChunk | null | undefined {
    const value = this.scan.scan(data)
    if (value === undefined) return undefined
    if (this.scan.callIndex < 0) return value === '' ? null : { type: 'textDelta', text: value }
    const started = this.slots.get(this.scan.callIndex)?.started
    if (started === undefined) return undefined
    return value === '' ? null : { type: 'toolUseArgsDelta', id: started, fragment: value }
  }

  end(): readonly ProviderChunk[] {
    if (this.done) return []
    // Servers that omit [DONE] still said how the answer finished.
    if (this.finished) {
      this.done = true
      return this.finish()
    }
    throw truncatedError(this.provider, this.started ? 'the stream ended before a finish_reason or [DONE]' : 'the response ended before it started')
  }

  /** Handles one `chat.completion.chunk` (or an error payload). */
  handle(json: Json, errorEvent = false): ProviderChunk[] {
    const error = json['error']
    if (error !== undefined && error !== null) throw this.errorOf(error)
    if (errorEvent) throw this.errorOf(json)
    const out: ProviderChunk[] = []
    const choices = json['choices']
    if (!this.started) {
      const id = stringOf(json['id']) ?? ''
      const model = stringOf(json['model']) ?? ''
      // A nameless chunk without choices (Azure's prompt filter results) does not start the message.
      if (id === '' && model === '' && !(Array.isArray(choices) && choices.length > 0) && json['usage'] === undefined) return out
      this.started = true
      out.push({ type: 'messageStart', id, model })
    }
    const citations = json['citations']
    if (Array.isArray(citations)) this.citations = citations
    const searchResults = json['search_results']
    if (Array.isArray(searchResults)) this.searchResults = searchResults
    // One completion is asked for (n = 1); a server numbering it otherwise still sends only it.
    const choice = Array.isArray(choices) ? firstChoice(choices) : undefined
    // Reports are cumulative: the latest wins. Groq sends the same numbers twice in one chunk; only one is read.
    const standard = asRecord(json['usage'])
    const groq = asRecord(asRecord(json['x_groq'])?.['usage'])
    const usage = (this.compat.usageLocation === 'x_groq' ? (groq ?? standard) : (standard ?? groq)) ?? (isRecord(choice) ? asRecord(choice['usage']) : undefined)
    if (usage !== undefined) this.usage = usage
    if (isRecord(choice)) this.choice(choice, out)
    return out
  }

  private errorOf(error: unknown): ProviderError {
    const body = isRecord(error) ? error : {}
    const message = stringOf(body['message']) ?? (typeof error === 'string' ? error : 'unknown error')
    const rawCode = body['code']
    // OpenRouter puts the upstream HTTP status in `code`.
    return openaiStreamError(this.provider, typeof rawCode === 'number' || typeof rawCode === 'string' ? rawCode : undefined, message, stringOf(body['type']))
  }

  private choice(choice: Json, out: ProviderChunk[]): void {
    const delta = asRecord(choice['delta']) ?? asRecord(choice['message'])
    if (delta !== undefined) this.delta(delta, out)
    const reason = stringOf(choice['finish_reason'])
    if (reason !== undefined && reason !== '') {
      if (reason === 'error') throw streamError(this.provider, 'finish_reason_error', 'the server ended the answer with an error')
      this.finishReason = reason
      this.finished = true
      out.push(...this.closeTools())
    }
  }

  private delta(delta: Json, out: ProviderChunk[]): void {
    const reasoning = this.reasoningOf(delta)
    if (reasoning !== '') out.push({ type: 'thinkingDelta', text: reasoning })
    // OpenRouter's encrypted reasoning: unreadable, kept whole to be replayed to the model that wrote it.
    const details = delta['reasoning_details']
    if (Array.isArray(details)) {
      for (const d of details) {
        if (isRecord(d) && d['type'] === 'reasoning.encrypted' && typeof d['data'] === 'string' && d['data'] !== '') out.push({ type: 'thinkingRedacted', data: JSON.stringify(d) })
      }
    }
    const content = delta['content']
    if (typeof content === 'string') {
      if (content !== '') out.push({ type: 'textDelta', text: content })
    } else if (Array.isArray(content)) contentParts(content, out)
    const refusal = stringOf(delta['refusal'])
    if (refusal !== undefined && refusal !== '') {
      this.refused = true
      out.push({ type: 'textDelta', text: refusal })
    }
    const calls = delta['tool_calls']
    if (Array.isArray(calls)) calls.forEach((call, position) => isRecord(call) && this.toolDelta(call, position, out))
    // The legacy single-call form.
    const legacy = asRecord(delta['function_call'])
    if (legacy !== undefined) this.toolDelta({ index: 0, function: legacy }, 0, out)
    const annotations = delta['annotations']
    if (Array.isArray(annotations)) this.annotations.push(...(annotations as unknown[]))
  }

  /** Reasoning text of a delta: the compat row's field first, then the other one (never both: some servers mirror one into the other). */
  private reasoningOf(delta: Json): string {
    const content = delta['reasoning_content']
    const reasoning = delta['reasoning']
    const preferred = this.compat.reasoningField === 'reasoning' ? reasoning : content
    if (typeof preferred === 'string' && preferred !== '') return preferred
    const other = this.compat.reasoningField === 'reasoning' ? content : reasoning
    return typeof other === 'string' ? other : ''
  }

  private toolDelta(call: Json, position: number, out: ProviderChunk[]): void {
    const index = asCount(call['index']) ?? position
    const fn = asRecord(call['function'])
    const id = stringOf(call['id'])
    const name = stringOf(fn?.['name'])
    const args = stringOf(fn?.['arguments']) ?? ''
    let slot = this.slots.get(index)
    if (slot !== undefined && id !== undefined && id !== '' && slot.id !== undefined && id !== slot.id && (slot.started !== undefined || slot.name !== undefined)) {
      // A different id at a used index: the server numbers every call alike.
      out.push(...this.closeSlot(index, slot))
      slot = undefined
    }
    if (slot === undefined) {
      slot = { id: undefined, name: undefined, started: undefined, buffered: '' }
      this.slots.set(index, slot)
    }
    if (id !== undefined && id !== '' && slot.id === undefined) slot.id = id
    if (name !== undefined && name !== '' && slot.name === undefined) slot.name = name
    if (slot.started !== undefined) {
      if (args !== '') out.push({ type: 'toolUseArgsDelta', id: slot.started, fragment: args })
      return
    }
    slot.buffered += args
    if (slot.id !== undefined && slot.name !== undefined) this.startSlot(index, slot, out)
  }

  /**
   * Announces a call with what it has (an id is made up if the server sent
   * none), flushes its buffered arguments, and returns the id it got.
   */
  private startSlot(index: number, slot: ToolSlot, out: ProviderChunk[]): string {
    let id = slot.id ?? `call_${index}`
    // Ids must be unique in a message; a server repeating one gets it suffixed.
    if (this.usedIds.has(id)) id = `${id}_${index}_${this.usedIds.size}`
    this.usedIds.add(id)
    slot.started = id
    this.calledTools = true
    out.push({ type: 'toolUseStart', id, name: slot.name ?? '' })
    if (slot.buffered !== '') out.push({ type: 'toolUseArgsDelta', id, fragment: slot.buffered })
    slot.buffered = ''
    return id
  }

  private closeSlot(index: number, slot: ToolSlot): ProviderChunk[] {
    this.slots.delete(index)
    const out: ProviderChunk[] = []
    const id = slot.started ?? this.startSlot(index, slot, out)
    out.push({ type: 'toolUseEnd', id })
    return out
  }

  /** Ends every call still open, in index order; a call whose name never came is kept with an empty name rather than dropped. */
  private closeTools(): ProviderChunk[] {
    const out: ProviderChunk[] = []
    for (const index of [...this.slots.keys()].sort((a, b) => a - b)) out.push(...this.closeSlot(index, this.slots.get(index)!))
    return out
  }

  private finish(): ProviderChunk[] {
    const out: ProviderChunk[] = []
    if (!this.started) {
      this.started = true
      out.push({ type: 'messageStart', id: '', model: '' })
    }
    out.push(...this.closeTools())
    if (this.annotations.length > 0) out.push({ type: 'extension', typeName: 'openai.annotations', data: { type: 'annotations', annotations: this.annotations } })
    if (this.citations !== undefined || this.searchResults !== undefined) {
      out.push({
        type: 'extension',
        typeName: 'openai.citations',
        data: { ...(this.citations === undefined ? {} : { citations: this.citations }), ...(this.searchResults === undefined ? {} : { search_results: this.searchResults }) },
      })
    }
    out.push({ type: 'stop', reason: openaiStopReason(this.finishReason, this.calledTools, this.refused) })
    if (this.usage !== undefined) out.push({ type: 'usage', ...openaiUsage(this.usage, this.compat) })
    return out
  }
}

function append(out: ProviderChunk[], chunks: readonly ProviderChunk[]): void {
  for (let i = 0; i < chunks.length; i++) out.push(chunks[i]!)
}
