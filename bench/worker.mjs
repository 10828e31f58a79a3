// One runtime, one scenario, one size, in a fresh process:
//   node --expose-gc bench/worker.mjs <runtime> <scenario> <size> [runs]
// Prints one JSON line: the samples and their medians.
import { PerformanceObserver } from 'node:perf_hooks'
import { history } from './inputs.mjs'
import { scenarios as defaults } from './inputs.mjs'

const [runtime, scenario, sizeArg, runsArg, smokeArg] = process.argv.slice(2)
const size = Number(sizeArg)
const runs = Number(runsArg ?? 5)
const smoke = smokeArg === 'smoke'
if (typeof globalThis.gc !== 'function') throw new Error('run with --expose-gc')
const gc = () => {
  globalThis.gc()
  globalThis.gc()
}

const adapter = await import(`./runtimes/${runtime}.mjs`)
// TEXTCOUNT is TEXT with a consumer that counts the deltas' characters instead of keeping the text.
const make = adapter.scenarios[scenario === 'textcount' ? 'text' : scenario]
if (make === undefined) {
  console.log(JSON.stringify({ runtime, scenario, size, skipped: true }))
  process.exit(0)
}

const params = {
  textcount: () => ({ keepText: false }),
  long: () => ({ history: history(size), deltas: smoke ? defaults.long.smokeDeltas : defaults.long.deltas }),
  fanout: () => ({ deltasPerRun: defaults.fanout.deltasPerRun }),
  parallel: () => ({ toolMs: smoke ? defaults.parallel.smokeToolMs : defaults.parallel.toolMs }),
}
const extra = params[scenario]?.() ?? {}
const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

/** What the run must have produced; a benchmark of a wrong result is worthless. */
function check(result) {
  const expectText = {
    text: size * 4,
    textcount: size * 4,
    long: (extra.deltas ?? 0) * 4,
  }[scenario]
  const length = result.textLength ?? result.text?.length
  if (expectText !== undefined && length !== expectText) throw new Error(`${runtime}/${scenario}: text of ${length} characters, expected ${expectText}`)
  if (scenario === 'tools' && result.toolResults !== size * 3) throw new Error(`${runtime}/tools: ${result.toolResults} tool results, expected ${size * 3}`)
  if (scenario === 'parallel' && result.toolResults !== size) throw new Error(`${runtime}/parallel: ${result.toolResults} tool results, expected ${size}`)
  if (scenario === 'fanout' && result.completed !== size) throw new Error(`${runtime}/fanout: ${result.completed} of ${size} runs completed`)
}

// Garbage collections, to tell how much of a run's time they took (entries arrive later, so
// each sample keeps its time window and the GC time in it is added up at the end).
const gcEntries = []
const keepEntries = (entries) => gcEntries.push(...entries.map((e) => [e.startTime, e.duration]))
const gcObserver = new PerformanceObserver((list) => keepEntries(list.getEntries()))
gcObserver.observe({ entryTypes: ['gc'] })
const gcMsIn = ([from, to]) => gcEntries.reduce((sum, [start, duration]) => (start >= from && start < to ? sum + duration : sum), 0)

/** How many text deltas a run streams, for the per-delta figures. */
const deltas = { text: size, textcount: size, long: extra.deltas }[scenario]

/** One timed run. Only scavenges before it (see below): a full GC can flush compiled code and would measure re-warming. */
async function timed() {
  const run = make(size, extra)
  // The inputs were just built and sit in the young generation; two scavenges
  // move them to the old one, so that the timed run does not pay for copying the
  // benchmark's own inputs (a 200k-delta script is ~20 MB, copied twice by the
  // first scavenges of whichever runtime is timed). Scavenges, not a full GC:
  // those keep compiled code and inline caches warm.
  globalThis.gc({ type: 'minor' })
  globalThis.gc({ type: 'minor' })
  await nextTurn()
  const t0 = performance.now()
  const result = await run()
  const t1 = performance.now()
  check(result)
  const ms = t1 - t0
  return {
    ms,
    window: [t0, t1],
    ...(deltas === undefined ? {} : { perDeltaUs: (ms * 1000) / deltas }),
    ...(scenario === 'long' && result.firstDelta !== undefined ? { firstDeltaMs: result.firstDelta - t0 } : {}),
    ...(scenario === 'tools' ? { msPerTurn: ms / size } : {}),
  }
}

/** One run for memory and leftovers: heap after a full GC before, peak during, retained after a full GC (result kept alive). */
async function measured() {
  const run = make(size, extra)
  await nextTurn()
  gc()
  const resourcesBefore = process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap').length
  const heapBefore = process.memoryUsage().heapUsed
  let peak = heapBefore
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 1)
  const result = await run()
  clearInterval(sampler)
  peak = Math.max(peak, process.memoryUsage().heapUsed)
  gc()
  const retained = process.memoryUsage().heapUsed - heapBefore
  const keep = result.text?.length ?? 0
  await nextTurn()
  await nextTurn()
  const resourcesAfter = process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap').length
  return {
    keep,
    retainedBytes: retained,
    peakBytes: peak - heapBefore,
    ...(scenario === 'fanout' ? { leftoverResources: resourcesAfter - resourcesBefore, liveRuns: result.live?.() ?? null } : {}),
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

// One warm-up phase: the scenario repeated until V8 has had half a second to
// optimize the hot paths (at least once), for every runtime alike.
const warmStart = performance.now()
let warmups = 0
do {
  await timed()
  warmups++
} while (performance.now() - warmStart < (smoke ? 0 : 500) && warmups < 50)
// At least `runs` samples; a short scenario keeps sampling for a second (at most 50
// samples), so that the median of a 10 ms run is not one unlucky scheduler slice.
const samples = []
const sampleStart = performance.now()
while (samples.length < runs || (!smoke && performance.now() - sampleStart < 1000 && samples.length < 50)) samples.push(await timed())
// The observer delivers its entries from an Immediate after each GC, which the
// leftover count of the memory run would see: take what is pending and stop it.
keepEntries(gcObserver.takeRecords())
gcObserver.disconnect()
const memory = await measured()
await nextTurn()
for (const sample of samples) {
  const gcMs = gcMsIn(sample.window)
  delete sample.window
  Object.assign(sample, memory, { gcMs }, deltas === undefined ? {} : { gcPerDeltaUs: (gcMs * 1000) / deltas })
}
const keys = Object.keys(samples[0]).filter((k) => typeof samples[0][k] === 'number')
const summary = Object.fromEntries(
  keys.map((k) => {
    const xs = samples.map((s) => s[k])
    return [k, { median: median(xs), min: Math.min(...xs), max: Math.max(...xs) }]
  }),
)
console.log(JSON.stringify({ runtime, scenario, size, runs, warmups, summary }))
