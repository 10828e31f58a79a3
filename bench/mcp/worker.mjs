// MCP: what calling a tool over MCP costs, against the same tool in process.
//   node --expose-gc bench/mcp/worker.mjs <calls> [runs] [smoke]
// One process: connects (connectMcp) to bench/mcp/server.mjs, a local stdio server with one
// `echo` tool, and runs `calls` sequential calls through runTool (as the loop runs a tool),
// then the same number of calls of an in-process async `echo`. Each call's result is checked.
// Prints one JSON line: per call, wall ms and this process's CPU ms (the server's CPU is its own).
import { fileURLToPath } from 'node:url'
import { dirname, join, resolve } from 'node:path'
import { asyncScheduler, lastValueFrom } from 'rxjs'
import * as t from 'io-ts'
import { spread } from '../stats.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const root = resolve(here, '..', '..')
const { defineTool, runTool } = await import(join(root, 'dist', 'src', 'index.js'))
const { connectMcp } = await import(join(root, 'dist', 'src', 'mcp', 'index.js'))

const [callsArg, runsArg, ...flags] = process.argv.slice(2)
const calls = Number(callsArg)
const runs = Number(runsArg ?? 3)
const smoke = flags.includes('smoke')

const mcp = await connectMcp({ servers: { bench: { command: process.execPath, args: [join(here, 'server.mjs')], stderr: 'inherit' } } })
const remote = mcp.tools.find((tool) => tool.name === 'bench__echo')
const local = defineTool({ name: 'echo', description: 'Echoes its text', parameters: t.type({ text: t.string }), execute: async ({ text }) => text })

async function callAll(tool) {
  for (let i = 0; i < calls; i++) {
    const text = `call ${i}`
    const args = tool.decodeArguments({ text })
    if (args._tag !== 'Right') throw new Error(`${tool.name}: arguments refused: ${args.left.join('; ')}`)
    const end = await lastValueFrom(runTool(tool, args.right, { toolCallId: `c${i}`, scheduler: asyncScheduler }))
    const got = end.output.content[0]
    if (end.type !== 'end' || end.isError || got?.type !== 'text' || got.text !== text) throw new Error(`${tool.name}: wrong result ${JSON.stringify(end)}`)
  }
}

async function timed(tool) {
  globalThis.gc?.()
  const c0 = process.cpuUsage()
  const t0 = performance.now()
  await callAll(tool)
  const ms = performance.now() - t0
  const cpu = process.cpuUsage(c0)
  return { msPerCall: ms / calls, cpuMsPerCall: (cpu.user + cpu.system) / 1000 / calls }
}

try {
  // Warm-up: both paths once (JIT, the server's first calls).
  await timed(remote)
  await timed(local)
  const samples = { mcp: [], inproc: [] }
  for (let i = 0; i < (smoke ? 1 : runs); i++) {
    samples.mcp.push(await timed(remote))
    samples.inproc.push(await timed(local))
  }
  const summary = {}
  for (const [who, xs] of Object.entries(samples)) {
    for (const key of ['msPerCall', 'cpuMsPerCall']) summary[`${who}.${key}`] = spread(xs.map((x) => x[key]))
  }
  console.log(JSON.stringify({ calls, runs, summary }))
} finally {
  await mcp.close()
}
