// WIRE client: the floor — `fetch` + `eventsource-parser` + `JSON.parse`, nothing else. It keeps the
// text, accumulates each tool call's argument JSON and parses it when the call ends, answers each call
// with its `value` (the echo tool) and sends the next request, until the model stops calling tools.
import { createParser } from 'eventsource-parser'

const echoTool = { name: 'echo', description: 'Echoes its value.', schema: { type: 'object', properties: { value: { type: 'string' }, n: { type: 'number' }, tags: { type: 'array', items: { type: 'string' } } }, required: ['value', 'n', 'tags'] } }

/** Streams one response; `onEvent` gets each event's parsed JSON (and its `event:` name). */
async function post(url, headers, body, onEvent) {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers }, body: JSON.stringify(body) })
  if (!response.ok) throw new Error(`floor: HTTP ${response.status}: ${await response.text()}`)
  const parser = createParser({ onEvent: (e) => (e.data === '[DONE]' ? undefined : onEvent(JSON.parse(e.data), e.event)) })
  const decoder = new TextDecoder()
  for await (const bytes of response.body) parser.feed(decoder.decode(bytes, { stream: true }))
  parser.feed(decoder.decode())
}

/** One Anthropic turn: the text and the calls ({id, name, input}), and the stop reason. */
async function anthropicTurn(base, messages, tools) {
  const turn = { text: '', calls: [], stop: undefined }
  let json = ''
  let call
  await post(`${base}/v1/messages`, { 'x-api-key': 'bench', 'anthropic-version': '2023-06-01' }, { model: 'claude-sonnet-4-5', max_tokens: 8192, stream: true, system: 'You are a benchmark.', messages, ...(tools ? { tools: [{ name: echoTool.name, description: echoTool.description, input_schema: echoTool.schema }] } : {}) }, (e) => {
    switch (e.type) {
      case 'content_block_start':
        if (e.content_block.type === 'tool_use') {
          call = { id: e.content_block.id, name: e.content_block.name, input: undefined }
          json = ''
        }
        break
      case 'content_block_delta':
        if (e.delta.type === 'text_delta') turn.text += e.delta.text
        else if (e.delta.type === 'input_json_delta') json += e.delta.partial_json
        break
      case 'content_block_stop':
        if (call !== undefined) {
          call.input = JSON.parse(json)
          turn.calls.push(call)
          call = undefined
        }
        break
      case 'message_delta':
        turn.stop = e.delta.stop_reason
        break
      case 'error':
        throw new Error(`floor: ${e.error.message}`)
    }
  })
  return turn
}

/** One OpenAI Chat Completions turn. */
async function openaiTurn(base, messages, tools) {
  const turn = { text: '', calls: [], stop: undefined }
  const pending = []
  await post(`${base}/v1/chat/completions`, { authorization: 'Bearer bench' }, { model: 'gpt-4.1-nano', stream: true, stream_options: { include_usage: true }, messages, ...(tools ? { tools: [{ type: 'function', function: { name: echoTool.name, description: echoTool.description, parameters: echoTool.schema } }] } : {}) }, (e) => {
    const choice = e.choices[0]
    if (choice === undefined) return
    const delta = choice.delta
    if (typeof delta.content === 'string') turn.text += delta.content
    if (delta.tool_calls !== undefined)
      for (const c of delta.tool_calls) {
        if (c.id !== undefined) pending[c.index] = { id: c.id, name: c.function.name, json: '' }
        if (c.function?.arguments) pending[c.index].json += c.function.arguments
      }
    if (choice.finish_reason !== null) turn.stop = choice.finish_reason
  })
  for (const c of pending) turn.calls.push({ id: c.id, name: c.name, input: JSON.parse(c.json) })
  return turn
}

/** `base`: the server's origin. */
export function setup({ api, scenario, base }) {
  const tools = scenario === 'tools'
  return async () => {
    const messages = api === 'anthropic' ? [{ role: 'user', content: 'go' }] : [{ role: 'system', content: 'You are a benchmark.' }, { role: 'user', content: 'go' }]
    let text = ''
    let toolResults = 0
    for (;;) {
      const turn = await (api === 'anthropic' ? anthropicTurn : openaiTurn)(base, messages, tools)
      text += turn.text
      if (turn.calls.length === 0) break
      if (api === 'anthropic') {
        messages.push({ role: 'assistant', content: [...(turn.text === '' ? [] : [{ type: 'text', text: turn.text }]), ...turn.calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.input }))] })
        messages.push({ role: 'user', content: turn.calls.map((c) => ({ type: 'tool_result', tool_use_id: c.id, content: [{ type: 'text', text: c.input.value }] })) })
      } else {
        messages.push({ role: 'assistant', content: turn.text, tool_calls: turn.calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.input) } })) })
        for (const c of turn.calls) messages.push({ role: 'tool', tool_call_id: c.id, content: c.input.value })
      }
      toolResults += turn.calls.length
    }
    return { textLength: text.length, toolResults }
  }
}
