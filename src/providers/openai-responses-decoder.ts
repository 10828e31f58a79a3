/**
 * OpenAI Responses API stream (SSE events named after their JSON `type`) →
 * `ProviderChunk`s.
 *
 * Design choices, each forced by the wire or by replay:
 * - Events are dispatched on the JSON `type`, not the `event:` line, so a
 *   proxy that drops `event:` lines still works.
 * - A function call's runtime id is `${call_id}|${item_id}`: replay needs
 *   `call_id` for the `function_call_output` and the item id for the
 *   `function_call` item itself (see `openai-responses-request.ts`).
 * - A reasoning item ends with a `thinkingSignature` holding the JSON of
 *   `{id, encrypted_content, summary}`: exactly what must be sent back for
 *   the model to see its own reasoning again, with `store: false`.
 * - Summary parts of one reasoning item are separated by a blank line
 *   within one thinking block (the API has no other separator).
 * - A custom (free-form) tool call's input is not JSON: it is buffered and
 *   emitted once, at its end, as the arguments `{"input": "<text>"}`.
 * - The synthetic `parallel` / `multi_tool_use.parallel` wrapper (one call
 *   whose arguments list several calls) is unwrapped into one call per
 *   entry, with ids `${call_id}_${k}` (k from 1) and no item id, since the
 *   wrapper's item id would be shared by all of them.
 * - Items are keyed by `output_index`, not by id: some servers change the
 *   item id on every event (and the response id between `response.created`
 *   and `response.in_progress`) while the index stays. Only a second
 *   `response.created` with another id is a second response.
 * - Every message item ends with an `openai.message` extension chunk
 *   `{id, phase?, annotations?}`: the item id and phase (commentary /
 *   final answer) are replayed with the text, and citations are kept.
 * - Items the runtime has no type for (web search, tool search, file
 *   search, code interpreter, MCP, ...) become extension chunks with the
 *   full item, at their `output_item.done`.
 * - A finished item (`output_item.done`, `*.done`) is the reference: what
 *   its deltas missed is emitted before it closes, so servers that skip or
 *   trim deltas still yield the full text, thinking and arguments.
 */
import type { ProviderChunk } from '../types/chunk.js'
import type { LlmRequest } from '../types/request.js'
import { ProviderError } from '../types/provider-error.js'
import { parseEventJson, protocolError, truncatedError } from './errors.js'
import { RollbackDecoder } from './appending-decoder.js'
import type { SseEvent } from './sse.js'
import { openaiStreamError } from './openai-errors.js'
import { asCount, asRecord, countAt, isRecord, stringAt, stringOf, type Json } from './json.js'
import { errorOf, openaiStopReason, openaiUsage } from './openai-responses-finish.js'
import { endCall, messageItemDone, reasoningItemDone, type ItemState } from './openai-responses-items.js'
import { parallelWrapperNames } from './openai-responses-parallel.js'

/** The provider name this adapter reports in errors and messages. */
export const OPENAI = 'openai'

/** The stateful decoder of one streamed response. */
export class OpenAIResponsesDecoder extends RollbackDecoder {
  private started = false
  private responseId: string | undefined
  private done = false
  private calledTools = false
  private refused = false
  private readonly items = new Map<string, ItemState>()
  /** The key of each output index (`#i`). */
  private readonly indexKeys: string[] = []
  /** item id → item key, for events that carry an `item_id` but no `output_index`. */
  private readonly byId = new Map<string, string>()
  /** Tool names the request defines: a tool of the user's own named `parallel` is never unwrapped. */
  private readonly ownTools: ReadonlySet<string>

  constructor(request?: Pick<LlmRequest, 'tools'>) {
    super()
    this.ownTools = new Set((request?.tools ?? []).map((t) => t.name))
  }

  protected decode(event: SseEvent, out: ProviderChunk[]): void {
    // Some gateways end OpenAI-style streams with a Chat Completions terminator.
    const trimmed = event.data.trim()
    if (trimmed === '[DONE]' || trimmed === '') return
    const json = parseEventJson(OPENAI, event.data, event.event)
    if (!isRecord(json)) throw protocolError(OPENAI, `an event is not a JSON object: ${event.data.slice(0, 80)}`)
    // The response is over; anything after its terminal event is noise.
    if (this.done) return
    const type = stringOf(json?.['type']) ?? event.event
    if (type === 'error') {
      const e = errorOf(json)
      throw openaiStreamError(OPENAI, e.code, e.message)
    }
    if (type === 'response.created' || type === 'response.in_progress' || type === 'response.queued') {
      return this.start(out, asRecord(json?.['response']), type === 'response.created')
    }
    this.start(out, undefined, false)
    switch (type) {
      case 'response.output_item.added':
        this.itemAdded(out, json)
        break
      case 'response.output_item.done':
        this.itemDone(out, json)
        break
      case 'response.output_text.delta':
      case 'response.refusal.delta': {
        const item = this.item(json, 'message')
        const delta = stringOf(json?.['delta']) ?? ''
        if (type === 'response.refusal.delta') this.refused = true
        if (delta === '') break
        if (item?.kind === 'message') item.text += delta
        out.push({ type: 'textDelta', text: delta })
        break
      }
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta': {
        const summary = type === 'response.reasoning_summary_text.delta'
        const index = countAt(json, summary ? 'summary_index' : 'content_index') ?? 0
        this.thinking(out, this.item(json, 'reasoning'), `${summary ? 's' : 'r'}${index}`, stringOf(json?.['delta']) ?? '')
        break
      }
      case 'response.function_call_arguments.delta':
      case 'response.custom_tool_call_input.delta': {
        const item = this.item(json, undefined)
        const delta = stringOf(json?.['delta']) ?? ''
        if (item?.kind !== 'call' || item.ended || delta === '') break
        item.args += delta
        // Custom input is not JSON: it is sent whole, JSON-encoded, at the end.
        if (!item.custom && !item.wrapper) out.push({ type: 'toolUseArgsDelta', id: item.runtimeId, fragment: delta })
        break
      }
      case 'response.function_call_arguments.done':
      case 'response.custom_tool_call_input.done': {
        const item = this.item(json, undefined)
        if (item?.kind === 'call') endCall(out, item, stringAt(json, item.custom ? 'input' : 'arguments'))
        break
      }
      case 'response.completed':
      case 'response.incomplete':
      case 'response.failed':
      case 'response.cancelled':
        this.finish(out, type, asRecord(json?.['response']))
        break
      default:
        // Progress events (content parts, searches in progress, annotations
        // already in the finished item) carry nothing the message needs.
        break
    }
  }

  end(): ProviderChunk[] {
    if (!this.done) throw truncatedError(OPENAI, this.started ? 'the stream ended before the response completed' : 'the stream ended before the response started')
    return []
  }

  private start(out: ProviderChunk[], response: Json | undefined, created: boolean): void {
    const id = stringOf(response?.['id'])
    if (this.started) {
      // A second response inside one HTTP body would mix two answers into one message. Ids
      // rotated by `response.in_progress` (some servers do) are the same response.
      if (created && id !== undefined && this.responseId !== undefined && id !== this.responseId) {
        throw protocolError(OPENAI, `a second response (${id}) started inside response ${this.responseId}`)
      }
      return
    }
    this.started = true
    this.responseId = id
    out.push({ type: 'messageStart', id: id ?? '', model: stringOf(response?.['model']) ?? '' })
  }

  /**
   * The key of the item an event is about: its `output_index` (stable even
   * where servers rotate item ids), else the key its `item_id` was registered
   * under when the item was created, else the id itself. Read-only: it runs
   * at every delta, and a server that rotates ids would otherwise add an
   * entry per event.
   */
  private keyOf(json: Json, itemId?: string): string | undefined {
    const index = asCount(json?.['output_index'])
    // Built once per index: no new string per delta.
    if (index !== undefined) return (this.indexKeys[index] ??= `#${index}`)
    const id = itemId ?? stringOf(json?.['item_id'])
    return id === undefined ? undefined : (this.byId.get(id) ?? id)
  }

  /** Records the item's id under its key, once, when the item is created: later events may name it by id alone. */
  private register(key: string, itemId: string | undefined): void {
    if (itemId !== undefined && itemId !== key && !this.byId.has(itemId)) this.byId.set(itemId, key)
  }

  /** The state of the item `json` is about; created as `kind` when the server skipped `output_item.added`. */
  private item(json: Json, kind: 'message' | 'reasoning' | undefined): ItemState | undefined {
    const key = this.keyOf(json)
    if (key === undefined) return undefined
    let state = this.items.get(key)
    if (state === undefined && kind !== undefined) {
      state = kind === 'message' ? { kind, text: '' } : { kind, text: '', part: undefined }
      this.items.set(key, state)
      this.register(key, stringOf(json?.['item_id']))
    }
    return state
  }

  private thinking(out: ProviderChunk[], item: ItemState | undefined, part: string, text: string): void {
    if (item?.kind !== 'reasoning' || text === '') return
    if (item.text !== '' && item.part !== part) {
      item.text += '\n\n'
      out.push({ type: 'thinkingDelta', text: '\n\n' })
    }
    item.text += text
    item.part = part
    out.push({ type: 'thinkingDelta', text })
  }

  private itemAdded(out: ProviderChunk[], json: Json): void {
    const item = asRecord(json?.['item'])
    if (item === undefined) return
    const id = stringOf(item?.['id'])
    const key = this.keyOf(json, id) ?? `#${this.items.size}`
    if (this.items.has(key)) return
    this.register(key, id)
    const type = stringOf(item?.['type'])
    if (type === 'message') this.items.set(key, { kind: 'message', text: '' })
    else if (type === 'reasoning') this.items.set(key, { kind: 'reasoning', text: '', part: undefined })
    else if (type === 'function_call' || type === 'custom_tool_call') this.startCall(out, key, item, type === 'custom_tool_call')
    else this.items.set(key, { kind: 'other' })
  }

  private startCall(out: ProviderChunk[], key: string, item: Json, custom: boolean): ItemState & { kind: 'call' } {
    const name = stringOf(item?.['name']) ?? ''
    const callId = stringOf(item?.['call_id']) ?? key
    const itemId = stringOf(item?.['id'])
    const wrapper = !custom && parallelWrapperNames.has(name) && !this.ownTools.has(name)
    const state: ItemState & { kind: 'call' } = {
      kind: 'call',
      custom,
      wrapper,
      runtimeId: itemId === undefined || itemId === callId ? callId : `${callId}|${itemId}`,
      name,
      callId,
      ended: false,
      args: '',
    }
    this.items.set(key, state)
    this.calledTools = true
    if (!wrapper) out.push({ type: 'toolUseStart', id: state.runtimeId, name })
    // A server may send the whole call in `output_item.added`.
    const initial = stringAt(item, custom ? 'input' : 'arguments') ?? ''
    if (initial !== '') {
      state.args = initial
      if (!custom && !wrapper) out.push({ type: 'toolUseArgsDelta', id: state.runtimeId, fragment: initial })
    }
    return state
  }

  private itemDone(out: ProviderChunk[], json: Json): void {
    const item = asRecord(json?.['item'])
    if (item === undefined) return
    const key = this.keyOf(json, stringOf(item?.['id'])) ?? `#${this.items.size}`
    const type = stringOf(item?.['type'])
    const state = this.items.get(key)
    if (type === 'message') {
      if (messageItemDone(out, item, state?.kind === 'message' ? state.text : '')) this.refused = true
    } else if (type === 'reasoning') {
      reasoningItemDone(out, item, key, state?.kind === 'reasoning' ? state : undefined)
    } else if (type === 'function_call' || type === 'custom_tool_call') {
      const custom = type === 'custom_tool_call'
      const call = state?.kind === 'call' ? state : this.startCall(out, key, { ...item, arguments: '', input: '' }, custom)
      endCall(out, call, stringAt(item, custom ? 'input' : 'arguments'))
    } else if (type !== undefined) {
      out.push({ type: 'extension', typeName: type, data: item })
    }
  }

  private finish(out: ProviderChunk[], type: string, response: Json | undefined): void {
    this.done = true
    const status = stringOf(response?.['status']) ?? type.slice('response.'.length)
    if (status === 'cancelled') throw ProviderError.of('unknown', OPENAI, `${OPENAI}: the response was cancelled`, { code: 'cancelled' })
    if (status === 'failed') {
      const error = asRecord(response?.['error'])
      throw openaiStreamError(OPENAI, stringOf(error?.['code']), stringOf(error?.['message']) ?? 'the response failed')
    }
    if (status !== 'incomplete') {
      // A completed response whose call items never closed: their arguments are all there.
      for (const item of this.items.values()) if (item.kind === 'call' && !item.ended) endCall(out, item, undefined)
    }
    const reason = stringOf(asRecord(response?.['incomplete_details'])?.['reason'])
    out.push({ type: 'stop', reason: openaiStopReason(status, reason, this.calledTools, this.refused) })
    const usage = openaiUsage(asRecord(response?.['usage']))
    if (usage !== undefined) out.push(usage)
  }
}
