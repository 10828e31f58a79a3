/**
 * Conformance of the Chat Completions decoder against real recordings
 * (../shared/fixtures/openai-chat): each stream is decoded by the adapter
 * (split into small network chunks, and whole: both must agree), folded into
 * an assistant message, and compared with an oracle computed directly from
 * the stream's JSON payloads. Also used by the openai-compatible suite.
 */
import { basename } from 'node:path'
import { from } from 'rxjs'
import { accumulateMessage } from '../../operators/accumulate-message.js'
import { extractText } from '../../src/types/content.js'
import type { AssistantMessage } from '../../src/types/message.js'
import { modelSpec } from '../../src/types/model.js'
import type { ProviderChunk } from '../../src/types/chunk.js'
import { decodeWire } from '../../src/providers/protocol.js'
import { OpenAIChatDecoder } from '../../src/providers/openai-chat-decoder.js'
import { openaiCompat, type Compat } from '../../src/providers/openai-chat-compat.js'
import { splitBytes } from '../../marbles/fold-chunks.js'
import type { ConformanceSuite, FileVerdict } from './types.js'

type Json = Record<string, unknown>
const isJson = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined)

/** What a stream says, computed from its payloads without the adapter. */
export interface Oracle {
  readonly id: string
  readonly text: string
  readonly thinking: string
  readonly tools: { id: string; name: string; arguments: unknown }[]
  readonly stopReason: string
  readonly usage?: { input: number; output: number; reasoning: number; cacheRead: number; total: number }
}

/** The `data:` payloads of an SSE text, `[DONE]` excluded. */
export function dataPayloads(sse: string): Json[] {
  return sse
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).replace(/^ /, ''))
    .filter((data) => data.trim() !== '[DONE]')
    .map((data) => JSON.parse(data) as Json)
}

/** The oracle of one response's payloads. */
export function oracleOf(payloads: readonly Json[]): Oracle {
  let text = ''
  let thinking = ''
  let refused = false
  let finish: string | undefined
  let usage: Json | undefined
  const tools = new Map<number, { id: string; name: string; args: string }>()
  for (const p of payloads) {
    const x = isJson(p['x_groq']) ? p['x_groq'] : undefined
    const u = isJson(p['usage']) ? p['usage'] : isJson(x?.['usage']) ? x['usage'] : undefined
    if (u !== undefined) usage = u
    const choice = Array.isArray(p['choices']) && isJson(p['choices'][0]) ? p['choices'][0] : undefined
    const delta = isJson(choice?.['delta']) ? choice['delta'] : undefined
    if (typeof delta?.['content'] === 'string') text += delta['content']
    if (typeof delta?.['refusal'] === 'string' && delta['refusal'] !== '') {
      refused = true
      text += delta['refusal']
    }
    const r = delta?.['reasoning_content'] ?? delta?.['reasoning']
    if (typeof r === 'string') thinking += r
    for (const call of Array.isArray(delta?.['tool_calls']) ? delta['tool_calls'] : []) {
      if (!isJson(call)) continue
      const index = num(call['index']) ?? 0
      const t = tools.get(index) ?? { id: '', name: '', args: '' }
      const fn = isJson(call['function']) ? call['function'] : {}
      if (t.id === '' && typeof call['id'] === 'string') t.id = call['id']
      if (t.name === '' && typeof fn['name'] === 'string') t.name = fn['name']
      if (typeof fn['arguments'] === 'string') t.args += fn['arguments']
      tools.set(index, t)
    }
    if (typeof choice?.['finish_reason'] === 'string') finish = choice['finish_reason']
  }
  const calls = [...tools.entries()].sort(([a], [b]) => a - b).map(([, t]) => ({ id: t.id, name: t.name, arguments: JSON.parse(t.args === '' ? '{}' : t.args) as unknown }))
  const stopReason =
    refused || finish === 'content_filter' ? 'refusal' : finish === 'length' ? 'length' : finish === 'tool_calls' || calls.length > 0 ? 'toolUse' : 'stop'
  let oracleUsage: Oracle['usage']
  if (usage !== undefined) {
    const prompt = num(usage['prompt_tokens']) ?? 0
    const details = isJson(usage['prompt_tokens_details']) ? usage['prompt_tokens_details'] : {}
    const cached = num(details['cached_tokens']) ?? num(usage['prompt_cache_hit_tokens']) ?? 0
    const out = isJson(usage['completion_tokens_details']) ? usage['completion_tokens_details'] : {}
    const total = num(usage['total_tokens'])
    // Whatever a server counts in completion_tokens, the output is what the total holds beyond the prompt.
    const output = total !== undefined ? total - prompt : (num(usage['completion_tokens']) ?? 0)
    oracleUsage = { input: prompt - cached, output, reasoning: num(out['reasoning_tokens']) ?? 0, cacheRead: cached, total: total ?? prompt + output }
  }
  return { id: typeof payloads[0]?.['id'] === 'string' ? payloads[0]['id'] : '', text, thinking, tools: calls, stopReason, ...(oracleUsage === undefined ? {} : { usage: oracleUsage }) }
}

/** Splits a stream's payloads into responses: a new id starts a new response. */
export function responsesOf(payloads: readonly Json[]): Json[][] {
  const out: Json[][] = []
  let last: unknown
  for (const p of payloads) {
    if (out.length === 0 || p['id'] !== last) out.push([])
    out.at(-1)!.push(p)
    last = p['id']
  }
  return out
}

const split = splitBytes

/** Folds chunks into the final message, as the runtime does. */
export function foldMessage(chunks: readonly ProviderChunk[], provider: string): AssistantMessage {
  let message: AssistantMessage | undefined
  from(chunks)
    .pipe(accumulateMessage({ model: modelSpec(provider, 'conformance'), now: () => 0 }))
    .subscribe((e) => {
      if (e.type === 'messageEnd') message = e.message
    })
  if (message === undefined) throw new Error('the fold emitted no messageEnd')
  return message
}

/** Compares the adapter's message with the oracle; the first difference, or a summary of what matched. */
export function compare(message: AssistantMessage, oracle: Oracle): { ok: boolean; detail: string } {
  const fail = (what: string, got: unknown, want: unknown): { ok: false; detail: string } => ({
    ok: false,
    detail: `${what}: got ${JSON.stringify(got)?.slice(0, 120)}, want ${JSON.stringify(want)?.slice(0, 120)}`,
  })
  if (message.stopReason === 'error') return { ok: false, detail: `decoding failed: ${message.errorMessage ?? ''}` }
  if (message.responseId !== oracle.id && !(oracle.id === '' && message.responseId === undefined)) return fail('response id', message.responseId, oracle.id)
  const text = extractText(message.content)
  if (text !== oracle.text) return fail('text', text, oracle.text)
  const thinking = message.content.map((c) => (c.type === 'thinking' ? c.thinking : '')).join('')
  if (thinking !== oracle.thinking) return fail('thinking', thinking, oracle.thinking)
  const calls = message.content.flatMap((c) => (c.type === 'toolCall' ? [{ id: c.id, name: c.name, arguments: c.arguments as unknown }] : []))
  if (JSON.stringify(calls) !== JSON.stringify(oracle.tools)) return fail('tool calls', calls, oracle.tools)
  if (message.stopReason !== oracle.stopReason) return fail('stop reason', message.stopReason, oracle.stopReason)
  const u = message.usage
  if (oracle.usage !== undefined) {
    const got = { input: u.input, output: u.output, reasoning: u.reasoning, cacheRead: u.cacheRead, total: u.total }
    if (JSON.stringify(got) !== JSON.stringify(oracle.usage)) return fail('usage', got, oracle.usage)
  }
  // The invariants of usage.ts.
  if (u.reasoning > u.output) return fail('usage invariant reasoning ≤ output', u, 'reasoning within output')
  if (u.total !== u.input + u.output + u.cacheRead + u.cacheWrite) return fail('usage invariant total', u, 'input + output + cacheRead + cacheWrite')
  const parts = [`text ${text.length} chars`]
  if (thinking !== '') parts.push(`thinking ${thinking.length} chars`)
  if (calls.length > 0) parts.push(`${calls.length} tool call${calls.length === 1 ? '' : 's'} (${calls.map((c) => c.name).join(', ')})`)
  parts.push(`stop ${message.stopReason}`)
  parts.push(oracle.usage === undefined ? 'no usage' : `usage in ${u.input} out ${u.output}${u.reasoning > 0 ? ` reasoning ${u.reasoning}` : ''}${u.cacheRead > 0 ? ` cacheRead ${u.cacheRead}` : ''} total ${u.total}`)
  return { ok: true, detail: parts.join('; ') }
}

/** Decodes one SSE stream (possibly several responses) and checks each response against its oracle. */
export function checkStream(sse: string, provider: string, compat: Compat): FileVerdict {
  const payloads = dataPayloads(sse)
  const responses = responsesOf(payloads)
  if (responses.length === 0) return { ok: false, detail: 'no data payloads' }
  // Each response is re-serialized on its own, in the file's wire form: the file's own bytes when it holds one.
  const wires = responses.length === 1 ? [sse] : responses.map((r) => `${r.map((p) => `data: ${JSON.stringify(p)}\n\n`).join('')}data: [DONE]\n\n`)
  const details: string[] = []
  for (let i = 0; i < responses.length; i++) {
    const wire = wires[i]!
    const whole = decodeWire(new OpenAIChatDecoder(provider, compat), [wire])
    const pieces = decodeWire(new OpenAIChatDecoder(provider, compat), split(wire, 7))
    if (JSON.stringify(whole) !== JSON.stringify(pieces)) return { ok: false, detail: `response ${i + 1}: decoding 7-byte network chunks differs from decoding the whole body` }
    const verdict = compare(foldMessage(pieces, provider), oracleOf(responses[i]!))
    if (!verdict.ok) return { ok: false, detail: `response ${i + 1}: ${verdict.detail}` }
    details.push(verdict.detail)
  }
  return { ok: true, detail: `${responses.length} response${responses.length === 1 ? '' : 's'}; ${details.join(' | ')}` }
}

/** The SSE wire of a `*.chunks.txt` file (one `data:` payload per line), with `[DONE]` when the API sends it. */
export function wireOfChunks(contents: string, done: boolean): string {
  const lines = contents.split(/\r?\n/).filter((l) => l.trim() !== '')
  return `${lines.map((l) => `data: ${l}\n\n`).join('')}${done ? 'data: [DONE]\n\n' : ''}`
}

/** The exports of a Jest snapshot file: name → the string value (template literal unescaped, outer quotes removed). */
export function snapshotExports(contents: string): { name: string; value: string }[] {
  const out: { name: string; value: string }[] = []
  const re = /^exports\[`((?:[^`\\]|\\[\s\S])*)`\] = `((?:[^`\\]|\\[\s\S])*)`;$/gm
  for (const m of contents.matchAll(re)) {
    // Jest escapes backticks, backslashes and `${` in template literals.
    let value = m[2]!.replace(/\\(`|\\|\$\{)/g, '$1')
    value = value.replace(/^\n/, '').replace(/\n$/, '')
    // A string value is printed in double quotes (its inner quotes are not escaped).
    if (value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1)
    out.push({ name: m[1]!, value })
  }
  return out
}

/** Checks every export of a snapshot that is an SSE stream; the others are skipped with a note. */
export function checkSnapshot(contents: string, provider: string, compat: Compat): FileVerdict {
  const exports = snapshotExports(contents)
  if (exports.length === 0) return { ok: false, detail: 'no snapshot exports found' }
  const passed: string[] = []
  const skipped: string[] = []
  for (const { name, value } of exports) {
    if (!/^data: /m.test(value)) {
      skipped.push(name)
      continue
    }
    const verdict = checkStream(value, provider, compat)
    if (!verdict.ok) return { ok: false, detail: `${name}: ${verdict.detail}` }
    passed.push(`${name.replace(/ 1$/, '')} (${verdict.detail.replace(/^1 response; /, '')})`)
  }
  if (passed.length === 0) return { ok: false, detail: `no stream among ${exports.length} exports` }
  return { ok: true, detail: `${passed.length} streams: ${passed.join(' | ')}${skipped.length === 0 ? '' : `; skipped ${skipped.length} non-stream export(s): ${skipped.join(', ')}`}` }
}

export const suite: ConformanceSuite = (path, contents) => {
  const name = basename(path)
  if (name.endsWith('.snap')) return checkSnapshot(contents, 'openai', openaiCompat)
  // api.openai.com ends every stream with [DONE].
  if (name.endsWith('.chunks.txt')) return checkStream(wireOfChunks(contents, true), 'openai', openaiCompat)
  if (name.endsWith('.sse') || name.endsWith('.txt')) return checkStream(contents, 'openai', openaiCompat)
  return undefined
}
