import { agentLoop, modelSpec, userMessage } from './dist/src/index.js'
import { from } from 'rxjs'
const N = Number(process.argv[2] ?? 100000)
const chunks = [{ type: 'messageStart', id: 'm', model: 'x' }, ...Array.from({ length: N }, (_, i) => ({ type: 'textDelta', text: 'abcd' })), { type: 'stop', reason: 'endTurn' }]
const history = Array.from({ length: Number(process.argv[3] ?? 0) }, (_, i) => i % 2 ? { role: 'assistant', content: [{ type: 'text', text: 'x'.repeat(200) }], provider: 'p', model: 'm', usage: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0, total: 0, extra: {} }, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0, extra: {} }, stopReason: 'stop', timestamp: 0 } : userMessage('y'.repeat(200)))
for (let r = 0; r < 5; r++) {
  const t0 = performance.now()
  let n = 0
  agentLoop(userMessage('hi'), { systemPrompt: '', messages: history, tools: [] }, { model: modelSpec('a', 'b'), streamFn: () => from(chunks) }).subscribe((e) => { if (e.type === 'messageUpdate') n++ })
  const t = performance.now() - t0
  console.log(`N=${N} per delta ${(t * 1000 / N).toFixed(3)} µs`, n)
}
