// WIRE: the response bodies the local server streams, generated (never copied from a recording).
//
// Their shape was checked field by field against real recordings of the two APIs (the Anthropic
// Messages stream of a text answer and of a tool call; an OpenAI Chat Completions text stream):
//
// Anthropic Messages SSE — every event is `event: <type>\ndata: <json>\n\n`:
//   message_start {message: {model, id, type, role, content: [], stop_reason: null, stop_sequence: null,
//                  usage: {input_tokens, cache_creation_input_tokens, cache_read_input_tokens,
//                  cache_creation: {...}, output_tokens, service_tier}}}
//   content_block_start {index, content_block: {type: 'text', text: ''}}, then a `ping` (as the API
//     sends one right after the first block starts)
//   content_block_delta {index, delta: {type: 'text_delta', text}} ...
//   content_block_stop {index}
//   content_block_start {index, content_block: {type: 'tool_use', id: 'toolu_…', name, input: {}}}
//   content_block_delta {index, delta: {type: 'input_json_delta', partial_json: ''}} (the API's empty
//     first fragment), a `ping`, then the fragments of the arguments' JSON, content_block_stop
//   message_delta {delta: {stop_reason, stop_sequence: null}, usage: {input_tokens, cache_…, output_tokens}}
//   message_stop
//
// OpenAI Chat Completions SSE — every event is `data: <json>\n\n`, the last `data: [DONE]\n\n`:
//   {id, object: 'chat.completion.chunk', created, model, service_tier, system_fingerprint,
//    choices: [{index: 0, delta, logprobs: null, finish_reason}], usage: null, obfuscation}
//   the first delta is {role: 'assistant', content: '', refusal: null}, then {content} per text delta;
//   a tool call starts with {tool_calls: [{index, id: 'call_…', type: 'function', function: {name,
//   arguments: ''}}]} and its arguments arrive as {tool_calls: [{index, function: {arguments}}]};
//   the finish chunk has delta {} and finish_reason 'stop' | 'tool_calls'; when the request asked for
//   `stream_options.include_usage`, one more chunk with `choices: []` and the usage.
//
// Network chunks: the events are cut into writes of EVENTS_PER_WRITE whole events each (about 1 KB
// for Anthropic, 2 KB for OpenAI), the same bytes and the same cuts for every client. (A real API
// sends about one event per TCP segment at the model's pace; a local server cannot pace 20,000 events
// without timers dominating, so a few events share a write. A client that falls behind reads several
// writes at once, as it would from a real socket.)
import { textDeltas, toolTurn } from '../inputs.mjs'

/** How many SSE events one write of the server holds. */
export const EVENTS_PER_WRITE = 8

/** The sizes of the two scenarios, full and smoke. */
export const sizes = {
  full: { textDeltas: 20_000, turns: 50 },
  smoke: { textDeltas: 200, turns: 2 },
}

/** TOOLS: calls per turn (each answered by one tool result). */
export const CALLS_PER_TURN = 3

/** The text and argument deltas a scenario streams in all (the per-delta denominator). */
export function deltaCount(scenario, size) {
  if (scenario === 'text') return size.textDeltas
  const { text, toolCalls } = toolTurn(0)
  return size.turns * (text.length + toolCalls.reduce((n, c) => n + c.fragments.length, 0)) + 1
}

/** The final answer of the TOOLS conversation. */
export const FINAL_TEXT = 'done'

// Deterministic ids of the providers' shapes.
const alnum = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
const idOf = (seed, length) => {
  let s = ''
  let x = (seed * 2654435761) >>> 0
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) >>> 0
    s += alnum[x % alnum.length]
  }
  return s
}

/** The Anthropic id of call `k` of `turn`; the OpenAI one. The echo tool returns nothing of them. */
export const anthropicToolId = (turn, k) => `toolu_01${idOf(turn * 16 + k + 1, 22)}`
export const openaiToolId = (turn, k) => `call_${idOf(turn * 16 + k + 7, 24)}`

/** Cuts SSE event strings into writes of EVENTS_PER_WRITE events, as Buffers. */
function writes(events) {
  const out = []
  for (let i = 0; i < events.length; i += EVENTS_PER_WRITE) out.push(Buffer.from(events.slice(i, i + EVENTS_PER_WRITE).join('')))
  return out
}

// --- Anthropic ------------------------------------------------------------------------------------

const anthropicEvent = (data) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`

const anthropicUsage = (output) => ({ input_tokens: 412, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: output })

/** One Anthropic Messages response: text deltas, then tool calls (id, name, fragments), then the stop reason. */
function anthropicResponse(seed, text, calls) {
  const events = [
    anthropicEvent({
      type: 'message_start',
      message: {
        model: 'claude-sonnet-4-5-20250929',
        id: `msg_01${idOf(seed + 1000, 22)}`,
        type: 'message',
        role: 'assistant',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...anthropicUsage(1), cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 }, service_tier: 'standard' },
      },
    }),
    anthropicEvent({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    anthropicEvent({ type: 'ping' }),
  ]
  for (const d of text) events.push(anthropicEvent({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: d } }))
  events.push(anthropicEvent({ type: 'content_block_stop', index: 0 }))
  calls.forEach((c, i) => {
    const index = i + 1
    events.push(anthropicEvent({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: c.id, name: c.name, input: {} } }))
    events.push(anthropicEvent({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: '' } }))
    events.push(anthropicEvent({ type: 'ping' }))
    for (const f of c.fragments) events.push(anthropicEvent({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: f } }))
    events.push(anthropicEvent({ type: 'content_block_stop', index }))
  })
  const stop = calls.length === 0 ? 'end_turn' : 'tool_use'
  events.push(anthropicEvent({ type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: anthropicUsage(text.length + calls.length * 12) }))
  events.push(anthropicEvent({ type: 'message_stop' }))
  return writes(events)
}

// --- OpenAI Chat Completions ----------------------------------------------------------------------

/** One OpenAI Chat Completions response; `includeUsage` adds the usage chunk. */
function openaiResponse(seed, text, calls, includeUsage) {
  const id = `chatcmpl-${idOf(seed + 2000, 29)}`
  let n = 0
  const chunk = (delta, finish) =>
    `data: ${JSON.stringify({
      id,
      object: 'chat.completion.chunk',
      created: 1770933892,
      model: 'gpt-4.1-nano-2025-04-14',
      service_tier: 'default',
      system_fingerprint: 'fp_de604bd877',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      usage: null,
      obfuscation: idOf(seed * 31 + n++, 1 + (n % 9)),
    })}\n\n`
  const events = [chunk({ role: 'assistant', content: '', refusal: null }, null)]
  for (const d of text) events.push(chunk({ content: d }, null))
  calls.forEach((c, index) => {
    events.push(chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] }, null))
    for (const f of c.fragments) events.push(chunk({ tool_calls: [{ index, function: { arguments: f } }] }, null))
  })
  events.push(chunk({}, calls.length === 0 ? 'stop' : 'tool_calls'))
  if (includeUsage) {
    const completion = text.length + calls.length * 12
    const usage = {
      prompt_tokens: 412,
      completion_tokens: completion,
      total_tokens: 412 + completion,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    }
    events.push(
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1770933892, model: 'gpt-4.1-nano-2025-04-14', service_tier: 'default', system_fingerprint: 'fp_de604bd877', choices: [], usage, obfuscation: 'h9RiQLL' })}\n\n`,
    )
  }
  events.push('data: [DONE]\n\n')
  return writes(events)
}

// --- the scenarios --------------------------------------------------------------------------------

/**
 * All responses of one scenario, built once: `text` is the answer of the TEXT scenario, `turns[k]`
 * the answer to the k-th request of the TOOLS conversation (turns.length - 1 tool turns, then the
 * final text). For OpenAI both variants (with and without the usage chunk) are kept.
 */
export function responses(api, scenario, size) {
  const build = (seed, text, calls, includeUsage) => (api === 'anthropic' ? anthropicResponse(seed, text, calls) : openaiResponse(seed, text, calls, includeUsage))
  const both = (seed, text, calls) => ({ usage: build(seed, text, calls, true), plain: build(seed, text, calls, false) })
  if (scenario === 'text') return [both(0, textDeltas(size.textDeltas), [])]
  const out = []
  for (let turn = 0; turn < size.turns; turn++) {
    const { text, toolCalls } = toolTurn(turn)
    const calls = toolCalls.map((c, k) => ({ ...c, id: api === 'anthropic' ? anthropicToolId(turn, k) : openaiToolId(turn, k) }))
    out.push(both(turn + 1, text, calls))
  }
  out.push(both(size.turns + 1, [FINAL_TEXT], []))
  return out
}
