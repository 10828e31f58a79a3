// WIRE: the local model server, run as a child process of the worker (so that the client's CPU is
// measured alone):
//   node bench/wire/server.mjs <anthropic|openai> <text|tools> <full|smoke>
// Listens on 127.0.0.1 (a free port), prints `{"port":N}` on stdout, and exits when its stdin closes
// (the worker holds the other end: the server dies with it, whichever way it ends).
//
// POST /v1/messages (Anthropic) or /v1/chat/completions (OpenAI) answers with the scenario's
// pre-built SSE bytes (streams.mjs). The TOOLS scenario decides the turn from the request: the number
// of assistant messages in it. The request is checked too: it must carry one tool result per call
// answered so far, the last ones echoing their calls' `value` — else HTTP 400, and the client fails.
import { createServer } from 'node:http'
import { CALLS_PER_TURN, responses, sizes } from './streams.mjs'

const [api, scenario, sizeName] = process.argv.slice(2)
if (!['anthropic', 'openai'].includes(api) || !['text', 'tools'].includes(scenario) || !['full', 'smoke'].includes(sizeName)) {
  console.error('usage: server.mjs <anthropic|openai> <text|tools> <full|smoke>')
  process.exit(2)
}
const bodies = responses(api, scenario, sizes[sizeName])
const path = api === 'anthropic' ? '/v1/messages' : '/v1/chat/completions'

/** How many assistant messages and tool results a request carries, and the text of the last results. */
function transcript(request) {
  const messages = Array.isArray(request.messages) ? request.messages : []
  let assistants = 0
  let results = 0
  let last = []
  for (const m of messages) {
    if (m.role === 'assistant') {
      assistants++
      last = []
    } else if (api === 'openai' && m.role === 'tool') {
      results++
      last.push(JSON.stringify(m.content))
    } else if (api === 'anthropic' && m.role === 'user' && Array.isArray(m.content)) {
      for (const b of m.content)
        if (b.type === 'tool_result') {
          results++
          last.push(JSON.stringify(b.content))
        }
    }
  }
  return { assistants, results, last }
}

const fail = (res, status, message) => {
  const body = api === 'anthropic' ? { type: 'error', error: { type: 'invalid_request_error', message } } : { error: { message, type: 'invalid_request_error', param: null, code: null } }
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify(body))
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

async function stream(res, chunks) {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    ...(api === 'anthropic' ? { 'request-id': 'req_bench', 'anthropic-organization-id': 'bench' } : { 'x-request-id': 'req_bench', 'openai-processing-ms': '1' }),
  })
  for (const chunk of chunks) {
    if (res.destroyed) return
    if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve))
    // Each write its own turn of the event loop, so that writes leave as separate segments.
    await nextTurn()
  }
  res.end()
}

const server = createServer((req, res) => {
  if (req.method !== 'POST' || req.url.split('?')[0] !== path) return fail(res, 404, `no route ${req.method} ${req.url}`)
  const parts = []
  req.on('data', (d) => parts.push(d))
  req.on('end', () => {
    let request
    try {
      request = JSON.parse(Buffer.concat(parts).toString('utf8'))
    } catch {
      return fail(res, 400, 'the body is not JSON')
    }
    if (request.stream !== true) return fail(res, 400, 'stream must be true')
    let turn = 0
    if (scenario === 'tools') {
      const { assistants, results, last } = transcript(request)
      turn = assistants
      if (turn >= bodies.length) return fail(res, 400, `turn ${turn}: the conversation has only ${bodies.length} answers`)
      if (results !== turn * CALLS_PER_TURN) return fail(res, 400, `turn ${turn}: ${results} tool results, expected ${turn * CALLS_PER_TURN}`)
      for (let k = 0; turn > 0 && k < CALLS_PER_TURN; k++)
        if (!last.some((text) => text.includes(`turn ${turn - 1} call ${k}`))) return fail(res, 400, `turn ${turn}: no echo of call ${k} of turn ${turn - 1}`)
    }
    const includeUsage = api === 'openai' && request.stream_options?.include_usage === true
    void stream(res, includeUsage ? bodies[turn].usage : bodies[turn].plain)
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`)
})
process.stdin.on('end', () => process.exit(0))
process.stdin.on('close', () => process.exit(0))
process.stdin.resume()
