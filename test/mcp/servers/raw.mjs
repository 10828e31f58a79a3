// A hand-written stdio MCP server (2025 protocol, no SDK) whose one tool,
// `quick`, writes a progress notification and the result in ONE write: the
// client reads both at once, which is where the SDK's client drops progress
// that arrives with the response (see deferResponses in src/mcp/connection.ts).
// Its other tool, `remote`, has a schema Ajv cannot compile (a `$ref` to a
// remote document) and validates its arguments itself, as servers must.
import { createInterface } from 'node:readline'

const send = (...messages) => process.stdout.write(messages.map((m) => `${JSON.stringify(m)}\n`).join(''))
createInterface({ input: process.stdin }).on('line', (line) => {
  const message = JSON.parse(line)
  if (message.id === undefined) return
  const reply = (result) => ({ jsonrpc: '2.0', id: message.id, result })
  switch (message.method) {
    case 'initialize':
      return send(reply({ protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'raw', version: '1' } }))
    case 'tools/list':
      return send(reply({ tools: [{ name: 'quick', description: 'Progress and result in one write', inputSchema: { type: 'object', properties: {} } }, remote] }))
    case 'tools/call': {
      if (message.params.name === 'remote') return send(reply(callRemote(message.params.arguments ?? {})))
      const token = message.params._meta?.progressToken
      const progress = { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: 1, message: 'almost' } }
      return send(...(token === undefined ? [] : [progress]), reply({ content: [{ type: 'text', text: 'done' }] }))
    }
    default:
      return send({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: `no ${message.method}` } })
  }
})

const remote = {
  name: 'remote',
  description: 'A point whose schema lives elsewhere',
  inputSchema: {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: { point: { $ref: 'https://schemas.example.com/point.json' } },
    required: ['point'],
  },
}

function callRemote(args) {
  const { point } = args
  if (typeof point?.x !== 'number' || typeof point?.y !== 'number') return { isError: true, content: [{ type: 'text', text: 'point must have numbers x and y' }] }
  return { content: [{ type: 'text', text: `at ${point.x},${point.y}` }] }
}
