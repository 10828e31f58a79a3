// The DURABLE rows' scenarios (rxagent's adapter adds them to its own): the in-memory Agent (`durable-tools`, `durable-text`;
// `durable-open` is `Agent.fromLog`) and the same with `Agent.open` on each store (`durable-tools-pglite`…), a new session per
// run, opened before the timing; a run is done when its log is committed (`flush`). The stores are made once per worker
// process, before any timing: the memory store, PGlite in a temp directory, PostgreSQL in a fresh database of the cluster
// run.mjs started (RXAGENT_BENCH_POSTGRES_URL; absent: those rows are skipped). `teardown()` closes them and removes what
// they left (temp directory, database). The TOOLS and TEXT scenarios run SETTLE_RUNS times untimed at their first use in a
// process (`settled`): PGlite's WebAssembly needs more than the worker's warm-up to reach its steady state.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { durableStores, textDeltas } from './inputs.mjs'

const stores = []

const makers = {
  async memory() {
    const { memorySessionStore } = await import('../dist/src/sessions/index.js')
    const store = memorySessionStore()
    return { store, close: () => store.close() }
  },
  async pglite() {
    const { pgliteSessionStore } = await import('../dist/src/sessions/pglite-store.js')
    const dataDir = mkdtempSync(join(tmpdir(), 'rxagent-bench-pglite-'))
    // A copy of the run's template directory (bench/pglite-template.mjs), when run.mjs made one.
    const template = process.env.RXAGENT_BENCH_PGLITE_TEMPLATE
    if (template !== undefined && template !== '') copyTree(template, dataDir)
    const store = await pgliteSessionStore({ dataDir })
    return {
      store,
      close: async () => {
        await store.close()
        rmSync(dataDir, { recursive: true, force: true })
      },
    }
  },
  async postgres() {
    const url = process.env.RXAGENT_BENCH_POSTGRES_URL
    if (url === undefined || url === '') return { skipped: 'no PostgreSQL cluster (run.mjs starts one when the binaries are installed: apt-get install -y postgresql)' }
    const built = await import('../dist/src/sessions/postgres-store.js').catch((error) => error)
    if (built instanceof Error) return { skipped: `no PostgreSQL store in this build (dist/src/sessions/postgres-store.js: ${built.code ?? built.message.split('\n')[0]})` }
    const { default: pg } = await import('pg')
    const database = `bench_${process.pid}_${Date.now()}`
    const admin = new pg.Client({ connectionString: url })
    await admin.connect()
    await admin.query(`CREATE DATABASE ${database}`)
    await admin.end()
    const target = new URL(url)
    target.pathname = `/${database}`
    const store = await built.postgresSessionStore({ connectionString: target.href })
    return {
      store,
      close: async () => {
        await store.close()
        const drop = new pg.Client({ connectionString: url })
        await drop.connect()
        await drop.query(`DROP DATABASE IF EXISTS ${database}`)
        await drop.end()
      },
    }
  },
}

/**
 * Copies a directory tree with plain reads and writes. `fs.cpSync` copies each file with `copy_file_range`, and
 * on this host's ext4 a PGlite directory copied that way and then used took 2.0–2.9 s to delete (about 2 ms a
 * file, 991 files; `rm -rf` from a shell the same), against 0.2–0.3 s for one copied by reads and writes (both
 * measured in the worker's teardown under a load of 8). On a quiet host it matters less: the DURABLE rows of
 * the full suite took 126.6 s before and 123.0 s after. Copy and removal are outside the runs; the timed runs
 * did not move (durable-tools-pglite, five alternating processes each: median CPU 270 ms a run with `cpSync`,
 * 248 ms with this, within the noise).
 */
function copyTree(from, to) {
  mkdirSync(to, { recursive: true })
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name)
    const target = join(to, entry.name)
    if (entry.isDirectory()) copyTree(source, target)
    else writeFileSync(target, readFileSync(source), { mode: statSync(source).mode })
  }
}

/** Untimed runs of a DURABLE scenario before the worker's own warm-up (see `settled`). */
const SETTLE_RUNS = 10
/** ... the text ones at most this many deltas (as the worker's WARM_DELTAS). */
const SETTLE_DELTAS = 20_000

const cache = new Map()

/** The process's store of `kind` (`memory`, `pglite`, `postgres`), made once: `{ store }`, or `{ skipped }` saying why it cannot be had here. */
function made(kind) {
  if (!cache.has(kind)) {
    cache.set(
      kind,
      makers[kind]().then((it) => {
        if (it.store !== undefined) stores.push(it)
        return it
      }),
    )
  }
  return cache.get(kind)
}

/** The process's store of `kind`. @throws when it cannot be had here (`made(kind).skipped` says why). */
async function storeOf(kind) {
  const it = await made(kind)
  if (it.store === undefined) throw new Error(`no ${kind} store: ${it.skipped}`)
  return it.store
}

/** Closes every store this process made. */
async function closeStores() {
  for (const it of stores.splice(0)) await it.close()
}

/** The scenarios, over the adapter's own helpers (passed in: this module is imported by it). */
export function durableScenarios({ Agent, mockModel, promptRun, agentRun, toolScripts, textScript, echo }) {
  let sessions = 0
  let previous

  /** A new session of `kind`'s store (made once per process); the previous run's session is closed first (untimed). */
  async function durableAgent(kind, scripts, tools = []) {
    await previous?.session.close()
    const model = mockModel(scripts)
    const store = await storeOf(kind)
    const agent = await Agent.open({ store, sessionId: `bench-${process.pid}-${sessions++}`, systemPrompt: 'You are a benchmark.', model: model.model, streamFn: model.streamFn, tools })
    previous = agent
    return agent
  }

  /** Why a scenario cannot run in this process (the worker reports it as skipped), or undefined. */
  async function skip(scenario) {
    const kind = /^durable-.*-(memory|pglite|postgres)$/.exec(scenario)?.[1]
    return kind === undefined ? undefined : (await made(kind)).skipped
  }

  /** Closes what the process opened (the last session, the stores). */
  async function teardown() {
    await previous?.session.close()
    await closeStores()
  }

  const warmed = new Set()

  /**
   * `make`, whose first call in the process runs the scenario {@link SETTLE_RUNS} times first, untimed (the text
   * ones at most {@link SETTLE_DELTAS} deltas), for every DURABLE variant alike, the in-memory Agent included.
   * PGlite opens the copied template directory cold: its WebAssembly (PostgreSQL's executor, WAL, TOAST) runs
   * unoptimized until V8 tiers it up, and the worker's warm-up (500 ms, at least one run) ended after the first
   * run, which alone took longer. Measured (worker.mjs, 10k deltas, load 8-10 on 2 cores): the five PGlite
   * samples after that one warm-up run took 414, 284, 124, 121, 116 ms and 448, 248, 166, 91, 106 ms, still
   * falling; the in-memory Agent's after two or three, 168, 50, 87, 47, 59 ms. Each timed run is unchanged.
   */
  function settled(name, make) {
    return async (n, ...rest) => {
      if (!warmed.has(name)) {
        warmed.add(name)
        const size = name.startsWith('durable-text') ? Math.min(n, SETTLE_DELTAS) : n
        for (let i = 0; i < SETTLE_RUNS; i++) await (await make(size, ...rest))()
      }
      return make(n, ...rest)
    }
  }

  const madeSessions = new Map()
  /**
   * A session of `size` log entries: tool turns of one long prompt, as a plain Agent logs them; made once per
   * process, as the stores' sessions are (each run opens the same one; `Agent.fromLog` keeps nothing from one
   * call to the next). Until 2026-11-29 `durable-open` made it anew for every run: 0.5–1.6 s each, so its warm-up
   * hit the 2 s wall bound after five runs and its processes took 4–6 s.
   */
  function sessionOf(size) {
    if (!madeSessions.has(size)) madeSessions.set(size, madeSession(size))
    return madeSessions.get(size)
  }

  async function madeSession(size) {
    const turns = Math.ceil(size / 12)
    const model = mockModel(toolScripts(turns))
    const agent = new Agent({ systemPrompt: 'You are a benchmark.', model: model.model, streamFn: model.streamFn, tools: [echo] })
    await agent.prompt('go')
    return agent.log
  }

  const opened = new Map()

  /** `size` log entries in a session of `kind`'s store, written once per process (in batches, untimed). */
  async function storedSession(kind, size) {
    if (!opened.has(kind)) {
      opened.set(kind, (async () => {
        const log = await sessionOf(size)
        const store = await storeOf(kind)
        const sessionId = `bench-open-${process.pid}`
        for (let from = 0; from < log.length; from += 1000) {
          await store.append(sessionId, { expectedSeq: from, records: log.slice(from, from + 1000).map((body) => ({ at: 0, body })) })
        }
        return { store, sessionId, entries: log.length }
      })())
    }
    return opened.get(kind)
  }

  const openModel = mockModel([textScript(['unused'])])

  /** Times `Agent.open` of a stored session (the agent opened by the previous run is closed first, untimed). */
  async function openRun(kind, size) {
    await previous?.session.close()
    previous = undefined
    const { store, sessionId, entries } = await storedSession(kind, size)
    return async () => {
      previous = await Agent.open({ store, sessionId, tools: [echo], systemPrompt: 'You are a benchmark.', model: openModel.model, streamFn: openModel.streamFn })
      return { entries: previous.log.length, expected: entries }
    }
  }

  const durable = Object.fromEntries(
    durableStores.flatMap((kind) => [
      [`durable-tools-${kind}`, async (turns) => promptRun(await durableAgent(kind, toolScripts(turns), [echo]))],
      [`durable-text-${kind}`, async (n) => promptRun(await durableAgent(kind, [textScript(textDeltas(n))]))],
      [`durable-open-${kind}`, (size) => openRun(kind, size)],
    ]),
  )

  const plain = {
    'durable-tools': (turns) => agentRun(toolScripts(turns), { tools: [echo] }),
    'durable-text': (n) => agentRun([textScript(textDeltas(n))]),
    async 'durable-open'(size) {
      const log = await sessionOf(size)
      return async () => ({ entries: Agent.fromLog(log, { tools: [echo], streamFn: openModel.streamFn }).log.length, expected: log.length })
    },
    ...durable,
  }
  // OPEN is left out: its runs (one query of the whole log) warm PGlite within the worker's own
  // warm-up, and settling them rebuilt a 10k-entry session per untimed run (17 s of the suite).
  const scenarios = Object.fromEntries(Object.entries(plain).map(([name, make]) => [name, name.startsWith('durable-open') ? make : settled(name, make)]))
  return { scenarios, skip, teardown }
}
