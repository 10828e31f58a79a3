// The benchmark suite: every runtime × scenario in fresh processes, interleaved, three tables.
//   npm run bench            (the whole suite; writes bench/results/latest.json and the README tables)
//   node bench/run.mjs --smoke   (every scenario at a tiny size, one round; no files written)
//   node bench/run.mjs --only=text,agent-text,cold,wire   (those scenarios at full size; no files written)
//   node bench/run.mjs --only=mcp   (the MCP row alone: a tool call over a local stdio MCP server)
//   node bench/run.mjs --only=scale (the SCALE rows alone: rxagent/dbos on 1, 2, 4 worker processes; about a minute)
//
// For each scenario × size, R rounds; a round runs every runtime once, each in a fresh process, in
// rotating order (round 2 starts with the second runtime, …), so that every ratio comes from one
// window of time on a noisy machine. A runtime's figure is the median over the rounds of each
// process's own median; min–max are the rounds' medians.
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { arch, cpus, platform, release, tmpdir, totalmem } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { scenarios } from './inputs.mjs'
import { startCluster } from './postgres.mjs'
import { label, report } from './report.mjs'
import { median, spread } from './stats.mjs'

const began = performance.now()
const here = dirname(fileURLToPath(import.meta.url))
const root = resolve(here, '..')
const smoke = process.argv.includes('--smoke')
const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',')
// `--only=durable` asks for every `durable-…` scenario (and `--only=agent` for every `agent-…` one).
const wanted = (name) => only === undefined || only.some((o) => name === o || name.startsWith(`${o}-`))
const peersInstalled = existsSync(join(here, 'node_modules', 'ai')) && existsSync(join(here, 'node_modules', '@mariozechner', 'pi-agent-core'))
const peers = peersInstalled ? ['pi', 'aisdk'] : []
const runtimes = ['rxagent', ...peers, 'bare', 'rx-floor']
const elapsed = () => `${((performance.now() - began) / 1000).toFixed(0)} s`

/** Runs one process; its last stdout line is its JSON result. */
function spawnJson(script, args, what) {
  const started = performance.now()
  const out = spawnSync(process.execPath, ['--expose-gc', join(here, script), ...args], { cwd: here, encoding: 'utf8', maxBuffer: 1 << 24 })
  if (out.status !== 0) throw new Error(`${what} failed:\n${out.stderr}`)
  // RXAGENT_BENCH_TRACE=1: each process's wall time, to see where the suite's minutes go.
  if (process.env.RXAGENT_BENCH_TRACE === '1') process.stderr.write(`  ${what} ${args.join(' ')}: ${((performance.now() - started) / 1000).toFixed(2)} s\n`)
  return JSON.parse(out.stdout.trim().split('\n').at(-1))
}

/** Per metric: the median over the rounds of each process's median, with the rounds' min and max. */
function combine(summaries) {
  const keys = new Set(summaries.flatMap((s) => Object.keys(s)))
  return Object.fromEntries(
    [...keys].map((key) => {
      const xs = summaries.map((s) => s[key]?.median).filter((x) => typeof x === 'number')
      return [key, { ...spread(xs), rounds: xs.length }]
    }),
  )
}

/**
 * A run this long (median, in its first-round process) is sampled in that one process only: its
 * own noise is small beside its length, and three rounds of it would cost a minute of the suite.
 * In practice only peers reach it (the AI SDK's WIRE TEXT runs, about 2 s; its TOOLS runs, about
 * 1.2 s); the rule is the same for every runtime.
 */
const SLOW_RUN_MS = 1000

/**
 * `rounds` rounds over `who`, each round in rotating order; `run(name)` returns one process's
 * summary (or undefined when skipped). `once` (slow peers at large sizes) run in the first round
 * only, and so does any entry whose first process's median run took SLOW_RUN_MS or more
 * (`runMs(summary)` reads it).
 */
function interleave(who, rounds, run, once = [], runMs = () => 0) {
  const got = Object.fromEntries(who.map((w) => [w, []]))
  const slow = new Set(once)
  for (let round = 0; round < rounds; round++) {
    const these = round === 0 ? who : who.filter((w) => !slow.has(w))
    for (let i = 0; i < these.length; i++) {
      const name = these[(round + i) % these.length]
      const summary = run(name)
      if (summary !== undefined) got[name].push(summary)
      if (round === 0 && summary !== undefined && runMs(summary) >= SLOW_RUN_MS) slow.add(name)
    }
  }
  return got
}

const sizesOf = (scenario) => (smoke ? scenarios[scenario].smoke : scenarios[scenario].sizes)
const results = {}
// Why some runs were skipped (a worker says why), printed under the tables.
const skippedNotes = new Set()

// DURABLE rows on PostgreSQL: one throwaway cluster for the whole run; each worker makes its own database in it.
let cluster
let pgliteTemplate
if (Object.keys(scenarios).some((s) => s.startsWith('durable-') && wanted(s))) {
  const started = performance.now()
  cluster = await startCluster()
  if (cluster.url !== undefined) process.env.RXAGENT_BENCH_POSTGRES_URL = cluster.url
  process.stderr.write(`postgres     ${cluster.url === undefined ? `skipped: ${cluster.skipped}` : `cluster up in ${((performance.now() - started) / 1000).toFixed(1)} s`}\n`)
  // The PGlite rows' data directory, made once and copied by each worker (bench/pglite-template.mjs says why).
  {
    const made = performance.now()
    pgliteTemplate = mkdtempSync(join(tmpdir(), 'rxagent-bench-pglite-template-'))
    const out = spawnSync(process.execPath, [join(here, 'pglite-template.mjs'), pgliteTemplate], { encoding: 'utf8' })
    if (out.status === 0) process.env.RXAGENT_BENCH_PGLITE_TEMPLATE = pgliteTemplate
    process.stderr.write(`pglite       ${out.status === 0 ? `template made in ${((performance.now() - made) / 1000).toFixed(1)} s` : `no template (each worker makes its own): ${out.stderr.trim().split('\n').at(-1)}`}\n`)
  }
}
for (const [scenario, spec] of Object.entries(scenarios)) {
  if (spec.sizes === undefined || !wanted(scenario)) continue
  for (const size of sizesOf(scenario)) {
    // `runtime@scenario`: another scenario run in the same rounds (the Agent rows' agentLoop + reader), so that their ratio comes from one run.
    const who = [
      ...spec.runtimes.filter((r) => runtimes.includes(r)),
      ...(spec.with ?? []).map((other) => `rxagent@${other}`),
    ]
    const rounds = smoke ? 1 : (spec.rounds ?? 3)
    // Slow peers at large sizes (seconds per run): one round, one timed run after the warm-up.
    const slow = smoke || size < (spec.peersSlowFrom ?? Infinity) ? [] : who.filter((r) => peers.includes(r))
    const runsOf = (runtime) => (smoke || slow.includes(runtime) ? 1 : (spec.runs ?? 3))
    // The memory run (heap retained and peak) only where a row shows it.
    const memory = smoke || (spec.memoryAt ?? []).includes(size)
    const started = performance.now()
    const got = interleave(
      who,
      rounds,
      (entry) => {
        const [runtime, which = scenario] = entry.split('@')
        // A slow peer's one timed run gives its heap too (worker.mjs, `heapintimed`): a second run of it took 5–16 s.
        const heapFlag = memory ? (slow.includes(entry) && !smoke ? ['heapintimed'] : []) : ['nomemory']
        const args = [runtime, which, String(size), String(runsOf(entry)), ...(smoke ? ['smoke'] : []), ...heapFlag]
        const result = spawnJson('worker.mjs', args, `${runtime}/${which}/${size}`)
        if (result.skipped && result.reason !== 'no such scenario') skippedNotes.add(`${which}: ${result.reason}`)
        return result.skipped ? undefined : result.summary
      },
      slow,
      (summary) => summary.ms?.median ?? 0,
    )
    for (const [entry, summaries] of Object.entries(got)) {
      const [runtime, which = scenario] = entry.split('@')
      if (summaries.length > 0) ((results[which] ??= {})[size] ??= {})[runtime] = combine(summaries)
    }
    process.stderr.write(`${scenario.padEnd(13)} ${String(size).padStart(7)} ${who.length} runtimes × ${rounds} rounds ${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s   (${elapsed()})\n`)
  }
}

cluster?.stop?.()
if (pgliteTemplate !== undefined) rmSync(pgliteTemplate, { recursive: true, force: true })

// --- SCALE: rxagent/dbos workers (1, 2, 4 processes) on a fresh PostgreSQL cluster, and DBOS's per-step overhead (bench/scale/). ---

const scale = {}
if (!wanted('scale')) scale.skipped = 'not asked for (--only).'
else {
  const started = performance.now()
  const loaded = await import('./scale/index.mjs').catch((error) => error)
  const dbos = await import('@dbos-inc/dbos-sdk').then(() => undefined, (error) => error)
  if (loaded instanceof Error) scale.skipped = `bench/scale/ cannot be loaded: ${loaded.code ?? loaded.message.split('\n')[0]}`
  else if (dbos !== undefined) scale.skipped = `no @dbos-inc/dbos-sdk (${dbos.code ?? dbos.message.split('\n')[0]}): npm ci`
  else if (!existsSync(join(root, 'dist', 'src', 'dbos', 'index.js'))) scale.skipped = 'no dist/src/dbos in this build: npm run build'
  else {
    // Every worker process holds a few pools (DBOS's, the store's, its own): more connections than the default 100.
    const scaleCluster = await startCluster({ settings: { max_connections: 300 } })
    if (scaleCluster.url === undefined) scale.skipped = scaleCluster.skipped
    else {
      try {
        const { postmasterPid } = await import('./scale/cpu.mjs')
        results.scale = await loaded.runScale({ url: scaleCluster.url, smoke, postmasterPid: postmasterPid(scaleCluster.dataDir), log: (line) => process.stderr.write(`${line}\n`) })
      } finally {
        scaleCluster.stop()
      }
      process.stderr.write(`scale    ${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s   (${elapsed()})\n`)
    }
  }
  if (scale.skipped !== undefined) process.stderr.write(`scale    skipped: ${scale.skipped}\n`)
}

// --- WIRE: real SSE bodies over local HTTP (bench/wire/, helper worker with its own server). ---

const wireWorker = join(here, 'wire', 'worker.mjs')
const wire = { toolTurns: 50 }
if (!existsSync(wireWorker)) wire.skipped = 'bench/wire/worker.mjs does not exist in this checkout.'
else if (!wanted('wire')) wire.skipped = 'not asked for (--only).'
else {
  results.wire = {}
  const clients = ['rxagent', ...(peersInstalled ? ['pi', 'aisdk'] : []), 'floor']
  const reasons = new Set()
  for (const api of ['anthropic', 'openai']) {
    for (const scenario of ['text', 'tools']) {
      const started = performance.now()
      const rounds = smoke ? 1 : 3
      const deltas = {}
      const got = interleave(clients, rounds, (client) => {
        const result = spawnJson(join('wire', 'worker.mjs'), [client, api, scenario, String(smoke ? 1 : 3), ...(smoke ? ['smoke'] : [])], `wire ${client}/${api}/${scenario}`)
        if (result.skipped) {
          reasons.add(`${client} ${api} ${scenario}: ${result.reason}`)
          return undefined
        }
        deltas[client] = result.deltas
        return result.summary
      }, [], (summary) => summary.wallMsPerRun.median)
      for (const [client, summaries] of Object.entries(got)) {
        if (summaries.length > 0) ((results.wire[api] ??= {})[scenario] ??= {})[client] = { ...combine(summaries), deltas: deltas[client] }
      }
      process.stderr.write(`wire ${api.padEnd(9)} ${scenario.padEnd(5)} ${clients.length} clients × ${rounds} rounds ${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s   (${elapsed()})\n`)
    }
  }
  if (reasons.size > 0) wire.notes = [...reasons]
}

// --- MCP: a tool call over a local stdio MCP server vs the same tool in process (bench/mcp/). ---

const mcp = { calls: smoke ? 5 : 200 }
if (!wanted('mcp')) mcp.skipped = 'not asked for (--only).'
else {
  const started = performance.now()
  const rounds = smoke ? 1 : 3
  const summaries = Array.from({ length: rounds }, () =>
    spawnJson(join('mcp', 'worker.mjs'), [String(mcp.calls), String(smoke ? 1 : 5), ...(smoke ? ['smoke'] : [])], 'mcp').summary,
  )
  results.mcp = combine(summaries)
  process.stderr.write(`mcp      ${mcp.calls} calls × ${rounds} processes ${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s   (${elapsed()})\n`)
}

// --- COLD: import time in a fresh process, and the runtime dependency closure. ---

const importTargets = {
  rxagent: { spec: join(root, 'dist', 'src', 'index.js'), pkg: root },
  ...(peersInstalled
    ? {
        pi: { spec: '@mariozechner/pi-agent-core', pkg: join(here, 'node_modules', '@mariozechner', 'pi-agent-core') },
        aisdk: { spec: 'ai', pkg: join(here, 'node_modules', 'ai') },
      }
    : {}),
}

function importMs(spec) {
  const code = `const t = performance.now(); await import(${JSON.stringify(spec.startsWith('/') ? `file://${spec}` : spec)}); process.stdout.write(String(performance.now() - t))`
  return Number(execFileSync(process.execPath, ['--input-type=module', '-e', code], { cwd: here, encoding: 'utf8' }))
}

/** Resolves `name` from `from` the way Node does: nearest node_modules upwards. */
function resolvePackage(name, from) {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name)
    if (existsSync(join(candidate, 'package.json'))) return candidate
    if (dirname(dir) === dir) return undefined
  }
}

function dirSize(dir) {
  let total = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules') continue
    const path = join(dir, entry.name)
    total += entry.isDirectory() ? dirSize(path) : statSync(path).size
  }
  return total
}

/** The packages a package needs at run time (dependencies and peer dependencies, recursively), itself excluded. */
function closure(pkgDir) {
  const seen = new Map()
  const visit = (dir) => {
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
    const optionalPeers = new Set(Object.entries(pkg.peerDependenciesMeta ?? {}).filter(([, m]) => m.optional).map(([n]) => n))
    const names = [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {}).filter((n) => !optionalPeers.has(n))]
    for (const name of names) {
      const found = resolvePackage(name, dir)
      if (found === undefined || seen.has(found)) continue
      seen.set(found, name)
      visit(found)
    }
  }
  visit(pkgDir)
  const packages = [...seen.values()].sort()
  const bytes = [...seen.keys()].reduce((sum, dir) => sum + dirSize(dir), 0)
  return { packages, count: packages.length, bytes }
}

results.cold = {}
for (const [runtime, target] of Object.entries(wanted('cold') ? importTargets : {})) {
  importMs(target.spec) // warm the file cache
  const samples = Array.from({ length: smoke ? 1 : 7 }, () => importMs(target.spec))
  const deps = closure(target.pkg)
  results.cold[runtime] = { importMs: { ...spread(samples), rounds: samples.length }, deps }
  process.stderr.write(`cold     ${label[runtime].padEnd(22)} ${median(samples).toFixed(1)} ms, ${deps.count} packages\n`)
}

// --- The tables and the targets. ---

const { tables, targets } = report({ results, sizesOf, runtimes, wire, mcp, scale, smoke, scenarios, partial: only !== undefined })
const notes = [...(wire.notes?.map((n) => `WIRE skipped: ${n}`) ?? []), ...[...skippedNotes].map((n) => `skipped: ${n}`)]
const table = [...tables, ...notes].join('\n\n')
const targetLines = targets.map((t) => `- ${t.ok === null ? '➖' : t.ok ? '✅' : '❌'} ${t.name}: ${t.detail}`).join('\n')
console.log(`\n${table}\n`)
if (targets.length > 0) console.log(`${targetLines}\n`)

if (smoke) {
  console.log('smoke run: every scenario ran and produced the expected result.')
} else if (only !== undefined) {
  console.log(`partial run (--only=${only.join(',')}): no files written.`)
} else {
  const cpu = cpus()[0]
  const machine = {
    cpu: cpu?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    os: `${platform()} ${release()} ${arch()}`,
    node: process.version,
  }
  const command = 'npm run bench'
  const date = new Date().toISOString()
  mkdirSync(join(here, 'results'), { recursive: true })
  writeFileSync(join(here, 'results', 'latest.json'), `${JSON.stringify({ date, command, machine, seconds: (performance.now() - began) / 1000, results, targets, table }, null, 2)}\n`)
  const readmePath = join(root, 'README.md')
  const readme = readFileSync(readmePath, 'utf8')
  const block = [
    '<!-- bench:start -->',
    `Measured with \`${command}\` on ${date.slice(0, 10)} (${elapsed()}): ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, Node ${machine.node}. Each figure is the median over the rounds of each fresh process's median (first column: min–max of the rounds in brackets); \`a / b\` cells give wall time / CPU time (WIRE: CPU / wall); ratios are the first column ÷ the other column, so below 1× means faster.`,
    '',
    table,
    '',
    targetLines,
    '<!-- bench:end -->',
  ].join('\n')
  const updated = readme.replace(/<!-- bench:start -->[\s\S]*<!-- bench:end -->/, block)
  if (updated !== readme) writeFileSync(readmePath, updated)
  console.log('wrote bench/results/latest.json and the README tables')
}
console.log(`bench: ${elapsed()} elapsed`)
