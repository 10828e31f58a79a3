// One runtime, one scenario, one size, in a fresh process:
//   node --expose-gc bench/worker.mjs <runtime> <scenario> <size> [runs] [smoke] [nomemory]
// Prints one JSON line: the samples and their medians (wall and CPU time).
import { PerformanceObserver } from 'node:perf_hooks'
import { getHeapStatistics } from 'node:v8'
import { history, sampleWhileStreaming } from './inputs.mjs'
import { scenarios as defaults } from './inputs.mjs'
import { spread } from './stats.mjs'

const [runtime, scenario, sizeArg, runsArg, ...flags] = process.argv.slice(2)
const size = Number(sizeArg)
const runs = Number(runsArg ?? 5)
// `smoke`: tiny parameters, no sampling beyond `runs`; `nomemory`: no memory run at the end;
// `heapintimed`: no memory run either, the heap is sampled during the one timed run (see measured()).
const smoke = flags.includes('smoke')
const memoryRun = !flags.includes('nomemory')
const heapInTimed = memoryRun && flags.includes('heapintimed')
if (typeof globalThis.gc !== 'function') throw new Error('run with --expose-gc')
const gc = () => {
  globalThis.gc()
  globalThis.gc()
}

const adapter = await import(`./runtimes/${runtime}.mjs`)
// TEXTCOUNT is TEXT with a consumer that counts the deltas' characters instead of keeping the text.
// COLDTOOLS is TOOLS in a fresh process: one timed run, no warm-up at all.
const base = { textcount: 'text', coldtools: 'tools' }[scenario] ?? scenario
const cold = scenario === 'coldtools'
const make = adapter.scenarios[base]
const skipped = make === undefined ? 'no such scenario' : await adapter.skip?.(base)
if (skipped !== undefined) {
  console.log(JSON.stringify({ runtime, scenario, size, skipped: true, reason: skipped }))
  process.exit(0)
}

/** What kind of run a scenario is: its inputs and its checks follow from that (DURABLE: `durable-tools-pglite` is a `tools` run). */
const kind = base.replace(/^(reader|agent|durable)-/, '').replace(/-(memory|pglite|postgres)$/, '')
const params = {
  long: () => ({ history: history(size), deltas: smoke ? defaults.long.smokeDeltas : defaults.long.deltas }),
  restore: () => ({ history: history(size), deltas: defaults.restore.deltas }),
  fanout: () => ({ deltasPerRun: defaults.fanout.deltasPerRun }),
  parallel: () => ({ toolMs: smoke ? defaults.parallel.smokeToolMs : defaults.parallel.toolMs }),
}
const extra = { ...(params[kind]?.() ?? {}), ...(scenario === 'textcount' ? { keepText: false } : {}) }
const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

/** The text a run of `n` must have streamed, in characters (4 per delta). */
const expectTextOf = (n) => ({ text: n * 4, textsync: n * 4, textfrom: n * 4, long: (extra.deltas ?? 0) * 4, restore: (extra.deltas ?? 0) * 4 })[kind]

/** What a run of `n` must have produced; a benchmark of a wrong result is worthless. */
function check(result, n) {
  const expectText = expectTextOf(n)
  const length = result.textLength ?? result.text?.length
  if (expectText !== undefined && length !== expectText) throw new Error(`${runtime}/${scenario}: text of ${length} characters, expected ${expectText}`)
  // A UI reader must have seen the whole streamed message.
  if (expectText !== undefined && result.readerSaw !== undefined && result.readerSaw !== expectText) throw new Error(`${runtime}/${scenario}: the reader saw ${result.readerSaw} characters, expected ${expectText}`)
  if (kind === 'tools' && result.toolResults !== size * 3) throw new Error(`${runtime}/${scenario}: ${result.toolResults} tool results, expected ${size * 3}`)
  if (kind === 'parallel' && result.toolResults !== size) throw new Error(`${runtime}/parallel: ${result.toolResults} tool results, expected ${size}`)
  if (kind === 'fanout' && result.completed !== size) throw new Error(`${runtime}/fanout: ${result.completed} of ${size} runs completed`)
  if (kind === 'open' && (result.expected < size || result.entries !== result.expected)) throw new Error(`${runtime}/${scenario}: opened ${result.entries} log entries of ${result.expected} (at least ${size})`)
}

// Garbage collections, to tell how much of a run's time they took (entries arrive later, so
// each sample keeps its time window and the GC time in it is added up at the end).
const gcEntries = []
const keepEntries = (entries) => gcEntries.push(...entries.map((e) => [e.startTime, e.duration]))
const gcObserver = new PerformanceObserver((list) => keepEntries(list.getEntries()))
gcObserver.observe({ entryTypes: ['gc'] })
const gcMsIn = ([from, to]) => gcEntries.reduce((sum, [start, duration]) => (start >= from && start < to ? sum + duration : sum), 0)

/** How many text deltas a run of `n` streams, for the per-delta figures. */
const deltasOf = (n) => ({ text: n, textsync: n, textfrom: n, long: extra.deltas })[kind]
const deltas = deltasOf(size)

/**
 * The size of the warm-up runs: the timed size, but at most WARM_DELTAS for the TEXT kinds, for
 * every runtime alike. At 100k–200k deltas one run of pi-agent-core or the AI SDK takes 3–15 s, so a
 * warm-up at full size was a whole extra run (about a minute of the suite at 200k) where V8 needs
 * only the same code paths run for half a second.
 */
const WARM_DELTAS = 20_000
const warmSize = deltasOf(size) === size && size > WARM_DELTAS ? WARM_DELTAS : size

/**
 * One timed run, after a full GC (twice, as every runtime gets): the inputs just built do not
 * sit in the young generation, and no run pays for the garbage of the one before. Wall time and
 * the process's CPU time (user + system, all threads: GC helpers included) over the run.
 * A warm-up run (`collect` false) skips the full GC: see WARM_MS.
 */
async function timed(n = size, heap = undefined, collect = true) {
  // Awaited: a durable run opens its session here, before the timing.
  const run = await make(n, extra)
  if (collect) gc()
  await nextTurn()
  heap?.start()
  const c0 = process.cpuUsage()
  const t0 = performance.now()
  const result = await run().finally(() => heap?.stop())
  const t1 = performance.now()
  const cpu = process.cpuUsage(c0)
  check(result, n)
  const ms = t1 - t0
  const cpuMs = (cpu.user + cpu.system) / 1000
  return {
    ms,
    cpuMs,
    window: [t0, t1],
    ...(deltasOf(n) === undefined ? {} : { perDeltaUs: (ms * 1000) / deltasOf(n), cpuPerDeltaUs: (cpuMs * 1000) / deltasOf(n) }),
    ...(kind === 'long' && result.firstDelta !== undefined ? { firstDeltaMs: result.firstDelta - t0 } : {}),
    ...(kind === 'tools' ? { msPerTurn: ms / size, cpuMsPerTurn: cpuMs / size } : {}),
    ...(heap === undefined ? {} : heap.after(result)),
  }
}

/**
 * The heap over one run: after a full GC before (`start`), the peak during, retained after a full
 * GC with the result kept alive (`after`). Sampled as the shared source streams (every 64 items:
 * what a run of microtasks only allows) and on a 1 ms timer (runs that wait on timers: PARALLEL's tools).
 */
function heapWatch() {
  let heapBefore = 0
  let peak = 0
  let sampler
  const sample = () => {
    const used = getHeapStatistics().used_heap_size
    if (used > peak) peak = used
  }
  return {
    start() {
      heapBefore = process.memoryUsage().heapUsed
      peak = heapBefore
      sampleWhileStreaming(sample)
      sampler = setInterval(sample, 1)
    },
    stop() {
      clearInterval(sampler)
      sampleWhileStreaming(undefined)
      peak = Math.max(peak, process.memoryUsage().heapUsed)
    },
    after(result) {
      gc()
      const retained = process.memoryUsage().heapUsed - heapBefore
      return { keep: result.text?.length ?? 0, retainedBytes: retained, peakBytes: peak - heapBefore }
    },
  }
}

/**
 * One run for memory and leftovers, untimed, after the timed ones: heap after a full GC before,
 * peak during, retained after a full GC (result kept alive). A process of one timed run (a slow
 * peer at 100k–200k deltas, 5–16 s a run: `heapintimed`) samples the heap in that run instead of
 * running it twice; the sampler reads `getHeapStatistics()` every 64 items, about 1.2 µs against the
 * 38–100 µs such a runtime spends on each item (≤ 0.1% of its time, against it).
 */
async function measured() {
  const run = await make(size, extra)
  await nextTurn()
  gc()
  const resourcesBefore = process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap').length
  const heap = heapWatch()
  heap.start()
  let result
  try {
    result = await run()
  } finally {
    heap.stop()
  }
  const memory = heap.after(result)
  await nextTurn()
  await nextTurn()
  const resourcesAfter = process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap').length
  return {
    ...memory,
    ...(kind === 'fanout' ? { leftoverResources: resourcesAfter - resourcesBefore, liveRuns: result.live?.() ?? null } : {}),
  }
}

/** The heap fields of a sample (`heapintimed`), for every sample of the process. */
const heapOf = ({ keep, retainedBytes, peakBytes }) => ({ keep, retainedBytes, peakBytes })

// COLD: the first run of a fresh process, nothing before it. Otherwise one warm-up phase: the
// scenario repeated until V8 has had WARM_MS to optimize the hot paths (at least once), for every
// runtime alike. (500 ms until 2026-11-29: the suite took 661 s on a slow 2-core host, over its
// ten minutes; a short run is repeated dozens of times in 400 ms, and a run longer than that
// is warmed by one run either way.) Warm-up runs get no full GC before them (timed runs do):
// until 2026-11-29 they did, and LONG, whose 5,000-message inputs make each full GC costly, got
// only 2–4 warm-up runs in its 400 ms, so its "steady state" runs were still being compiled
// (`--trace-opt`): 15–50 ms a run against 4–6 ms warmed, for every runtime alike.
// WARM_MS counts the runs' own time, not the building of their inputs: until 2026-11-29 it
// counted both, and a restored Agent on 60,000 messages takes longer to build than the whole
// budget, so rxagent's AGENT restored 60k row was timed after ONE warm-up run (pi's after 7).
// WARM_WALL_MS bounds the phase for such scenarios (the suite has ten minutes).
const WARM_MS = 400
const WARM_WALL_MS = 2000
let warmups = 0
let warmRunMs = 0
const warmStart = performance.now()
const warm = () => warmRunMs < WARM_MS && performance.now() - warmStart < WARM_WALL_MS && warmups < 50
while (!cold && (warmups === 0 || (!smoke && warm()))) {
  warmRunMs += (await timed(warmSize, undefined, false)).ms
  warmups++
}
// At least `runs` samples (one when cold); a short scenario keeps sampling for 300 ms (at most 50
// samples), so that the median of a 10 ms run is not one unlucky scheduler slice (and the rounds of
// run.mjs give each figure three such processes). (500 ms until 2026-11-28: the suite took 683 s on
// a slower 2-core host, over its ten minutes; the medians of 30 samples and 50 barely differ.)
const SAMPLE_MS = 300
const samples = []
const sampleStart = performance.now()
const enough = () => (cold ? samples.length >= 1 : samples.length >= runs && (smoke || performance.now() - sampleStart >= SAMPLE_MS || samples.length >= 50))
while (!enough()) samples.push(await timed(size, heapInTimed && samples.length === 0 ? heapWatch() : undefined))
// The observer delivers its entries from an Immediate after each GC, which the
// leftover count of the memory run would see: take what is pending and stop it.
keepEntries(gcObserver.takeRecords())
gcObserver.disconnect()
const memory = cold || !memoryRun ? {} : heapInTimed ? heapOf(samples[0]) : await measured()
await nextTurn()
for (const sample of samples) {
  const gcMs = gcMsIn(sample.window)
  delete sample.window
  // `warmups` with every sample, so that the results say how far into its process a figure was taken.
  Object.assign(sample, memory, { gcMs, warmups }, deltas === undefined ? {} : { gcPerDeltaUs: (gcMs * 1000) / deltas })
}
const keys = Object.keys(samples[0]).filter((k) => typeof samples[0][k] === 'number')
const summary = Object.fromEntries(
  keys.map((k) => {
    const xs = samples.map((s) => s[k])
    return [k, spread(xs)]
  }),
)
await adapter.teardown?.()
console.log(JSON.stringify({ runtime, scenario, size, runs, warmups, summary }))
