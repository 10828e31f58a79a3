// The benchmark suite: every runtime × scenario in a fresh process, one table.
//   npm run bench            (the whole suite; writes bench/results/latest.json and the README table)
//   node bench/run.mjs --smoke   (every scenario at a tiny size; no files written)
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync, mkdirSync } from 'node:fs'
import { cpus, totalmem, platform, arch, release } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { scenarios } from './inputs.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const root = resolve(here, '..')
const smoke = process.argv.includes('--smoke')
const peersInstalled = existsSync(join(here, 'node_modules', 'ai')) && existsSync(join(here, 'node_modules', '@mariozechner', 'pi-agent-core'))
const floors = ['bare', 'rx-floor']
const peers = peersInstalled ? ['pi', 'aisdk'] : []
const runtimes = ['rxagent', ...peers, ...floors]
const label = { rxagent: 'rxagent', pi: 'pi-agent-core', aisdk: 'AI SDK', bare: 'bare floor', 'rx-floor': 'RxJS floor' }

/** Runs one worker process; its last stdout line is its JSON result. */
function work(runtime, scenario, size, runs) {
  const args = ['--expose-gc', join(here, 'worker.mjs'), runtime, scenario, String(size), String(runs), ...(smoke ? ['smoke'] : [])]
  const out = spawnSync(process.execPath, args, { cwd: here, encoding: 'utf8', maxBuffer: 1 << 24 })
  if (out.status !== 0) throw new Error(`${runtime}/${scenario}/${size} failed:\n${out.stderr}`)
  const line = out.stdout.trim().split('\n').at(-1)
  return JSON.parse(line)
}

const results = {}
const runsFor = () => (smoke ? 1 : 5)
for (const [scenario, spec] of Object.entries(scenarios)) {
  for (const size of smoke ? spec.smoke : spec.sizes) {
    for (const runtime of runtimes) {
      if (peers.includes(runtime) && size > (spec.peersUpTo ?? Number.POSITIVE_INFINITY)) continue
      const started = performance.now()
      const result = work(runtime, scenario, size, runsFor(scenario))
      if (result.skipped) continue
      ;((results[scenario] ??= {})[size] ??= {})[runtime] = result.summary
      process.stderr.write(`${scenario.padEnd(8)} ${String(size).padStart(7)} ${label[runtime].padEnd(14)} ${((performance.now() - started) / 1000).toFixed(1)} s\n`)
    }
  }
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

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
results.cold = {}
for (const [runtime, target] of Object.entries(importTargets)) {
  importMs(target.spec) // warm the file cache
  const samples = Array.from({ length: smoke ? 1 : 7 }, () => importMs(target.spec))
  const deps = closure(target.pkg)
  results.cold[runtime] = { importMs: { median: median(samples), min: Math.min(...samples), max: Math.max(...samples) }, deps }
  process.stderr.write(`cold     ${label[runtime].padEnd(22)} ${median(samples).toFixed(1)} ms, ${deps.count} packages\n`)
}

// --- The table. ---

const get = (scenario, size, runtime, metric) => results[scenario]?.[size]?.[runtime]?.[metric]
const rows = []
const row = (name, unit, pick, digits = 2) => rows.push({ name, unit, values: Object.fromEntries(runtimes.map((r) => [r, pick(r)])), digits })
const sizesOf = (s) => (smoke ? scenarios[s].smoke : scenarios[s].sizes)
for (const n of sizesOf('text')) row(`TEXT ${n / 1000}k deltas`, 'µs/delta', (r) => get('text', n, r, 'perDeltaUs'))
const n100 = smoke ? sizesOf('text')[0] : 100_000
for (const n of sizesOf('textcount')) row(`TEXT ${n / 1000}k, runtime only`, 'µs/delta', (r) => get('textcount', n, r, 'perDeltaUs'))
// How much of the TEXT cost is garbage collection during the timed run, at the smallest and largest N.
for (const n of new Set([sizesOf('text')[0], sizesOf('text').at(-1)])) row(`TEXT ${n / 1000}k, of which GC`, 'µs/delta', (r) => get('text', n, r, 'gcPerDeltaUs'), 3)
row(`TEXT heap retained @${n100 / 1000}k`, 'MB', (r) => mb(get('text', n100, r, 'retainedBytes')))
row(`TEXT heap peak @${n100 / 1000}k`, 'MB', (r) => mb(get('text', n100, r, 'peakBytes')))
const turns = sizesOf('tools')[0]
row(`TOOLS ${turns} turns`, 'ms/turn', (r) => get('tools', turns, r, 'msPerTurn'), 3)
const history = sizesOf('long')[0]
row(`LONG ${history} msgs`, 'µs/delta', (r) => get('long', history, r, 'perDeltaUs'))
row(`LONG first delta`, 'ms', (r) => get('long', history, r, 'firstDeltaMs'), 3)
const fan = sizesOf('fanout')[0]
row(`FANOUT ${fan} runs`, 'ms total', (r) => get('fanout', fan, r, 'ms'), 0)
row(`FANOUT peak heap per run`, 'KB', (r) => kb(get('fanout', fan, r, 'peakBytes'), fan), 1)
row(`FANOUT left running`, 'handles', (r) => get('fanout', fan, r, 'leftoverResources'), 0)
const par = sizesOf('parallel')[0]
row(`PARALLEL ${par} × ${smoke ? scenarios.parallel.smokeToolMs : scenarios.parallel.toolMs} ms tools`, 'ms wall', (r) => get('parallel', par, r, 'ms'), 1)
row('COLD import', 'ms', (r) => results.cold[r]?.importMs, 1)
row('COLD dependency closure', 'packages', (r) => (results.cold[r] ? { median: results.cold[r].deps.count } : undefined), 0)
row('COLD installed size', 'MB', (r) => (results.cold[r] ? { median: results.cold[r].deps.bytes / 2 ** 20 } : undefined), 2)

function mb(v) {
  return v === undefined ? undefined : { median: v.median / 2 ** 20, min: v.min / 2 ** 20, max: v.max / 2 ** 20 }
}
function kb(v, runs) {
  return v === undefined ? undefined : { median: v.median / 1024 / runs, min: v.min / 1024 / runs, max: v.max / 1024 / runs }
}

const fmt = (v, digits) => (v === undefined || v.median === undefined || v.median === null ? '—' : v.median.toFixed(digits))
const range = (v, digits) => (v?.min === undefined ? '' : ` (${v.min.toFixed(digits)}–${v.max.toFixed(digits)})`)
const ratio = (a, b) => (a?.median === undefined || b?.median === undefined || b.median === 0 ? '—' : `${(a.median / b.median).toFixed(2)}×`)
const ratioCols = [...peers, ...floors].map((r) => ({ r, head: `rx/${r === 'pi' ? 'pi' : r === 'aisdk' ? 'ai' : r}` }))
const header = ['scenario', 'unit', ...runtimes.map((r) => label[r]), ...ratioCols.map((c) => c.head)]
const lines = [
  `| ${header.join(' | ')} |`,
  `| ${header.map((_, i) => (i < 2 ? '---' : '---:')).join(' | ')} |`,
  ...rows.map(
    (r) =>
      `| ${[
        r.name,
        r.unit,
        ...runtimes.map((rt) => fmt(r.values[rt], r.digits) + (rt === 'rxagent' ? range(r.values[rt], r.digits) : '')),
        ...ratioCols.map((c) => ratio(r.values.rxagent, r.values[c.r])),
      ].join(' | ')} |`,
  ),
]

// --- The targets (issue #3), checked on this run's numbers. ---

const v = (scenario, size, runtime, metric) => get(scenario, size, runtime, metric)?.median
const targets = []
const target = (name, ok, detail) => targets.push({ name, ok: ok === undefined ? null : ok, detail })
if (!smoke) {
  for (const n of scenarios.text.sizes) target(`TEXT ≤ 2 µs/delta at ${n / 1000}k`, v('text', n, 'rxagent', 'perDeltaUs') <= 2, `${v('text', n, 'rxagent', 'perDeltaUs')?.toFixed(2)} µs`)
  for (const p of peers) {
    const x = v('text', 100_000, p, 'perDeltaUs') / v('text', 100_000, 'rxagent', 'perDeltaUs')
    target(`TEXT ≥ 10× faster than ${label[p]} at 100k`, x >= 10, `${x.toFixed(1)}×`)
  }
  const flat = v('text', 200_000, 'rxagent', 'perDeltaUs') / v('text', 10_000, 'rxagent', 'perDeltaUs')
  target('TEXT cost at 200k ≤ 1.2× cost at 10k', flat <= 1.2, `${flat.toFixed(2)}×`)
  // The same with a consumer that does not keep the text: the growth above that is left is the
  // GC of the consumer's own string (the bare floor shows it too), not the runtime's.
  const flatOwn = v('textcount', 200_000, 'rxagent', 'perDeltaUs') / v('textcount', 10_000, 'rxagent', 'perDeltaUs')
  target("TEXT runtime-only cost at 200k ≤ 1.2× cost at 10k (consumer counts, keeps no text)", flatOwn <= 1.2, `${flatOwn.toFixed(2)}×`)
  const long = v('long', 5_000, 'rxagent', 'perDeltaUs') / v('text', 10_000, 'rxagent', 'perDeltaUs')
  target('LONG ≤ 1.2× TEXT at 10k', long <= 1.2, `${long.toFixed(2)}×`)
  const first = v('long', 5_000, 'rxagent', 'firstDeltaMs')
  target('LONG first delta < 1 ms', first < 1, `${first?.toFixed(3)} ms`)
  if (peers.includes('pi')) {
    const x = v('tools', 200, 'pi', 'msPerTurn') / v('tools', 200, 'rxagent', 'msPerTurn')
    target('TOOLS ≥ 5× faster than pi-agent-core', x >= 5, `${x.toFixed(1)}×`)
  }
  const tf = v('tools', 200, 'rxagent', 'msPerTurn') / v('tools', 200, 'bare', 'msPerTurn')
  target('TOOLS ≤ 3× the bare floor', tf <= 3, `${tf.toFixed(1)}×`)
  const heap = v('text', 100_000, 'rxagent', 'retainedBytes') / v('text', 100_000, 'bare', 'retainedBytes')
  target('TEXT heap growth at 100k ≤ 1.5× the bare floor', heap <= 1.5, `${heap.toFixed(2)}×`)
  const left = v('fanout', 1_000, 'rxagent', 'leftoverResources')
  const live = v('fanout', 1_000, 'rxagent', 'liveRuns')
  target('FANOUT nothing left running', left === 0 && live === 0, `${left} handles, ${live} live runs`)
  const par = v('parallel', 10, 'rxagent', 'ms')
  target('PARALLEL wall < 2× one tool (100 ms)', par < 2 * scenarios.parallel.toolMs, `${par?.toFixed(1)} ms`)
  if (peers.includes('pi')) {
    const ok = results.cold.rxagent.importMs.median < results.cold.pi.importMs.median
    target('COLD import faster than pi-agent-core', ok, `${results.cold.rxagent.importMs.median.toFixed(1)} vs ${results.cold.pi.importMs.median.toFixed(1)} ms`)
  }
  target('COLD dependency closure ≤ 6 packages', results.cold.rxagent.deps.count <= 6, results.cold.rxagent.deps.packages.join(', '))
}

const table = lines.join('\n')
const targetLines = targets.map((t) => `- ${t.ok ? '✅' : '❌'} ${t.name}: ${t.detail}`).join('\n')
console.log(`\n${table}\n`)
if (targets.length > 0) console.log(`${targetLines}\n`)

if (smoke) {
  console.log('smoke run: every scenario ran and produced the expected result.')
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
  writeFileSync(join(here, 'results', 'latest.json'), `${JSON.stringify({ date, command, machine, results, targets, table }, null, 2)}\n`)
  const readmePath = join(root, 'README.md')
  const readme = readFileSync(readmePath, 'utf8')
  const block = [
    '<!-- bench:start -->',
    `Measured with \`${command}\` on ${date.slice(0, 10)}: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, Node ${machine.node}. Median of the runs (rxagent: min–max in brackets); ratios are rxagent ÷ the column's runtime, so below 1× means faster.`,
    '',
    table,
    '',
    targetLines,
    '<!-- bench:end -->',
  ].join('\n')
  const updated = readme.replace(/<!-- bench:start -->[\s\S]*<!-- bench:end -->/, block)
  if (updated !== readme) writeFileSync(readmePath, updated)
  console.log('wrote bench/results/latest.json and the README table')
}
