// A hand-written stdio MCP server (2025 protocol, no SDK) whose one tool,
// `quick`, writes a progress notification and the result in ONE write: the
// client reads both at once, which is where the SDK's client drops progress
// that arrives with the response (see deferResponses in src/mcp/connection.ts).
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
      return send(reply({ tools: [{ name: 'quick', description: 'Progress and result in one write', inputSchema: { type: 'object', properties: {} } }] }))
    case 'tools/call': {
      const token = message.params._meta?.progressToken
      const progress = { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: 1, message: 'almost' } }
      return send(...(token === undefined ? [] : [progress]), reply({ content: [{ type: 'text', text: 'done' }] }))
    }
    default:
      return send({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: `no ${message.method}` } })
  }
})
