/**
 * Conformance of the Anthropic adapter against ../shared/fixtures/anthropic.
 *
 * Streams (`*.chunks.txt`, one `data:` JSON per line): the SSE wire text is
 * rebuilt (`event:` = the JSON's `type`), decoded whole and split into small
 * network chunks (all splits must agree), folded into the final message, and
 * compared with an oracle computed directly from the lines' JSON.
 *
 * `ToolRunner.json` (non-streamed request/response pairs): every response is
 * decoded with `anthropicMessageFromJson` and checked against its JSON; every
 * request body is rebuilt with `anthropicRequestBody` from the conversation
 * (assistant turns taken from this adapter's own decoding of the earlier
 * responses) and compared with the recorded one.
 */
import { basename } from 'node:path'
import { foldChunks, splitBytes } from '../../marbles/fold-chunks.js'
import { AnthropicDecoder } from '../../src/providers/anthropic-decoder.js'
import { anthropicMessageFromJson } from '../../src/providers/anthropic-from-json.js'
import { anthropicRequestBody } from '../../src/providers/anthropic-request.js'
import { decodeWire } from '../../src/providers/protocol.js'
import type { ProviderChunk } from '../../src/types/chunk.js'
import type { AssistantContent, UserContent } from '../../src/types/content.js'
import type { AssistantMessage, LlmMessage, ToolResultMessage } from '../../src/types/message.js'
import { modelSpec, type ModelSpec } from '../../src/types/model.js'
import type { StopReason } from '../../src/types/stop-reason.js'
import type { ToolSchema } from '../../src/types/tool.js'
import { costOf, type CostRates } from '../../src/types/usage.js'
import { arr, expectSame, isObj, Mismatch, obj, same, str, type Json } from './check.js'
import type { ConformanceSuite, FileVerdict } from './types.js'

const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined)

const stopOf: Record<string, StopReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'toolUse',
  refusal: 'refusal',
}

const rates: CostRates = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }

// ---------------------------------------------------------------------------
// The oracle: what a response's JSON lines say the final message is.

interface Counts {
  input: number
  output: number
  cacheRead: number
  cacheWrite: number
  extra: Record<string, number>
}

interface Expected {
  id: string
  model: string
  text: string
  thinking: { thinking: string; signature?: string }[]
  redacted: string[]
  tools: { id: string; name: string; arguments: unknown }[]
  extensions: { typeName: string; data: unknown }[]
  stop: StopReason
  usage: Counts
  restarts: number
}

function readUsage(u: Json, base: Counts): Counts {
  const extra = { ...base.extra }
  for (const [k, v] of Object.entries(obj(u['server_tool_use']))) if (typeof v === 'number' && v > 0) extra[k] = v
  return {
    input: num(u['input_tokens']) ?? base.input,
    output: num(u['output_tokens']) ?? base.output,
    cacheRead: num(u['cache_read_input_tokens']) ?? base.cacheRead,
    cacheWrite: num(u['cache_creation_input_tokens']) ?? base.cacheWrite,
    extra,
  }
}
const zero = (): Counts => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, extra: {} })
const addCounts = (a: Counts, b: Counts): Counts => {
  const extra = { ...a.extra }
  for (const [k, v] of Object.entries(b.extra)) extra[k] = (extra[k] ?? 0) + v
  return { input: a.input + b.input, output: a.output + b.output, cacheRead: a.cacheRead + b.cacheRead, cacheWrite: a.cacheWrite + b.cacheWrite, extra }
}

/**
 * The final message of one response. A second `message_start` with nothing
 * before it is a duplicate; after content it restarts the response: only the
 * last attempt's content counts, but every attempt's usage stays billed.
 */
function oracle(events: readonly Json[]): Expected {
  let billed = zero()
  let e: Expected | undefined
  let lastStartId: string | undefined
  let sinceStart = 0
  const blocks = new Map<number, { block: Json; text: string; thinking: string; signature: string; json: string }>()
  let stopReason: string | undefined
  const meta: { typeName: string; data: unknown }[] = []
  const fresh = (message: Json): Expected => ({
    id: str(message['id']),
    model: str(message['model']),
    text: '',
    thinking: [],
    redacted: [],
    tools: [],
    extensions: [],
    stop: 'stop',
    usage: readUsage(obj(message['usage']), zero()),
    restarts: e?.restarts ?? 0,
  })
  const finishBlock = (x: Expected, block: Json, text: string, thinking: string, signature: string, json: string): void => {
    const type = str(block['type'])
    if (type === 'text') x.text += text
    else if (type === 'thinking') {
      if (thinking !== '' || signature !== '') x.thinking.push(signature === '' ? { thinking } : { thinking, signature })
    } else if (type === 'redacted_thinking') x.redacted.push(str(block['data']))
    else if (type === 'tool_use') {
      x.tools.push({ id: str(block['id']), name: str(block['name']), arguments: json.trim() === '' ? (block['input'] ?? {}) : JSON.parse(json) })
    } else x.extensions.push({ typeName: type, data: json.trim() === '' ? block : { ...block, input: JSON.parse(json) } })
  }
  for (const ev of events) {
    const type = ev['type']
    if (type === 'ping') continue
    if (type === 'message_start') {
      const message = obj(ev['message'])
      if (e !== undefined && sinceStart === 0 && message['id'] === lastStartId) continue
      if (e !== undefined) {
        billed = addCounts(billed, e.usage)
        e = { ...fresh(message), restarts: e.restarts + 1 }
      } else e = fresh(message)
      lastStartId = str(message['id'])
      sinceStart = 0
      blocks.clear()
      meta.length = 0
      stopReason = typeof message['stop_reason'] === 'string' ? message['stop_reason'] : undefined
      // A message announced finished lists its blocks whole.
      for (const block of arr(message['content'])) {
        const b = obj(block)
        const type = str(b['type'])
        if (type === 'text') e.text += str(b['text'])
        else if (type === 'thinking') e.thinking.push(str(b['signature']) === '' ? { thinking: str(b['thinking']) } : { thinking: str(b['thinking']), signature: str(b['signature']) })
        else if (type === 'redacted_thinking') e.redacted.push(str(b['data']))
        else if (type === 'tool_use') e.tools.push({ id: str(b['id']), name: str(b['name']), arguments: b['input'] ?? {} })
        else e.extensions.push({ typeName: type, data: b })
        sinceStart++
      }
      continue
    }
    if (e === undefined) throw new Mismatch(`'${String(type)}' before message_start`)
    sinceStart++
    if (type === 'content_block_start') {
      const b = obj(ev['content_block'])
      blocks.set(num(ev['index']) ?? -1, { block: b, text: str(b['text']), thinking: str(b['thinking']), signature: str(b['signature']), json: '' })
    } else if (type === 'content_block_delta') {
      const open = blocks.get(num(ev['index']) ?? -1)
      const d = obj(ev['delta'])
      if (open === undefined) throw new Mismatch('delta for a block that is not open')
      if (d['type'] === 'text_delta') open.text += str(d['text'])
      else if (d['type'] === 'thinking_delta') open.thinking += str(d['thinking'])
      else if (d['type'] === 'signature_delta') open.signature += str(d['signature'])
      else if (d['type'] === 'input_json_delta') open.json += str(d['partial_json'])
    } else if (type === 'content_block_stop') {
      const index = num(ev['index']) ?? -1
      const open = blocks.get(index)
      if (open !== undefined) finishBlock(e, open.block, open.text, open.thinking, open.signature, open.json)
      blocks.delete(index)
    } else if (type === 'message_delta') {
      const d = obj(ev['delta'])
      if (typeof d['stop_reason'] === 'string') stopReason = d['stop_reason']
      e.usage = readUsage(obj(ev['usage']), e.usage)
      if (isObj(d['stop_details'])) meta.push({ typeName: 'anthropic.stop_details', data: d['stop_details'] })
      if (isObj(d['container'])) meta.push({ typeName: 'anthropic.container', data: d['container'] })
      const cm = obj(ev['context_management'])
      if (arr(cm['applied_edits']).length > 0) meta.push({ typeName: 'anthropic.context_management', data: cm })
    } else if (type === 'message_stop') {
      e.extensions.push(...meta)
      e.stop = stopReason === undefined ? (e.tools.length > 0 ? 'toolUse' : 'stop') : (stopOf[stopReason] ?? 'stop')
      e.usage = addCounts(billed, e.usage)
      return e
    }
  }
  throw new Mismatch('the response has no message_stop')
}

// ---------------------------------------------------------------------------
// The adapter's side.

const wireOf = (lines: readonly string[]): string =>
  lines.map((line) => `event: ${str(obj(JSON.parse(line))['type'])}\ndata: ${line}\n\n`).join('')

const split = splitBytes

/** The final message the runtime folds `chunks` into. */
const fold = (chunks: readonly ProviderChunk[], model: ModelSpec): AssistantMessage => foldChunks(chunks, model)

function checkMessage(m: AssistantMessage, x: Expected, model: ModelSpec): void {
  if (m.stopReason === 'error') throw new Mismatch(`the message ended with an error: ${m.errorMessage ?? ''}`)
  expectSame('responseId', m.responseId, x.id)
  expectSame('model', m.model, x.model)
  expectSame('text', m.content.filter((c) => c.type === 'text').map((c) => c.text).join(''), x.text)
  expectSame(
    'thinking',
    m.content.flatMap((c) => (c.type === 'thinking' && c.redacted !== true ? [c.signature === undefined ? { thinking: c.thinking } : { thinking: c.thinking, signature: c.signature }] : [])),
    x.thinking,
  )
  expectSame('redacted thinking', m.content.flatMap((c) => (c.type === 'thinking' && c.redacted === true ? [c.signature] : [])), x.redacted)
  const calls = m.content.flatMap((c) => (c.type === 'toolCall' ? [c] : []))
  for (const c of calls) if (c.parseError !== undefined) throw new Mismatch(`tool call ${c.id}: ${c.parseError}`)
  expectSame('tool calls', calls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })), x.tools)
  expectSame('extensions', m.content.flatMap((c) => (c.type === 'extension' ? [{ typeName: c.typeName, data: c.data }] : [])), x.extensions)
  expectSame('stop reason', m.stopReason, x.stop)
  const u = x.usage
  const total = u.input + u.output + u.cacheRead + u.cacheWrite
  expectSame('usage', m.usage, { input: u.input, output: u.output, reasoning: 0, cacheRead: u.cacheRead, cacheWrite: u.cacheWrite, total, extra: u.extra })
  const cost = costOf(m.usage, model.cost)
  if (Math.abs(m.cost.total - cost.total) > 1e-12) throw new Mismatch(`cost ${m.cost.total}, expected ${cost.total}`)
}

const SIZES = [1, 3, 17, 256] as const

function checkStreamFile(name: string, contents: string): FileVerdict {
  const lines = contents.split('\n').filter((l) => l.trim() !== '')
  const events = lines.map((l) => obj(JSON.parse(l)))
  // The duplicate/spliced edge cases are one response each; other files hold consecutive API calls.
  const oneResponse = name.startsWith('duplicate-') || name.startsWith('spliced-')
  const responses: string[][] = []
  lines.forEach((line, i) => {
    if (responses.length === 0 || (!oneResponse && events[i]!['type'] === 'message_start')) responses.push([])
    responses.at(-1)!.push(line)
  })
  let text = 0
  let tools = 0
  let thinking = 0
  let extensions = 0
  let restarts = 0
  let lastUsage = ''
  const stops = new Set<string>()
  for (const [r, response] of responses.entries()) {
    const x = oracle(response.map((l) => obj(JSON.parse(l))))
    const model = modelSpec('anthropic', x.model, { cost: rates })
    const wire = wireOf(response)
    const whole = decodeWire(new AnthropicDecoder(), [wire])
    for (const size of SIZES) {
      expectSame(`response ${r + 1}: chunks with ${size}-byte network reads`, decodeWire(new AnthropicDecoder(), split(wire, size)), whole)
    }
    const retries = whole.filter((c) => c.type === 'retry').length
    expectSame(`response ${r + 1}: restarts`, retries, x.restarts)
    try {
      checkMessage(fold(decodeWire(new AnthropicDecoder(), split(wire, 7)), model), x, model)
    } catch (error) {
      if (error instanceof Mismatch) throw new Mismatch(`response ${r + 1}: ${error.message}`)
      throw error
    }
    text += x.text.length
    tools += x.tools.length
    thinking += x.thinking.length + x.redacted.length
    extensions += x.extensions.length
    restarts += retries
    stops.add(x.stop)
    lastUsage = `usage in ${x.usage.input} out ${x.usage.output}${x.usage.cacheRead + x.usage.cacheWrite > 0 ? ` cache ${x.usage.cacheRead}/${x.usage.cacheWrite}` : ''}`
  }
  const parts = [
    `${responses.length} response${responses.length === 1 ? '' : 's'}`,
    `text ${text} chars`,
    ...(thinking > 0 ? [`${thinking} thinking block${thinking === 1 ? '' : 's'} (signed)`] : []),
    `${tools} tool call${tools === 1 ? '' : 's'}`,
    ...(extensions > 0 ? [`${extensions} extension block${extensions === 1 ? '' : 's'}`] : []),
    ...(restarts > 0 ? [`${restarts} restart → retry chunk (usage of the discarded attempt kept)`] : []),
    `stop ${[...stops].join('/')}`,
    `${lastUsage}${responses.length > 1 ? ' (last)' : ''}`,
    `same chunks for ${SIZES.join('/')}-byte reads`,
  ]
  return { ok: true, detail: parts.join('; ') }
}

// ---------------------------------------------------------------------------
// ToolRunner.json: requests rebuilt, responses decoded.

/** A message's content as a list of blocks (the API takes a string as one text block). */
const blocksOf = (content: unknown): Json[] => (typeof content === 'string' ? [{ type: 'text', text: content }] : arr(content).map(obj))

/** A request's messages in a comparable form: block lists, tool-result strings as text blocks, consecutive roles merged (the API merges them too). */
function normalizeMessages(messages: unknown): Json[] {
  const out: { role: string; content: Json[] }[] = []
  for (const m of arr(messages).map(obj)) {
    const content = blocksOf(m['content']).map((b) => {
      if (b['type'] !== 'tool_result') return b
      const { is_error: isError, content: inner, ...rest } = b
      return { ...rest, ...(inner === undefined ? {} : { content: blocksOf(inner) }), ...(isError === true ? { is_error: true } : {}) }
    })
    const last = out.at(-1)
    if (last !== undefined && last.role === m['role']) last.content.push(...content)
    else out.push({ role: str(m['role']), content })
  }
  return out
}

function userContent(blocks: readonly Json[]): UserContent[] {
  return blocks.map((b): UserContent => {
    if (b['type'] === 'text') return { type: 'text', text: str(b['text']) }
    throw new Mismatch(`a recorded user block of type '${String(b['type'])}' this check cannot rebuild`)
  })
}

/** The conversation a recorded request was built from; assistant turns are this adapter's decodings of earlier responses when one matches. */
function conversationOf(body: Json, decoded: readonly { response: Json; message: AssistantMessage }[]): { messages: LlmMessage[]; ours: number; rebuilt: number } {
  const messages: LlmMessage[] = []
  const toolNames = new Map<string, string>()
  let ours = 0
  let rebuilt = 0
  for (const m of arr(body['messages']).map(obj)) {
    const blocks = blocksOf(m['content'])
    if (m['role'] === 'assistant') {
      const match = decoded.find((d) => same(d.response['content'], m['content']))
      let message: AssistantMessage
      if (match !== undefined) {
        message = match.message
        ours++
      } else {
        rebuilt++
        const content = blocks.map((b): AssistantContent => {
          if (b['type'] === 'text') return { type: 'text', text: str(b['text']) }
          if (b['type'] === 'tool_use') return { type: 'toolCall', id: str(b['id']), name: str(b['name']), arguments: obj(b['input']) }
          throw new Mismatch(`a recorded assistant block of type '${String(b['type'])}' this check cannot rebuild`)
        })
        message = { role: 'assistant', content, provider: 'anthropic', model: str(body['model']), usage: costlessUsage, cost: costOf(costlessUsage, undefined), stopReason: 'toolUse', timestamp: 0 }
      }
      for (const c of message.content) if (c.type === 'toolCall') toolNames.set(c.id, c.name)
      messages.push(message)
      continue
    }
    // A user turn: its tool results first (the API wants them first), then its other blocks, in order.
    let pending: Json[] = []
    const flush = (): void => {
      if (pending.length > 0) messages.push({ role: 'user', content: userContent(pending), timestamp: 0 })
      pending = []
    }
    for (const b of blocks) {
      if (b['type'] !== 'tool_result') {
        pending.push(b)
        continue
      }
      flush()
      const id = str(b['tool_use_id'])
      const result: ToolResultMessage = {
        role: 'toolResult',
        toolCallId: id,
        toolName: toolNames.get(id) ?? '',
        content: userContent(blocksOf(b['content'] ?? [])),
        isError: b['is_error'] === true,
        timestamp: 0,
      }
      messages.push(result)
    }
    flush()
  }
  return { messages, ours, rebuilt }
}

const costlessUsage = { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0, total: 0, extra: {} }

function checkToolRunner(contents: string): FileVerdict {
  const entries = arr(JSON.parse(contents)).map(obj)
  const decoded: { response: Json; message: AssistantMessage }[] = []
  let ours = 0
  let rebuilt = 0
  let toolCalls = 0
  let toolResults = 0
  for (const [i, entry] of entries.entries()) {
    const body = obj(entry['body'])
    const response = obj(entry['response'])
    const where = `entry ${i + 1}`
    try {
      // The request: rebuilt from its conversation.
      const conversation = conversationOf(body, decoded)
      ours += conversation.ours
      rebuilt += conversation.rebuilt
      const tools: ToolSchema[] = arr(body['tools']).map(obj).map((t) => ({ name: str(t['name']), description: str(t['description']), parameters: obj(t['input_schema']) }))
      const model = modelSpec('anthropic', str(body['model']))
      const maxTokens = num(body['max_tokens'])
      const system = body['system']
      const built = anthropicRequestBody({
        model,
        systemPrompt: typeof system === 'string' ? system : '',
        messages: conversation.messages,
        tools,
        options: { cacheRetention: 'none', ...(maxTokens === undefined ? {} : { maxTokens }) },
      })
      expectSame('request model', built['model'], body['model'])
      expectSame('request max_tokens', built['max_tokens'], body['max_tokens'])
      expectSame('request system', built['system'], body['system'])
      expectSame('request messages', normalizeMessages(built['messages']), normalizeMessages(body['messages']))
      // `type: 'custom'` is the API's default tool type: the SDK spells it out, this adapter leaves it implied.
      const recordedTools = arr(body['tools']).map(obj).map(({ type: _type, ...rest }) => rest)
      expectSame('request tools', built['tools'] ?? [], recordedTools)
      for (const m of normalizeMessages(body['messages'])) {
        for (const b of arr(m['content']).map(obj)) if (b['type'] === 'tool_result') toolResults++
      }

      // The response: decoded and compared with its JSON.
      const rmodel = modelSpec('anthropic', str(body['model']), { cost: rates })
      const message = anthropicMessageFromJson(response, rmodel, 0)
      const content = arr(response['content']).map(obj)
      const usage = obj(response['usage'])
      const u = readUsage(usage, zero())
      const x: Expected = {
        id: str(response['id']),
        model: str(response['model']),
        text: content.filter((b) => b['type'] === 'text').map((b) => str(b['text'])).join(''),
        thinking: [],
        redacted: [],
        tools: content.filter((b) => b['type'] === 'tool_use').map((b) => ({ id: str(b['id']), name: str(b['name']), arguments: b['input'] })),
        extensions: [],
        stop: stopOf[str(response['stop_reason'])] ?? 'stop',
        usage: u,
        restarts: 0,
      }
      checkMessage(message, x, rmodel)
      toolCalls += x.tools.length
      decoded.push({ response, message })
    } catch (error) {
      if (error instanceof Mismatch) return { ok: false, detail: `${where}: ${error.message}` }
      throw error
    }
  }
  return {
    ok: true,
    detail: `${entries.length} request/response pairs; requests rebuilt (${ours} assistant turns from our own decoding, ${rebuilt} rebuilt by hand; ${toolResults} tool results grouped) and equal to the recorded ones; responses decoded: ${toolCalls} tool calls, text/stop/usage as recorded`,
  }
}

/** The suite `npm run conformance` runs on every file of the `anthropic` folder. */
export const suite: ConformanceSuite = (path, contents) => {
  const name = basename(path)
  try {
    if (name === 'ToolRunner.json') return checkToolRunner(contents)
    if (name.endsWith('.chunks.txt')) return checkStreamFile(name, contents)
  } catch (error) {
    if (error instanceof Mismatch) return { ok: false, detail: error.message }
    throw error
  }
  return undefined
}
