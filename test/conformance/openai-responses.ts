/**
 * Conformance of the OpenAI Responses adapter against recorded streams
 * (`*.chunks.txt`: one event's JSON per line). Each file is split into its
 * responses (on `response.created`); each response is rebuilt as SSE wire
 * text (`event:` = the JSON type, as the API sends it), decoded through the
 * adapter in small network chunks (and whole: both must agree), folded into
 * an assistant message, and compared with an oracle computed directly from
 * the events' JSON: text per finished message item, thinking and its signature per
 * reasoning item, tool calls (the `parallel` wrapper unwrapped), extension
 * items, phases, stop reason, usage and its cost. Error streams check the
 * classification instead.
 *
 * A line that is not valid JSON must make the adapter fail with a protocol
 * error; when appending closing braces repairs it, the repaired response is
 * checked as well, and the verdict says so.
 */
import { isDeepStrictEqual } from 'node:util'
import { concat, from, lastValueFrom, throwError, toArray } from 'rxjs'
import { accumulateMessage } from '../../operators/accumulate-message.js'
import { WireReader } from '../../src/providers/protocol.js'
import { MESSAGE_MARKER } from '../../src/providers/openai-responses-items.js'
import { OpenAIResponsesDecoder } from '../../src/providers/openai-responses-decoder.js'
import type { ProviderChunk } from '../../src/types/chunk.js'
import type { AssistantMessage } from '../../src/types/message.js'
import { modelSpec } from '../../src/types/model.js'
import { ProviderError, type ProviderErrorKind } from '../../src/types/provider-error.js'
import { splitBytes } from '../../marbles/fold-chunks.js'
import type { ConformanceSuite, FileVerdict } from './types.js'

type Json = Record<string, unknown>
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)
const str = (o: unknown, key: string): string | undefined => (isObject(o) && typeof o[key] === 'string' ? o[key] : undefined)
const num = (o: unknown, key: string): number => (isObject(o) && typeof o[key] === 'number' ? o[key] : 0)
const obj = (o: unknown, key: string): Json | undefined => (isObject(o) && isObject(o[key]) ? o[key] : undefined)

/** Rates for checking cost arithmetic (per million tokens). */
const rates = { input: 2, output: 8, cacheRead: 0.5, cacheWrite: 0 }

/** The classification each OpenAI error code must get: the suite's own table, not the adapter's. */
const expectedErrors: Readonly<Record<string, { kind: ProviderErrorKind; retryable: boolean }>> = {
  insufficient_quota: { kind: 'rateLimit', retryable: false },
  rate_limit_exceeded: { kind: 'rateLimit', retryable: true },
  server_error: { kind: 'server', retryable: true },
  context_length_exceeded: { kind: 'contextOverflow', retryable: false },
  invalid_prompt: { kind: 'invalidRequest', retryable: false },
}

interface Line {
  readonly raw: string
  readonly type: string
  readonly json: Json | undefined
}

function readLine(raw: string): Line {
  let json: unknown
  try {
    json = JSON.parse(raw)
  } catch {
    json = undefined
  }
  const type = str(json, 'type') ?? /"type"\s*:\s*"([^"]+)"/.exec(raw)?.[1] ?? ''
  return { raw, type, json: isObject(json) ? json : undefined }
}

/** A line made valid by appending up to three closing braces, if that is all it lacks. */
function repair(line: Line): Line | undefined {
  for (let n = 1; n <= 3; n++) {
    const fixed = readLine(line.raw + '}'.repeat(n))
    if (fixed.json !== undefined) return fixed
  }
  return undefined
}

const wire = (lines: readonly Line[]): string => lines.map((l) => `event: ${l.type}\ndata: ${l.raw}\n\n`).join('')

const split = splitBytes

/** Decodes incrementally, as the transport does; on a decoder error returns the chunks before it and the error. */
function decode(text: string, size: number): { chunks: ProviderChunk[]; error?: unknown } {
  const reader = new WireReader(new OpenAIResponsesDecoder())
  const chunks: ProviderChunk[] = []
  for (const part of split(text, size)) chunks.push(...reader.push(part))
  chunks.push(...reader.end())
  return reader.failure === undefined ? { chunks } : { chunks, error: reader.failure }
}

async function fold(chunks: readonly ProviderChunk[], modelId: string, error?: unknown): Promise<AssistantMessage> {
  const model = modelSpec('openai', modelId, { cost: rates })
  const source = error === undefined ? from(chunks) : concat(from(chunks), throwError(() => error))
  const events = await lastValueFrom(source.pipe(accumulateMessage({ model, now: () => 0 }), toArray()))
  const end = events.find((e) => e.type === 'messageEnd')
  if (end === undefined) throw new Error('no messageEnd')
  return end.message
}

/** What one response's content must be, in order, computed from the JSON alone. */
type Expected =
  | { kind: 'text'; text: string }
  | { kind: 'marker'; id: string; phase?: unknown }
  | { kind: 'thinking'; thinking: string; id: string; encrypted?: string }
  | { kind: 'toolCall'; id?: string; name: string; args: unknown }
  | { kind: 'extension'; typeName: string; data: unknown }

function oracle(lines: readonly Line[]): { content: Expected[]; stop: AssistantMessage['stopReason']; usage: Json | undefined } {
  const textByItem = new Map<string, string>()
  const content: Expected[] = []
  let calls = 0
  let refused = false
  let terminal: Json | undefined
  for (const { json, type } of lines) {
    if (json === undefined) continue
    if (type === 'response.output_text.delta' || type === 'response.refusal.delta') {
      const id = str(json, 'item_id') ?? ''
      textByItem.set(id, (textByItem.get(id) ?? '') + (str(json, 'delta') ?? ''))
      if (type === 'response.refusal.delta') refused = true
    } else if (type === 'response.output_item.done') {
      const item = obj(json, 'item') ?? {}
      const itemType = str(item, 'type')
      const id = str(item, 'id') ?? ''
      if (itemType === 'message') {
        // The finished item is the reference (a recording may trim its deltas); the deltas must be its start.
        const parts = Array.isArray(item['content']) ? item['content'] : []
        const text = parts.map((p) => str(p, 'text') ?? str(p, 'refusal') ?? '').join('')
        if (parts.some((p) => str(p, 'type') === 'refusal')) refused = true
        if (!text.startsWith(textByItem.get(id) ?? '')) throw new Error(`item ${id}: the streamed text is not the start of the finished text`)
        if (text !== '') content.push({ kind: 'text', text })
        content.push({ kind: 'marker', id, ...(item['phase'] === undefined ? {} : { phase: item['phase'] }) })
      } else if (itemType === 'reasoning') {
        const summary = Array.isArray(item['summary']) ? item['summary'] : []
        const encrypted = str(item, 'encrypted_content')
        content.push({ kind: 'thinking', thinking: summary.map((s) => str(s, 'text') ?? '').filter((t) => t !== '').join('\n\n'), id, ...(encrypted === undefined ? {} : { encrypted }) })
      } else if (itemType === 'function_call') {
        calls++
        const name = str(item, 'name') ?? ''
        const args: unknown = JSON.parse(str(item, 'arguments') || '{}')
        const uses = isObject(args) ? args['tool_uses'] : undefined
        if ((name === 'parallel' || name === 'multi_tool_use.parallel') && Array.isArray(uses)) {
          for (const use of uses) content.push({ kind: 'toolCall', name: (str(use, 'recipient_name') ?? '').replace(/^functions\./, ''), args: obj(use, 'parameters') ?? {} })
        } else content.push({ kind: 'toolCall', id: `${str(item, 'call_id')}|${id}`, name, args })
      } else if (itemType === 'custom_tool_call') {
        calls++
        content.push({ kind: 'toolCall', id: `${str(item, 'call_id')}|${id}`, name: str(item, 'name') ?? '', args: { input: str(item, 'input') ?? '' } })
      } else content.push({ kind: 'extension', typeName: itemType ?? '', data: item })
    } else if (type === 'response.completed' || type === 'response.incomplete') terminal = obj(json, 'response')
  }
  const status = str(terminal, 'status')
  const reason = str(obj(terminal, 'incomplete_details'), 'reason')
  const stop: AssistantMessage['stopReason'] =
    status === 'incomplete' && reason === 'max_output_tokens' ? 'length' : refused || (status === 'incomplete' && reason === 'content_filter') ? 'refusal' : calls > 0 ? 'toolUse' : 'stop'
  return { content, stop, usage: obj(terminal, 'usage') }
}

/** The first difference between the message and the oracle, or undefined. */
function compare(message: AssistantMessage, expected: ReturnType<typeof oracle>): string | undefined {
  if (message.content.length !== expected.content.length) {
    return `${message.content.length} blocks (${message.content.map((c) => c.type).join(',')}), expected ${expected.content.length} (${expected.content.map((c) => c.kind).join(',')})`
  }
  for (let i = 0; i < expected.content.length; i++) {
    const want = expected.content[i]!
    const got = message.content[i]!
    const where = `block ${i}`
    if (want.kind === 'text') {
      if (got.type !== 'text' || got.text !== want.text) return `${where}: text differs`
    } else if (want.kind === 'marker') {
      if (got.type !== 'extension' || got.typeName !== MESSAGE_MARKER || str(got.data, 'id') !== want.id) return `${where}: message marker differs`
      if (want.phase !== undefined && (got.data as Json)['phase'] !== want.phase) return `${where}: phase differs`
    } else if (want.kind === 'thinking') {
      if (got.type !== 'thinking' || got.thinking !== want.thinking) return `${where}: thinking differs`
      const signature: unknown = JSON.parse(got.signature ?? 'null')
      if (str(signature, 'id') !== want.id || str(signature, 'encrypted_content') !== want.encrypted) return `${where}: signature does not carry the reasoning item`
    } else if (want.kind === 'toolCall') {
      if (got.type !== 'toolCall' || got.name !== want.name || !isDeepStrictEqual(got.arguments, want.args) || got.partialJson !== undefined) return `${where}: tool call ${want.name} differs`
      if (want.id !== undefined && got.id !== want.id) return `${where}: tool call id ${got.id}, expected ${want.id}`
    } else if (got.type !== 'extension' || got.typeName !== want.typeName || !isDeepStrictEqual(got.data, want.data)) return `${where}: extension ${want.typeName} differs`
  }
  const ids = message.content.flatMap((c) => (c.type === 'toolCall' ? [c.id] : []))
  if (new Set(ids).size !== ids.length) return 'tool call ids are not unique'
  if (message.stopReason !== expected.stop) return `stop ${message.stopReason}, expected ${expected.stop}`
  const u = expected.usage
  if (u !== undefined) {
    const cached = num(obj(u, 'input_tokens_details'), 'cached_tokens')
    const want = {
      input: num(u, 'input_tokens') - cached,
      output: num(u, 'output_tokens'),
      reasoning: num(obj(u, 'output_tokens_details'), 'reasoning_tokens'),
      cacheRead: cached,
      cacheWrite: 0,
      total: num(u, 'total_tokens'),
    }
    const got = message.usage
    const mismatch = (Object.keys(want) as (keyof typeof want)[]).find((k) => got[k] !== want[k])
    if (mismatch !== undefined) return `usage.${mismatch} ${got[mismatch]}, expected ${want[mismatch]}`
    const cost = (want.input * rates.input + want.output * rates.output + want.cacheRead * rates.cacheRead) / 1e6
    if (Math.abs(message.cost.total - cost) > 1e-12) return `cost ${message.cost.total}, expected ${cost}`
  }
  return undefined
}

function describe(message: AssistantMessage): string {
  const text = message.content.reduce((n, c) => n + (c.type === 'text' ? c.text.length : 0), 0)
  const thinking = message.content.filter((c) => c.type === 'thinking').length
  const calls = message.content.flatMap((c) => (c.type === 'toolCall' ? [c.name] : []))
  const phases = message.content.flatMap((c) => (c.type === 'extension' && c.typeName === MESSAGE_MARKER && isObject(c.data) && typeof c.data['phase'] === 'string' ? [c.data['phase']] : []))
  const ext = message.content.flatMap((c) => (c.type === 'extension' && c.typeName !== MESSAGE_MARKER ? [c.typeName] : []))
  const parts = [`text ${text} chars`]
  if (thinking > 0) parts.push(`${thinking} signed thinking`)
  if (calls.length > 0) parts.push(`${calls.length} tool call${calls.length > 1 ? 's' : ''} (${calls.join(', ')})`)
  if (phases.length > 0) parts.push(`phases ${phases.join('/')}`)
  if (ext.length > 0) parts.push(`extensions ${ext.join(', ')}`)
  parts.push(`stop ${message.stopReason}`, `usage in ${message.usage.input} out ${message.usage.output} total ${message.usage.total}`)
  return parts.join(', ')
}

/** Checks one response whose lines are all valid JSON. */
async function checkResponse(lines: readonly Line[]): Promise<FileVerdict> {
  const text = wire(lines)
  const small = decode(text, 7)
  const whole = decode(text, text.length + 1)
  const created = lines.find((l) => l.type === 'response.created')?.json
  const modelId = str(obj(created, 'response'), 'model') ?? 'unknown'
  const failure = lines.find((l) => l.type === 'error' || l.type === 'response.failed')
  // On an error, how many chunks came out before it depends on where the network split the events; the error must not.
  const same = failure === undefined ? isDeepStrictEqual(small.chunks, whole.chunks) : small.error instanceof ProviderError && whole.error instanceof ProviderError && isDeepStrictEqual(small.error.info, whole.error.info)
  if (!same) return { ok: false, detail: 'decoding in 7-byte chunks differs from decoding whole' }
  if (failure !== undefined) {
    const code = str(obj(failure.json, 'error'), 'code') ?? str(failure.json, 'code') ?? str(obj(obj(failure.json, 'response'), 'error'), 'code') ?? ''
    const want = expectedErrors[code]
    if (want === undefined) return { ok: false, detail: `error code '${code}' has no expected classification in this suite` }
    if (!(small.error instanceof ProviderError)) return { ok: false, detail: `expected a ProviderError for '${code}', got ${small.error === undefined ? 'none' : String(small.error)}` }
    const info = small.error.info
    if (info.kind !== want.kind || info.retryable !== want.retryable || info.code !== code) {
      return { ok: false, detail: `'${code}' classified ${info.kind} (retryable ${info.retryable}, code ${info.code}), expected ${want.kind} (retryable ${want.retryable})` }
    }
    const message = await fold(small.chunks, modelId, small.error)
    if (message.stopReason !== 'error' || message.errorKind !== want.kind) return { ok: false, detail: `message ended ${message.stopReason}/${message.errorKind}` }
    return { ok: true, detail: `error '${code}' → ${info.kind}, retryable ${info.retryable}; message ends with stopReason error, errorKind ${message.errorKind}` }
  }
  if (small.error !== undefined) return { ok: false, detail: `decoding failed: ${small.error instanceof Error ? small.error.message : String(small.error)}` }
  const message = await fold(small.chunks, modelId)
  const expected = oracle(lines)
  const difference = compare(message, expected)
  if (difference !== undefined) return { ok: false, detail: difference }
  const responseId = str(obj(created, 'response'), 'id')
  if (message.responseId !== responseId || message.model !== modelId) return { ok: false, detail: `responseId/model ${message.responseId}/${message.model}` }
  return { ok: true, detail: describe(message) }
}

export const suite: ConformanceSuite = async (path, contents) => {
  if (!path.endsWith('.chunks.txt')) return undefined
  const lines = contents
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map(readLine)
  const responses: Line[][] = []
  for (const line of lines) {
    if (line.type === 'response.created' || responses.length === 0) responses.push([])
    responses[responses.length - 1]!.push(line)
  }
  const details: string[] = []
  for (const [i, response] of responses.entries()) {
    const label = responses.length > 1 ? `#${i + 1}: ` : ''
    const broken = response.filter((l) => l.json === undefined)
    let verdict: FileVerdict
    if (broken.length === 0) verdict = await checkResponse(response)
    else {
      // The adapter must refuse malformed JSON outright rather than guess.
      const raw = decode(wire(response), 7)
      if (!(raw.error instanceof ProviderError) || raw.error.kind !== 'protocol') {
        return { ok: false, detail: `${label}${broken.length} malformed line(s) did not fail with a protocol error` }
      }
      const repaired = response.map((l) => (l.json === undefined ? repair(l) : l))
      if (repaired.some((l) => l === undefined)) {
        verdict = { ok: true, detail: `${broken.length} malformed line(s) → protocol error (not repairable)` }
      } else {
        const inner = await checkResponse(repaired as Line[])
        verdict = {
          ok: inner.ok,
          detail: `${broken.length} malformed line(s) (${broken.map((l) => l.type).join(', ')}) → protocol error; with the missing closing brace added: ${inner.detail}`,
        }
      }
    }
    if (!verdict.ok) return { ok: false, detail: `${label}${verdict.detail}` }
    details.push(`${label}${verdict.detail}`)
  }
  return { ok: true, detail: `${responses.length} response${responses.length > 1 ? 's' : ''}; ${details.join('; ')}` }
}
