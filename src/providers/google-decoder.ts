/**
 * Gemini `streamGenerateContent?alt=sse` events → `ProviderChunk`s.
 *
 * Every event is a whole `GenerateContentResponse`: `candidates[0].content.parts`
 * holds this event's new parts, `usageMetadata` the cumulative counts so far
 * (the last report wins, even when it lowers `promptTokenCount`).
 *
 * `finishReason` is provisional: older models repeat `STOP` on every event,
 * and server-side tool streams send a finish reason, then a
 * `functionResponse` part, then the answer. The stream's last finish reason
 * decides the stop reason, emitted when the body ends. Only a reason that
 * makes the answer unusable (`MALFORMED_FUNCTION_CALL`, ...) ends it at once,
 * and a `promptFeedback.blockReason` without candidates is a refusal at once.
 *
 * Thought signatures. Gemini signs parts, not blocks: a `thoughtSignature`
 * may sit on a thought part, on a text part (often an empty one at the very
 * end) or on a `functionCall` part, and must be sent back on the same kind
 * of part (Gemini 3 rejects a function call replayed without its
 * signature). The runtime only has signed thinking blocks, so:
 *
 * - on a thought part, the signature closes the thinking block it signs;
 * - on any other part, it becomes a thinking block with empty text placed
 *   right AFTER the part's own content (the text, or the whole tool call).
 *   An empty text part that follows anything but text is kept as an empty
 *   text block first, so its signature never lands on a thinking block or
 *   a call that is not its own.
 *
 * The request builder reverses this: an empty signed thinking block goes
 * back onto the text or function-call part right before it (see
 * `google-request.ts`). One shape stays ambiguous: an empty thought part
 * carrying only a signature right after a text or call part (thoughts come
 * first in every response seen so far) would be replayed on that part.
 */
import type { ProviderChunk } from '../types/chunk.js'
import type { ProviderError } from '../types/provider-error.js'
import { parseEventJson, protocolError, streamError, truncatedError } from './errors.js'
import { GOOGLE, googleStreamError } from './google-errors.js'
import { failedReasons, googleStopReason, googleUsage, usageDelta, type Counts } from './google-finish-usage.js'
import { StreamingCall } from './google-partial-args.js'
import { candidateMetadata, partExtensionPrefix, partKinds } from './google-part-kinds.js'
import { isRecord, stringOf, type Json } from './json.js'
import { RollbackDecoder } from './appending-decoder.js'
import type { SseEvent } from './sse.js'

/** What the last content block emitted is, as far as the fold's block boundaries go. */
type LastBlock = 'none' | 'text' | 'thinking' | 'closed'

/**
 * Decodes one Gemini response stream. Stateful: one instance per response.
 * Throws a `ProviderError` for an `error` object in the stream, malformed
 * JSON, a failed finish reason, or (from `end`) a body that stopped before
 * the event carrying the finish reason.
 */
export class GoogleDecoder extends RollbackDecoder {
  private started = false
  private stopped = false
  /** The latest candidate with a (non-failed) finish reason: the stop is emitted at the end of the body. */
  private finishCandidate: Json | undefined
  private responseId = ''
  private calls = 0
  private open: StreamingCall | undefined
  private last: LastBlock = 'none'
  private readonly emitted: Counts = { input: 0, output: 0, reasoning: 0, cacheRead: 0, total: 0 }
  private latest: Counts | undefined
  private earlyUsageSent = false
  private readonly metadata: { typeName: string; data: unknown; key: string }[] = []
  /** A failed finish reason: raised after its event's chunks (usage included) went out. */
  private failure: ProviderError | undefined
  /** Used in generated call ids when the response has no `responseId`, so ids of different responses still differ. */
  private readonly nonce = Math.random().toString(36).slice(2, 10)

  constructor(private readonly modelId: string) {
    super()
  }

  protected decode(event: SseEvent, out: ProviderChunk[]): void {
    if (this.failure !== undefined) throw this.failure
    const data = event.data.trim()
    // Some proxies end OpenAI-style; Gemini itself never sends it.
    if (data === '' || data === '[DONE]') return
    const json = parseEventJson(GOOGLE, data, event.event)
    // A JSON-array stream (a missing `alt=sse` behind a proxy) arrives as one array per event.
    if (!Array.isArray(json)) return this.response(json, out)
    for (const response of json) if (this.failure === undefined) this.response(response, out)
  }

  end(): ProviderChunk[] {
    if (this.failure !== undefined) throw this.failure
    if (this.stopped) return []
    const finishReason = stringOf(this.finishCandidate?.['finishReason'])
    if (finishReason === undefined || this.finishCandidate === undefined) {
      throw truncatedError(GOOGLE, this.started ? 'the stream ended before a finish reason arrived' : 'the response body held no events')
    }
    const out: ProviderChunk[] = []
    this.finish(finishReason, this.finishCandidate, out)
    return out
  }

  private response(response: unknown, out: ProviderChunk[]): void {
    if (!isRecord(response)) throw protocolError(GOOGLE, `an event is not a JSON object: ${JSON.stringify(response).slice(0, 80)}`)
    if (response['error'] !== undefined) throw googleStreamError(response['error'])
    if (!this.started) {
      this.started = true
      this.responseId = stringOf(response['responseId']) ?? ''
      out.push({ type: 'messageStart', id: this.responseId, model: stringOf(response['modelVersion']) ?? this.modelId })
    }
    const usage = googleUsage(response['usageMetadata'])
    if (usage !== undefined && (usage.promptKnown || usage.output > 0)) this.latest = usage
    const candidates = Array.isArray(response['candidates']) ? response['candidates'] : []
    const candidate = isRecord(candidates[0]) ? candidates[0] : undefined

    if (this.stopped) {
      // A prompt blocked before any candidate: nothing can follow the refusal.
      if (candidate !== undefined && this.hasContent(candidate)) throw protocolError(GOOGLE, 'content arrived after the prompt was blocked')
      this.finalUsage(out)
      return
    }

    if (candidate !== undefined) {
      const content = candidate['content']
      const parts = isRecord(content) && Array.isArray(content['parts']) ? content['parts'] : []
      for (const part of parts) this.part(part, out)
      for (const key of candidateMetadata) this.keepMetadata(`google.${key}`, candidate[key])
    }

    const finishReason = stringOf(candidate?.['finishReason'])
    const feedback = isRecord(response['promptFeedback']) ? response['promptFeedback'] : undefined
    const blockReason = stringOf(feedback?.['blockReason'])
    if (finishReason !== undefined) {
      if (failedReasons.has(finishReason)) this.finish(finishReason, candidate!, out)
      else {
        this.finishCandidate = candidate
        this.earlyUsage(out)
      }
    } else if (blockReason !== undefined && candidate === undefined) {
      this.closeCall(out)
      out.push({ type: 'extension', typeName: 'google.promptFeedback', data: feedback })
      out.push({ type: 'stop', reason: 'refusal' })
      this.stopped = true
      this.finalUsage(out)
    } else this.earlyUsage(out)
  }

  private hasContent(candidate: Json): boolean {
    const content = candidate['content']
    const parts = isRecord(content) && Array.isArray(content['parts']) ? content['parts'] : []
    return parts.some((p) => isRecord(p) && Object.entries(p).some(([k, v]) => k !== 'text' || v !== ''))
  }

  private part(part: unknown, out: ProviderChunk[]): void {
    if (!isRecord(part)) throw protocolError(GOOGLE, 'a content part is not an object')
    const signature = stringOf(part['thoughtSignature'])
    const signed = signature !== undefined && signature !== ''
    if (isRecord(part['functionCall'])) {
      this.functionCall(part['functionCall'], signed ? signature : undefined, out)
      return
    }
    // A part of a kind this adapter does not know yet is kept too, named by its field.
    const kind = partKinds.find((k) => part[k] !== undefined) ?? (typeof part['text'] === 'string' ? undefined : Object.keys(part).find((k) => k !== 'thought' && k !== 'thoughtSignature'))
    if (kind !== undefined) {
      this.closeCall(out)
      out.push({ type: 'extension', typeName: `${partExtensionPrefix}${kind}`, data: part })
      this.last = 'closed'
      return
    }
    const text = stringOf(part['text']) ?? ''
    if (part['thought'] === true) {
      this.closeCall(out)
      if (text !== '') {
        out.push({ type: 'thinkingDelta', text })
        this.last = 'thinking'
      }
      if (signed) this.signature(signature, out)
      return
    }
    if (text === '' && !signed) return
    this.closeCall(out)
    if (text !== '' || this.last !== 'text') {
      // An empty text part is kept as a block only to carry its signature (see the module comment).
      out.push({ type: 'textDelta', text })
      this.last = 'text'
    }
    if (signed) this.signature(signature, out)
  }

  private signature(signature: string, out: ProviderChunk[]): void {
    out.push({ type: 'thinkingSignature', signature })
    this.last = 'closed'
  }

  private nextCallId(name: string, given: unknown): string {
    const n = this.calls++
    const id = stringOf(given)
    if (id !== undefined && id !== '') return id
    return `${name}_${this.responseId === '' ? this.nonce : this.responseId}_${n}`
  }

  private functionCall(call: Json, signature: string | undefined, out: ProviderChunk[]): void {
    const name = stringOf(call['name']) ?? ''
    const partials = Array.isArray(call['partialArgs']) ? call['partialArgs'] : undefined
    const continues = call['willContinue'] === true
    if (name !== '') {
      this.closeCall(out)
      const id = this.nextCallId(name, call['id'])
      if (partials === undefined && !continues) {
        out.push({ type: 'toolUseStart', id, name })
        out.push({ type: 'toolUseArgsDelta', id, fragment: JSON.stringify(isRecord(call['args']) ? call['args'] : {}) })
        out.push({ type: 'toolUseEnd', id })
        this.last = 'closed'
        if (signature !== undefined) this.signature(signature, out)
        return
      }
      this.open = new StreamingCall(id, name, call['args'], signature)
      out.push({ type: 'toolUseStart', id, name })
      this.last = 'closed'
    } else if (this.open === undefined) {
      // The empty terminal part of a call that already ended (its last partial said so).
      if ((partials?.length ?? 0) > 0 || isRecord(call['args'])) throw protocolError(GOOGLE, 'function-call arguments arrived for no open call')
      if (signature !== undefined) this.signature(signature, out)
      return
    }
    const open = this.open!
    if (signature !== undefined) open.signature ??= signature
    for (const partial of partials ?? []) open.apply(partial)
    // Per the API, a part without `willContinue` is the call's last one.
    if (!continues) this.closeCall(out)
  }

  /** Ends the call whose arguments were streaming: its arguments as one fragment, then its signature. */
  private closeCall(out: ProviderChunk[]): void {
    const open = this.open
    if (open === undefined) return
    this.open = undefined
    out.push({ type: 'toolUseArgsDelta', id: open.id, fragment: JSON.stringify(open.args) })
    out.push({ type: 'toolUseEnd', id: open.id })
    this.last = 'closed'
    if (open.signature !== undefined) this.signature(open.signature, out)
  }

  private keepMetadata(typeName: string, data: unknown): void {
    if (data === undefined || data === null) return
    const key = `${typeName}\u0000${JSON.stringify(data)}`
    if (!this.metadata.some((m) => m.key === key)) this.metadata.push({ typeName, data, key })
  }

  private finish(finishReason: string, candidate: Json, out: ProviderChunk[]): void {
    this.closeCall(out)
    const reason = googleStopReason(finishReason, this.calls > 0)
    const finishMessage = stringOf(candidate['finishMessage'])
    if (reason === 'error') {
      // The content and usage of this event still go out (the usage was billed); the error follows them.
      this.finalUsage(out)
      this.failure = streamError(GOOGLE, finishReason, finishMessage ?? `the model stopped with ${finishReason}`, failedReasons.get(finishReason))
      return
    }
    for (const m of this.metadata) out.push({ type: 'extension', typeName: m.typeName, data: m.data })
    if (finishReason !== 'STOP' && finishReason !== 'MAX_TOKENS') {
      const data: Json = { finishReason }
      if (finishMessage !== undefined) data['finishMessage'] = finishMessage
      if (candidate['safetyRatings'] !== undefined) data['safetyRatings'] = candidate['safetyRatings']
      out.push({ type: 'extension', typeName: 'google.finishReason', data })
    }
    out.push({ type: 'stop', reason })
    this.stopped = true
    this.finalUsage(out)
  }

  /** Input and cache reads as soon as the prompt's size is known: a turn that fails later was still billed for them. */
  private earlyUsage(out: ProviderChunk[]): void {
    const u = this.latest
    if (this.earlyUsageSent || u === undefined || !(u.input > 0 || u.cacheRead > 0)) return
    this.earlyUsageSent = true
    this.emitDelta({ input: u.input, output: 0, reasoning: 0, cacheRead: u.cacheRead, total: 0 }, out)
  }

  /** What the final counts add to what was already emitted, so that the sum is the provider's last cumulative report. */
  private finalUsage(out: ProviderChunk[]): void {
    if (this.latest !== undefined) this.emitDelta(this.latest, out)
  }

  private emitDelta(target: Counts, out: ProviderChunk[]): void {
    const chunk = usageDelta(target, this.emitted)
    if (chunk !== undefined) out.push(chunk)
  }
}
