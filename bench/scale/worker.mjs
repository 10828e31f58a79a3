// One SCALE worker process: `startWorker` on the scripted agent, driven by the parent over stdin:
//   node bench/scale/worker.mjs <url> <workerId> <concurrency> [pollingIntervalMs]
// Prints `{"ready":true}` once it takes runs; `mark` starts its CPU window; `stop` prints the CPU
// time since the mark (user + system, all threads) and the runs it executed, stops and exits.
import { createInterface } from 'node:readline'
import { startWorker } from '../../dist/src/dbos/index.js'
import { definition } from './agent.mjs'

const [url, workerId, concurrency, polling] = process.argv.slice(2)
let executed = 0
const counted = { name: definition.name, options: (sessionId) => (executed++, definition.options(sessionId)) }
const worker = await startWorker({ pg: url, agents: [counted], concurrency: Number(concurrency), workerId, ...(polling ? { pollingIntervalMs: Number(polling) } : {}) })
const say = (x) => process.stdout.write(`${JSON.stringify(x)}\n`)
say({ ready: true })
let mark = process.cpuUsage()
let executedAtMark = 0
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'mark') {
    mark = process.cpuUsage()
    executedAtMark = executed
    say({ marked: true })
  } else if (line === 'stop') {
    const cpu = process.cpuUsage(mark)
    const runs = executed - executedAtMark
    await worker.stop({ drain: true, timeoutMs: 5000 })
    say({ cpuMs: (cpu.user + cpu.system) / 1000, runs })
    process.exit(0)
  }
}
