/**
 * Conformance of the Gemini adapter against ../shared/fixtures/google.
 *
 * Streams (`*.chunks.txt`, one `data:` JSON per line): the SSE wire text is
 * rebuilt (`data: <line>\n\n`), decoded whole and split into small network
 * chunks (every split must give the same chunks), folded into the final
 * message, and compared with an oracle computed directly from the lines'
 * JSON: text, thought text, signatures and the kind of part each came on,
 * function calls with their arguments (streamed `partialArgs` assembled by
 * the oracle's own path walker), stop reason, usage and cost. The decoded
 * message is then replayed into a request body, which must put every
 * signature back on the same kind of part, with the same function calls.
 *
 * Error bodies (`*.json` with an `error` object): classified with
 * `googleErrorFromBody`; kind, retryability and the RetryInfo delay are
 * checked against the body.
 */
import { basename } from 'node:path'
import { foldChunks, splitBytes } from '../../marbles/fold-chunks.js'
import { GoogleDecoder } from '../../src/providers/google-decoder.js'
import { googleErrorFromBody } from '../../src/providers/google-errors.js'
import { googleRequestBody } from '../../src/providers/google-request.js'
import { decodeWire } from '../../src/providers/protocol.js'
import type { ProviderChunk } from '../../src/types/chunk.js'
import { extractText } from '../../src/types/content.js'
import { userMessage, type AssistantMessage, type LlmMessage, type ToolResultMessage } from '../../src/types/message.js'
import { modelSpec, type ModelSpec } from '../../src/types/model.js'
import type { StopReason } from '../../src/types/stop-reason.js'
import { costOf, type CostRates } from '../../src/types/usage.js'
import { arr, expectSame, isObj, Mismatch, obj, str, type Json } from './check.js'
import type { ConformanceSuite, FileVerdict } from './types.js'

const num = (v: unknown): number => (typeof v === 'number' ? v : 0)

const rates: CostRates = { input: 1.25, output: 10, cacheRead: 0.31, cacheWrite: 0 }

// ---------------------------------------------------------------------------
// The oracle

type SignedKind = 'thought' | 'text' | 'functionCall'

interface Expected {
  id: string
  model: string
  text: string
  thinking: string
  signatures: { kind: SignedKind; signature: string; name?: string }[]
  calls: { name: string; args: Json }[]
  stop: StopReason
  usage: { input: number; output: number; reasoning: number; cacheRead: number; total: number }
}

/** Writes `value` at a `$.a[0].b` path, creating what is missing. The oracle's own walker, kept naive on purpose. */
function setPath(target: Json, path: string, value: unknown, append: boolean): void {
  const keys = [...path.slice(1).matchAll(/\.([^.[\]]+)|\[(\d+)\]/g)].map((m) => (m[2] === undefined ? m[1]! : Number(m[2])))
  let node: Record<string | number, unknown> = target
  keys.forEach((key, i) => {
    if (i === keys.length - 1) {
      node[key] = append && typeof node[key] === 'string' ? (node[key] as string) + String(value) : value
      return
    }
    if (typeof node[key] !== 'object' || node[key] === null) node[key] = typeof keys[i + 1] === 'number' ? [] : {}
    node = node[key] as Record<string | number, unknown>
  })
}

const stopOf = (finishReason: string, calls: number): StopReason => {
  if (finishReason === 'MAX_TOKENS') return 'length'
  if (['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY'].includes(finishReason)) return 'refusal'
  return calls > 0 ? 'toolUse' : 'stop'
}

function oracle(events: readonly Json[]): Expected {
  const e: Expected = { id: '', model: '', text: '', thinking: '', signatures: [], calls: [], stop: 'error', usage: { input: 0, output: 0, reasoning: 0, cacheRead: 0, total: 0 } }
  let streaming: { call: { name: string; args: Json }; continuing: Set<string> } | undefined
  let finish = ''
  let meta: Json | undefined
  for (const event of events) {
    e.id ||= str(event['responseId'])
    e.model ||= str(event['modelVersion'])
    const candidate = obj(arr(event['candidates'])[0])
    for (const raw of arr(obj(candidate['content'])['parts'])) {
      const part = obj(raw)
      const call = isObj(part['functionCall']) ? part['functionCall'] : undefined
      const signature = str(part['thoughtSignature'])
      if (call !== undefined) {
        const name = str(call['name'])
        if (name !== '') {
          streaming = undefined
          if (call['partialArgs'] === undefined && call['willContinue'] !== true) e.calls.push({ name, args: obj(call['args']) })
          else {
            streaming = { call: { name, args: { ...obj(call['args']) } }, continuing: new Set() }
            e.calls.push(streaming.call)
          }
        }
        for (const p of arr(call['partialArgs']).map(obj)) {
          const path = str(p['jsonPath'])
          const value = 'stringValue' in p ? p['stringValue'] : 'numberValue' in p ? p['numberValue'] : 'boolValue' in p ? p['boolValue'] : null
          setPath(streaming!.call.args, path, value, typeof value === 'string' && streaming!.continuing.has(path))
          if (p['willContinue'] === true) streaming!.continuing.add(path)
          else streaming!.continuing.delete(path)
        }
        if (signature !== '') e.signatures.push({ kind: 'functionCall', signature, name: name || (streaming?.call.name ?? '') })
      } else if (part['thought'] === true) {
        e.thinking += str(part['text'])
        if (signature !== '') e.signatures.push({ kind: 'thought', signature })
      } else {
        e.text += str(part['text'])
        if (signature !== '') e.signatures.push({ kind: 'text', signature })
      }
    }
    finish = str(candidate['finishReason']) || finish
    if (isObj(event['usageMetadata']) && typeof event['usageMetadata']['promptTokenCount'] === 'number') meta = event['usageMetadata']
  }
  e.stop = finish === '' ? 'error' : stopOf(finish, e.calls.length)
  const m = obj(meta)
  const prompt = num(m['promptTokenCount'])
  const cached = num(m['cachedContentTokenCount'])
  const thoughts = num(m['thoughtsTokenCount'])
  e.usage = {
    input: prompt - cached + num(m['toolUsePromptTokenCount']),
    output: num(m['candidatesTokenCount']) + thoughts,
    reasoning: thoughts,
    cacheRead: cached,
    total: num(m['totalTokenCount']),
  }
  return e
}

// ---------------------------------------------------------------------------
// Decoding

const pieces = splitBytes

const fold = (chunks: readonly ProviderChunk[], model: ModelSpec): AssistantMessage => foldChunks(chunks, model)

/** Which kind of replayed part a signature is on. */
const kindOfPart = (part: Json): SignedKind => (isObj(part['functionCall']) ? 'functionCall' : part['thought'] === true ? 'thought' : 'text')

function checkResponse(lines: readonly string[]): string {
  const events = lines.map((l) => obj(JSON.parse(l)))
  const expected = oracle(events)
  const wire = lines.map((l) => `data: ${l}\n\n`).join('')
  const model = modelSpec('google', expected.model, { cost: rates })
  const whole = decodeWire(new GoogleDecoder(model.modelId), [wire])
  for (const size of [1, 2, 7, 64]) expectSame(`chunks when split every ${size} bytes`, decodeWire(new GoogleDecoder(model.modelId), pieces(wire, size)), whole)
  const message = fold(whole, model)
  if (message.errorMessage !== undefined) throw new Mismatch(`the message ended in error: ${message.errorMessage}`)

  expectSame('responseId', message.responseId, expected.id)
  expectSame('model', message.model, expected.model)
  expectSame('text', extractText(message.content), expected.text)
  const thinking = message.content.flatMap((b) => (b.type === 'thinking' ? [b] : []))
  expectSame('thinking text', thinking.map((b) => b.thinking).join(''), expected.thinking)
  expectSame('signatures', thinking.flatMap((b) => (b.signature === undefined ? [] : [b.signature])), expected.signatures.map((s) => s.signature))
  const calls = message.content.flatMap((b) => (b.type === 'toolCall' ? [b] : []))
  expectSame('tool calls', calls.map((c) => ({ name: c.name, args: c.arguments })), expected.calls)
  if (calls.some((c) => c.partialJson !== undefined || c.parseError !== undefined)) throw new Mismatch('a tool call did not complete')
  if (new Set(calls.map((c) => c.id)).size !== calls.length || calls.some((c) => c.id === '')) throw new Mismatch(`tool-call ids are not unique: ${calls.map((c) => c.id).join(', ')}`)
  expectSame('stop reason', message.stopReason, expected.stop)
  const u = message.usage
  expectSame('usage', { input: u.input, output: u.output, reasoning: u.reasoning, cacheRead: u.cacheRead, total: u.total }, expected.usage)
  if (u.reasoning > u.output) throw new Mismatch('reasoning exceeds output')
  expectSame('cost', message.cost.total, costOf(u, rates).total)

  // Replay: the next request must carry each signature on the same kind of part, and the same calls.
  const results: ToolResultMessage[] = calls.map((c) => ({ role: 'toolResult', toolCallId: c.id, toolName: c.name, content: [{ type: 'text', text: 'ok' }], isError: false, timestamp: 0 }))
  const transcript: LlmMessage[] = [userMessage('q'), message, ...results]
  const body = googleRequestBody({ model, systemPrompt: '', messages: transcript, tools: [] })
  const contents = arr(body['contents']).map(obj)
  const modelTurn = contents.find((c) => c['role'] === 'model')
  const parts = arr(modelTurn?.['parts']).map(obj)
  const replayedSignatures = parts.flatMap((p) => {
    const call = obj(p['functionCall'])
    return typeof p['thoughtSignature'] === 'string' ? [{ kind: kindOfPart(p), signature: p['thoughtSignature'], ...(isObj(p['functionCall']) ? { name: str(call['name']) } : {}) }] : []
  })
  expectSame('replayed signatures (kind of part, signature)', replayedSignatures, expected.signatures)
  expectSame(
    'replayed calls',
    parts.flatMap((p) => (isObj(p['functionCall']) ? [{ name: p['functionCall']['name'], args: p['functionCall']['args'] }] : [])),
    expected.calls,
  )
  if (calls.length > 0) {
    const responses = arr(contents.at(-1)?.['parts']).map((p) => obj(obj(p)['functionResponse']))
    expectSame('replayed function responses', responses.map((r) => r['name']), calls.map((c) => c.name))
  }

  const kinds = [...new Set(expected.signatures.map((s) => s.kind))].join('/')
  return (
    `text ${expected.text.length} chars; thinking ${expected.thinking.length} chars; ` +
    `${expected.signatures.length} signature${expected.signatures.length === 1 ? '' : 's'}${kinds === '' ? '' : ` (${kinds}) replayed in place`}; ` +
    `${calls.length} tool call${calls.length === 1 ? '' : 's'}${calls.length === 0 ? '' : ` (${calls.map((c) => c.name).join(', ')})`}; ` +
    `stop ${message.stopReason}; usage in ${u.input} out ${u.output} (reasoning ${u.reasoning}) cacheRead ${u.cacheRead} total ${u.total}; 4 splits agree`
  )
}

/** Consecutive responses of one file, told apart by `responseId`. */
function responses(lines: readonly string[]): string[][] {
  const out: string[][] = []
  let id: string | undefined
  for (const line of lines) {
    const next = str(obj(JSON.parse(line))['responseId'])
    if (out.length === 0 || (next !== '' && id !== undefined && next !== id)) out.push([])
    if (next !== '') id = next
    out.at(-1)!.push(line)
  }
  return out
}

function checkStream(contents: string): FileVerdict {
  const lines = contents.split('\n').filter((l) => l.trim() !== '')
  const groups = responses(lines)
  const details = groups.map(checkResponse)
  return { ok: true, detail: groups.length === 1 ? details[0]! : `${groups.length} responses: ${details.join(' | ')}` }
}

// ---------------------------------------------------------------------------
// Error bodies

const kindOfStatus: Record<string, string> = {
  RESOURCE_EXHAUSTED: 'rateLimit',
  UNAVAILABLE: 'overloaded',
  INTERNAL: 'server',
  UNAUTHENTICATED: 'auth',
  PERMISSION_DENIED: 'auth',
  NOT_FOUND: 'modelNotFound',
  INVALID_ARGUMENT: 'invalidRequest',
  DEADLINE_EXCEEDED: 'timeout',
}

function checkErrorBody(contents: string): FileVerdict | undefined {
  const error = obj(obj(JSON.parse(contents))['error'])
  if (Object.keys(error).length === 0) return undefined
  const status = num(error['code'])
  const rpc = str(error['status'])
  const retryInfo = arr(error['details']).map(obj).find((d) => str(d['@type']).endsWith('RetryInfo'))
  const delay = retryInfo === undefined ? undefined : Math.round(parseFloat(str(retryInfo['retryDelay'])) * 1000)
  const info = googleErrorFromBody(status, new Headers(), contents).info
  const kind = kindOfStatus[rpc] ?? 'unknown'
  expectSame('kind', info.kind, kind)
  expectSame('retryable', info.retryable, ['rateLimit', 'overloaded', 'server', 'timeout'].includes(kind))
  expectSame('retryAfterMs', info.retryAfterMs, delay)
  expectSame('code', info.code, rpc)
  expectSame('status', info.status, status)
  if (!info.message.includes(str(error['message']))) throw new Mismatch('the message lost the API message')
  return { ok: true, detail: `HTTP ${status} ${rpc} → ${info.kind}, retryable ${info.retryable}${delay === undefined ? '' : `, retry after ${info.retryAfterMs} ms`}` }
}

/** The Google folder's suite. */
export const suite: ConformanceSuite = (path, contents) => {
  const name = basename(path)
  try {
    if (name.endsWith('.chunks.txt')) return checkStream(contents)
    if (name.endsWith('.json')) return checkErrorBody(contents)
    return undefined
  } catch (error) {
    if (error instanceof Mismatch) return { ok: false, detail: error.message }
    throw error
  }
}
