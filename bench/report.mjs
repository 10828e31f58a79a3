// The tables and the targets of `npm run bench`, from the results run.mjs gathered.
//
// results[scenario][size][runtime][metric] = { median, min, max, rounds }: the median over the
// rounds of each fresh process's own median (min–max: the rounds' medians); results.wire[api][scenario][client]
// likewise; results.cold[runtime]: import time and dependency closure.

import { durableStores } from './inputs.mjs'

export const label = { rxagent: 'rxagent', pi: 'pi-agent-core', aisdk: 'AI SDK', bare: 'bare floor', 'rx-floor': 'RxJS floor' }
const wireLabel = { rxagent: 'rxagent', pi: 'pi-ai + pi-agent-core', aisdk: 'AI SDK', floor: 'floor (fetch + SSE + JSON)' }

const fmt = (v, digits) => (v?.median === undefined || v.median === null || Number.isNaN(v.median) ? '—' : v.median.toFixed(digits))
const range = (v, digits) => (v?.min === undefined || v.rounds === 1 ? '' : ` (${v.min.toFixed(digits)}–${v.max.toFixed(digits)})`)
const ratioOf = (a, b) => (a?.median === undefined || b?.median === undefined || !b.median ? undefined : a.median / b.median)
const ratio = (a, b) => {
  const x = ratioOf(a, b)
  return x === undefined ? '—' : `${x.toFixed(2)}×`
}

/** Two figures shown in one cell as `first / second` (e.g. wall / CPU). */
const both = (first, second) => (first === undefined && second === undefined ? undefined : { both: true, first, second })

/** A cell: one value (with its min–max over the rounds when asked), or two. */
function cell(v, digits, withRange) {
  if (v?.both) return `${fmt(v.first, digits)} / ${fmt(v.second, digits)}`
  return fmt(v, digits) + (withRange ? range(v, digits) : '')
}
function ratioCell(a, b) {
  if (a?.both) return `${ratio(a.first, b?.first)} / ${ratio(a.second, b?.second)}`
  return ratio(a, b)
}

/**
 * A markdown table: `columns` are [key, heading]; ratios are the first column's value ÷ each other's
 * (`inverse`: each other's ÷ the first's). `partial`: rows without any value are left out.
 */
function table(allRows, columns, ratios, partial, inverse = false) {
  const rows = partial ? allRows.filter((r) => Object.values(r.values).some((v) => v !== undefined)) : allRows
  if (rows.length === 0) return ''
  const header = ['scenario', 'unit', ...columns.map(([, h]) => h), ...ratios.map(([, h]) => h)]
  return [
    `| ${header.join(' | ')} |`,
    `| ${header.map((_, i) => (i < 2 ? '---' : '---:')).join(' | ')} |`,
    ...rows.map(
      (r) =>
        `| ${[r.name, r.unit, ...columns.map(([k], i) => cell(r.values[k], r.digits, i === 0)), ...ratios.map(([k]) => (inverse ? ratioCell(r.values[k], r.values[columns[0][0]]) : ratioCell(r.values[columns[0][0]], r.values[k])))].join(' | ')} |`,
    ),
  ].join('\n')
}

const mb = (v) => (v === undefined ? undefined : { ...v, median: v.median / 2 ** 20, min: v.min / 2 ** 20, max: v.max / 2 ** 20 })
const kb = (v, runs) => (v === undefined ? undefined : { ...v, median: v.median / 1024 / runs, min: v.min / 1024 / runs, max: v.max / 1024 / runs })
const k = (n) => (n >= 1000 ? `${n / 1000}k` : String(n))

/** Builds the three tables (in-process, AGENT, WIRE) and checks the targets on this run's numbers. */
export function report({ results, sizesOf, runtimes, wire, mcp = { skipped: 'not run.' }, scale = { skipped: 'not run.' }, smoke, scenarios, partial = false }) {
  const get = (scenario, size, runtime, metric) => results[scenario]?.[size]?.[runtime]?.[metric]
  const pair = (scenario, size, runtime, wall, cpu) => both(get(scenario, size, runtime, wall), get(scenario, size, runtime, cpu))

  // --- The runtimes, in process, all reading the same asynchronous source. ---
  const rows = []
  const row = (name, unit, pick, digits = 2) => rows.push({ name, unit, values: Object.fromEntries(runtimes.map((r) => [r, pick(r)])), digits })
  const wc = 'µs/delta, wall / CPU'
  for (const n of sizesOf('text')) row(`TEXT ${k(n)} deltas`, wc, (r) => pair('text', n, r, 'perDeltaUs', 'cpuPerDeltaUs'))
  for (const n of sizesOf('textcount')) row(`TEXT ${k(n)}, runtime only`, wc, (r) => pair('textcount', n, r, 'perDeltaUs', 'cpuPerDeltaUs'))
  for (const n of sizesOf('textfrom')) row(`TEXT ${k(n)}, rxagent via RxJS from() (extra)`, wc, (r) => pair('textfrom', n, r, 'perDeltaUs', 'cpuPerDeltaUs'))
  for (const n of sizesOf('textsync')) row(`TEXT ${k(n)}, rxagent sync source (extra)`, wc, (r) => pair('textsync', n, r, 'perDeltaUs', 'cpuPerDeltaUs'))
  const texts = sizesOf('text')
  for (const n of new Set([texts[0], texts.at(-1)])) row(`TEXT ${k(n)}, of which GC`, 'µs/delta', (r) => get('text', n, r, 'gcPerDeltaUs'), 3)
  const heapAt = smoke ? texts[0] : scenarios.text.memoryAt
  row(`TEXT heap retained @${k(heapAt)}`, 'MB', (r) => mb(get('text', heapAt, r, 'retainedBytes')))
  row(`TEXT heap peak @${k(heapAt)}`, 'MB', (r) => mb(get('text', heapAt, r, 'peakBytes')))
  const turns = sizesOf('tools')[0]
  row(`TOOLS ${turns} turns, warm`, 'ms/turn, wall / CPU', (r) => pair('tools', turns, r, 'msPerTurn', 'cpuMsPerTurn'), 3)
  // The warm-up is the same for every runtime (400 ms of its own runs, bench/worker.mjs): a runtime
  // that V8 takes longer to optimize gets fewer runs in it, and is sampled earlier in its process.
  row(`TOOLS ${turns} turns, warm-up runs before sampling`, 'runs', (r) => get('tools', turns, r, 'warmups'), 0)
  const coldTurns = sizesOf('coldtools')[0]
  row(`COLD first ${coldTurns} tool turns, fresh process`, 'ms total', (r) => get('coldtools', coldTurns, r, 'ms'), 1)
  row(`COLD first ${coldTurns} tool turns, fresh process`, 'ms/turn, wall / CPU', (r) => pair('coldtools', coldTurns, r, 'msPerTurn', 'cpuMsPerTurn'), 3)
  const history = sizesOf('long')[0]
  row(`LONG ${history} msgs`, wc, (r) => pair('long', history, r, 'perDeltaUs', 'cpuPerDeltaUs'))
  row(`LONG first delta`, 'ms', (r) => get('long', history, r, 'firstDeltaMs'), 3)
  const fan = sizesOf('fanout')[0]
  row(`FANOUT ${fan} runs`, 'ms total, wall / CPU', (r) => pair('fanout', fan, r, 'ms', 'cpuMs'), 0)
  row(`FANOUT peak heap per run`, 'KB', (r) => kb(get('fanout', fan, r, 'peakBytes'), fan), 1)
  row(`FANOUT left running`, 'handles', (r) => get('fanout', fan, r, 'leftoverResources'), 0)
  const par = sizesOf('parallel')[0]
  row(`PARALLEL ${par} × ${smoke ? scenarios.parallel.smokeToolMs : scenarios.parallel.toolMs} ms tools`, 'ms wall', (r) => get('parallel', par, r, 'ms'), 1)
  row('COLD import', 'ms', (r) => results.cold?.[r]?.importMs, 1)
  row('COLD dependency closure', 'packages', (r) => (results.cold?.[r] ? { median: results.cold[r].deps.count, rounds: 1 } : undefined), 0)
  row('COLD installed size', 'MB', (r) => (results.cold?.[r] ? { median: results.cold[r].deps.bytes / 2 ** 20, rounds: 1 } : undefined), 2)
  const others = runtimes.filter((r) => r !== 'rxagent')
  const short = { pi: 'pi', aisdk: 'ai', bare: 'bare', 'rx-floor': 'rx-floor' }
  const main = table(
    rows,
    runtimes.map((r) => [r, label[r]]),
    others.map((r) => [r, `rx/${short[r]}`]),
    partial,
  )

  // --- The Agents, with a UI reader of the streamed message. ---
  const arows = []
  const aget = (scenario, size, metric) => ({ agent: get(`agent-${scenario}`, size, 'rxagent', metric), loop: get(`reader-${scenario}`, size, 'rxagent', metric), pi: get(`agent-${scenario}`, size, 'pi', metric) })
  const apair = (scenario, size, wall, cpu) => {
    const w = aget(scenario, size, wall)
    const c = aget(scenario, size, cpu)
    return Object.fromEntries(['agent', 'loop', 'pi'].map((x) => [x, both(w[x], c[x])]))
  }
  const arow = (name, unit, values, digits = 2) => arows.push({ name, unit, values, digits })
  for (const n of sizesOf('agent-text')) arow(`AGENT TEXT ${k(n)} deltas`, wc, apair('text', n, 'perDeltaUs', 'cpuPerDeltaUs'))
  const aturns = sizesOf('agent-tools')[0]
  arow(`AGENT TOOLS ${aturns} turns`, 'ms/turn, wall / CPU', apair('tools', aturns, 'msPerTurn', 'cpuMsPerTurn'), 3)
  const along = sizesOf('agent-long')[0]
  arow(`AGENT LONG ${along} msgs`, wc, apair('long', along, 'perDeltaUs', 'cpuPerDeltaUs'))
  arow(`AGENT LONG first delta`, 'ms', aget('long', along, 'firstDeltaMs'), 3)
  const aheap = sizesOf('agent-text').at(-1)
  const heapRow = aget('text', aheap, 'peakBytes')
  arow(`AGENT heap peak @${k(aheap)}`, 'MB', { agent: mb(heapRow.agent), loop: mb(heapRow.loop), pi: mb(heapRow.pi) })
  for (const n of sizesOf('agent-restore')) arow(`AGENT restored ${k(n)} msgs, one short run`, 'ms/run, wall / CPU', apair('restore', n, 'ms', 'cpuMs'), 2)
  const agentTable = table(
    arows,
    [
      ['agent', 'rxagent Agent'],
      ['loop', 'rxagent agentLoop + reader'],
      ['pi', "pi-agent-core's Agent"],
    ],
    [
      ['loop', 'Agent/loop'],
      ['pi', 'Agent/pi'],
    ],
    partial,
  )

  // --- DURABLE: the Agent with its log in a SessionStore, against the in-memory Agent (same rounds). ---
  const drows = []
  const dget = (what, size, metric) => ({
    inMemory: get(`durable-${what}`, size, 'rxagent', metric),
    ...Object.fromEntries(durableStores.map((store) => [store, get(`durable-${what}-${store}`, size, 'rxagent', metric)])),
  })
  const dpair = (what, size, wall, cpu) => {
    const w = dget(what, size, wall)
    const c = dget(what, size, cpu)
    return Object.fromEntries(Object.keys(w).map((x) => [x, both(w[x], c[x])]))
  }
  const dturns = sizesOf('durable-tools')[0]
  drows.push({ name: `DURABLE TOOLS ${dturns} turns`, unit: 'ms/turn, wall / CPU', values: dpair('tools', dturns, 'msPerTurn', 'cpuMsPerTurn'), digits: 3 })
  for (const ddeltas of sizesOf('durable-text')) {
    drows.push({ name: `DURABLE TEXT ${k(ddeltas)} deltas`, unit: wc, values: dpair('text', ddeltas, 'perDeltaUs', 'cpuPerDeltaUs'), digits: 2 })
  }
  const dopen = sizesOf('durable-open')[0]
  drows.push({ name: `DURABLE open a ${k(dopen)}-entry session`, unit: 'ms, wall / CPU', values: dpair('open', dopen, 'ms', 'cpuMs'), digits: 2 })
  const storeLabel = { memory: 'Agent.open, memory store', pglite: 'Agent.open, PGlite', postgres: 'Agent.open, PostgreSQL' }
  const durableTable = table(
    drows,
    [['inMemory', 'in-memory Agent (open: Agent.fromLog)'], ...durableStores.map((store) => [store, storeLabel[store]])],
    durableStores.map((store) => [store, `${store}/in-memory`]),
    partial,
    true,
  )

  // --- WIRE: real SSE over local HTTP (helper worker bench/wire/worker.mjs). ---
  const clients = ['rxagent', 'pi', 'aisdk', 'floor']
  const wrows = []
  for (const [api, apiName] of [
    ['anthropic', 'Anthropic'],
    ['openai', 'OpenAI'],
  ]) {
    for (const scenario of ['text', 'tools']) {
      const at = results.wire?.[api]?.[scenario]
      const deltas = Object.values(at ?? {}).find((x) => x?.deltas !== undefined)?.deltas
      const name = scenario === 'text' ? `WIRE ${apiName} text${deltas ? ` ${k(deltas)}` : ''}` : `WIRE ${apiName} ${smoke ? '' : `${wire.toolTurns} `}tool turns`
      wrows.push({ name, unit: 'CPU / wall µs/delta', digits: 2, values: Object.fromEntries(clients.map((c) => [c, both(at?.[c]?.cpuUsPerDelta, at?.[c]?.wallUsPerDelta)])) })
    }
  }
  const wireTable = wire.skipped
    ? `WIRE rows skipped: ${wire.skipped}`
    : table(
        wrows,
        clients.map((c) => [c, wireLabel[c]]),
        clients.filter((c) => c !== 'rxagent').map((c) => [c, `rx/${c === 'aisdk' ? 'ai' : c}`]),
        partial,
      )

  // --- MCP: one tool call over a local stdio MCP server vs in process (helper worker bench/mcp/worker.mjs). ---
  const m = results.mcp
  const mcpTable = mcp.skipped
    ? partial
      ? ''
      : `MCP row skipped: ${mcp.skipped}`
    : table(
        [
          {
            name: `MCP tool call, local stdio server (${mcp.calls} sequential calls)`,
            unit: 'ms/call, wall / CPU',
            digits: 3,
            values: { mcp: both(m?.['mcp.msPerCall'], m?.['mcp.cpuMsPerCall']), inproc: both(m?.['inproc.msPerCall'], m?.['inproc.cpuMsPerCall']) },
          },
        ],
        [
          ['mcp', 'over MCP (client side)'],
          ['inproc', 'same tool in process'],
        ],
        [['inproc', 'MCP/in process']],
        partial,
      )

  const scaleTable = scale.skipped ? (partial ? '' : `SCALE rows skipped: ${scale.skipped}`) : scaleTables(results.scale, partial)

  const checked = smoke ? [] : targets({ get, sizesOf, runtimes, results })
  return { tables: [main, agentTable, durableTable, wireTable, mcpTable, scaleTable].filter((t) => t !== ''), targets: partial ? checked.filter((t) => t.ok !== null) : checked }
}

/**
 * SCALE (bench/scale/): rxagent/dbos throughput on 1, 2 and 4 worker processes sharing one PostgreSQL,
 * then one run at a time in one process, the plain durable session against the same run as a DBOS
 * workflow; and a line saying how it scaled and what was busy. No targets: measured, reported.
 */
function scaleTables(sc, partial) {
  if (sc === undefined) return ''
  const one = (x) => (x === undefined || x === null || Number.isNaN(x) ? undefined : { median: x, rounds: 1 })
  const pct = (x) => one(x === undefined ? undefined : x * 100)
  const ws = Object.keys(sc.workers)
  const at = (pick) => Object.fromEntries(ws.map((w) => [w, pick(sc.workers[w])]))
  const { modelTurns, toolCalls, steps } = sc.perRun
  const rows = [
    { name: `SCALE ${sc.runs} runs over ${sc.sessions} sessions, ${sc.concurrency} runs per worker`, unit: `model turns/s (a run: ${modelTurns} turns + ${toolCalls} tool call)`, digits: 1, values: at((r) => one(r.turnsPerS)) },
    { name: 'SCALE wall, first enqueue to last run done', unit: 's', digits: 2, values: at((r) => one(r.wallMs / 1000)) },
    { name: `SCALE CPU busy, of ${sc.cores} cores`, unit: '%, workers / PostgreSQL', digits: 0, values: at((r) => both(pct(r.busy.workers), pct(r.busy.postgres))) },
    { name: 'SCALE CPU per run', unit: 'ms, workers / PostgreSQL', digits: 1, values: at((r) => both(one(r.cpuMsPerRun.workers), one(r.cpuMsPerRun.postgres))) },
    { name: 'SCALE machine busy, every process', unit: '%', digits: 0, values: at((r) => pct(r.busy.machine)) },
    // What the CPU spent per run allows on these cores if nothing else ran (an estimate, not a measurement).
    {
      name: `SCALE CPU-bound ceiling on ${sc.cores} cores (estimate)`,
      unit: 'model turns/s, cores ÷ CPU per run',
      digits: 1,
      values: at((r) => (r.cpuMsPerRun.postgres === undefined ? undefined : one(((sc.cores * 1000) / (r.cpuMsPerRun.workers + r.cpuMsPerRun.postgres + r.cpuMsPerRun.client)) * modelTurns))),
    },
  ]
  const throughput = table(
    rows,
    ws.map((w) => [w, `${w} worker${w === '1' ? '' : 's'}`]),
    ws.slice(1).map((w) => [w, `${w}/1`]),
    partial,
    true,
  )
  const o = sc.overhead
  const overhead =
    o === undefined
      ? ''
      : table(
          [
            { name: `SCALE one run at a time (${o.runs} runs): a run of ${steps} steps`, unit: 'ms, DBOS: dequeue to done', digits: 1, values: { plain: one(o.plain.msPerRun), dbos: one(o.dbos.msPerRun) } },
            { name: 'SCALE per step (model or tool call)', unit: 'ms', digits: 1, values: { plain: one(o.plain.msPerRun / steps), dbos: one(o.dbos.msPerRun / steps) } },
            { name: 'SCALE DBOS overhead per step', unit: `ms, (DBOS − plain) / ${steps}`, digits: 1, values: { dbos: one(o.overheadMsPerStep) } },
            { name: `SCALE enqueue to first step (queue polled every ${sc.pollingIntervalMs} ms)`, unit: 'ms', digits: 1, values: { dbos: one(o.dbos.toFirstStepMs) } },
            { name: 'SCALE CPU per run', unit: 'ms, process / PostgreSQL', digits: 1, values: { plain: both(one(o.plain.cpuMsPerRun.process), one(o.plain.cpuMsPerRun.postgres)), dbos: both(one(o.dbos.cpuMsPerRun.process), one(o.dbos.cpuMsPerRun.postgres)) } },
          ],
          [
            ['plain', 'Agent.open, PostgreSQL store'],
            ['dbos', 'DBOS workflow, 1 worker in process'],
          ],
          [['dbos', 'DBOS/plain']],
          partial,
          true,
        )
  const f = (x, d = 1) => (x === undefined || x === null || Number.isNaN(x) ? '—' : x.toFixed(d))
  const first = sc.workers[ws[0]]
  const speedups = ws.map((w) => `${w}: ${f(sc.workers[w].turnsPerS)} turns/s (${f(sc.workers[w].turnsPerS / first.turnsPerS, 2)}×)`).join(', ')
  const busy = ws.map((w) => `${w}: ${f(sc.workers[w].busy.total * 100, 0)}% ours, ${f((sc.workers[w].busy.machine ?? NaN) * 100, 0)}% machine`).join('; ')
  const lines = [
    `SCALE: a turn is one model call; each run is ${modelTurns} model turns and ${toolCalls} tool call, ${o?.dbos.dbosSteps.length ?? '?'} DBOS steps with rxagent's own (${o?.dbos.dbosSteps.join(', ') ?? '?'}). Workers → throughput: ${speedups}. CPU busy over each window, of ${sc.cores} cores (ours: workers + PostgreSQL + client): ${busy}; load average ${f(sc.loadAverage, 2)} at the start, ${f(sc.loadAverageAfter, 2)} at the end.`,
    ...(o === undefined ? [] : [`SCALE one at a time: enqueue (client.prompt) ${f(o.dbos.enqueueMs)} ms; enqueue to dequeue ${f(o.dbos.queueMs)} ms (the queue's polling); dequeue to first step ${f(o.dbos.startMs)} ms; the DBOS run (dequeue to done) ${f(o.dbos.msPerRun)} ms against ${f(o.plain.msPerRun)} ms for the plain durable session (opening included): +${f(o.overheadMsPerStep)} ms per model or tool step.`]),
  ]
  return [throughput, overhead, ...lines].filter((t) => t !== '').join('\n\n')
}

/** Issue 13's and issue 14's targets, checked on this run's numbers (medians over the rounds; wall time unless said). */
function targets({ get, sizesOf, runtimes, results }) {
  const out = []
  const v = (scenario, size, runtime, metric) => get(scenario, size, runtime, metric)?.median
  const target = (name, a, op, b, detail) => {
    const ok = a === undefined || b === undefined || Number.isNaN(a) || Number.isNaN(b) ? null : op === '≤' ? a <= b : a < b
    out.push({ name, ok, detail: ok === null ? 'not measured' : detail })
  }
  const x = (n) => `${n.toFixed(2)}×`
  const peers = runtimes.filter((r) => r === 'pi' || r === 'aisdk')
  // [scenario, size, wall metric, name]; judged on wall time, the CPU ratio beside it.
  const cpuOf = { perDeltaUs: 'cpuPerDeltaUs', msPerTurn: 'cpuMsPerTurn' }
  const inProcess = [
    ...sizesOf('text').map((n) => ['text', n, 'perDeltaUs', `TEXT ${k(n)}`]),
    ['tools', sizesOf('tools')[0], 'msPerTurn', `TOOLS ${sizesOf('tools')[0]} turns`],
    ['long', sizesOf('long')[0], 'perDeltaUs', `LONG ${sizesOf('long')[0]} msgs`],
  ]
  const pairRatio = (sa, ra, sb, rb, n, m) => [v(sa, n, ra, m) / v(sb, n, rb, m), v(sa, n, ra, cpuOf[m]) / v(sb, n, rb, cpuOf[m])]
  const detail = ([wall, cpu]) => `${x(wall)} wall, ${x(cpu)} CPU`
  for (const [s, n, m, name] of inProcess) {
    const r = pairRatio(s, 'rxagent', s, 'bare', n, m)
    target(`${name}: agentLoop ≤ 1.5× the bare floor`, r[0], '≤', 1.5, detail(r))
    for (const p of peers) {
      const rp = pairRatio(s, 'rxagent', s, p, n, m)
      target(`${name}: ahead of ${label[p]}`, rp[0], '<', 1, `${detail(rp)} (${v(s, n, 'rxagent', m)?.toFixed(3)} vs ${v(s, n, p, m)?.toFixed(3)})`)
    }
  }
  const wire = results.wire
  for (const api of ['anthropic', 'openai']) {
    for (const scenario of ['text', 'tools']) {
      const cpu = (c) => wire?.[api]?.[scenario]?.[c]?.cpuUsPerDelta?.median
      const name = `WIRE ${api} ${scenario}`
      const f = cpu('rxagent') / cpu('floor')
      target(`${name}: rxagent CPU ≤ 1.15× the floor`, f, '≤', 1.15, x(f))
      const p = cpu('pi') / cpu('rxagent')
      target(`${name}: ≥ 2.5× less CPU than pi-ai`, 2.5, '≤', p, `${x(p)} less`)
      const a = cpu('aisdk') / cpu('rxagent')
      target(`${name}: ≥ 8× less CPU than the AI SDK`, 8, '≤', a, `${x(a)} less`)
    }
  }
  const ct = sizesOf('coldtools')[0]
  target(`COLD first ${ct} tool turns ≤ pi-agent-core's`, v('coldtools', ct, 'rxagent', 'ms'), '≤', v('coldtools', ct, 'pi', 'ms'), `${v('coldtools', ct, 'rxagent', 'ms')?.toFixed(1)} vs ${v('coldtools', ct, 'pi', 'ms')?.toFixed(1)} ms`)
  const lh = sizesOf('long')[0]
  target(`LONG first delta ≤ pi-agent-core's`, v('long', lh, 'rxagent', 'firstDeltaMs'), '≤', v('long', lh, 'pi', 'firstDeltaMs'), `${v('long', lh, 'rxagent', 'firstDeltaMs')?.toFixed(3)} vs ${v('long', lh, 'pi', 'firstDeltaMs')?.toFixed(3)} ms`)
  const fan = sizesOf('fanout')[0]
  target(`FANOUT total time ≤ pi-agent-core's`, v('fanout', fan, 'rxagent', 'ms'), '≤', v('fanout', fan, 'pi', 'ms'), `${v('fanout', fan, 'rxagent', 'ms')?.toFixed(0)} vs ${v('fanout', fan, 'pi', 'ms')?.toFixed(0)} ms`)
  const heap = (r) => v('fanout', fan, r, 'peakBytes') / 1024 / fan
  target(`FANOUT peak heap per run ≤ pi-agent-core's`, heap('rxagent'), '≤', heap('pi'), `${heap('rxagent').toFixed(1)} vs ${heap('pi').toFixed(1)} KB`)
  // Issue 14: the Agent.
  const agentRows = [
    ...sizesOf('agent-text').map((n) => ['text', n, 'perDeltaUs', `AGENT TEXT ${k(n)}`]),
    ['tools', sizesOf('agent-tools')[0], 'msPerTurn', 'AGENT TOOLS'],
    ['long', sizesOf('agent-long')[0], 'perDeltaUs', 'AGENT LONG'],
  ]
  for (const [s, n, m, name] of agentRows) {
    const loop = pairRatio(`agent-${s}`, 'rxagent', `reader-${s}`, 'rxagent', n, m)
    target(`${name}: Agent ≤ 1.5× agentLoop with the same reader`, loop[0], '≤', 1.5, detail(loop))
    const pi = pairRatio(`agent-${s}`, 'rxagent', `agent-${s}`, 'pi', n, m)
    target(`${name}: faster than pi-agent-core's Agent`, pi[0], '<', 1, detail(pi))
  }
  const top = sizesOf('agent-text').at(-1)
  const ah = (r) => v('agent-text', top, r, 'peakBytes') / 2 ** 20
  target(`AGENT heap peak at TEXT ${k(top)} ≤ pi-agent-core's Agent`, ah('rxagent'), '≤', ah('pi'), `${ah('rxagent').toFixed(1)} vs ${ah('pi').toFixed(1)} MB`)
  const al = sizesOf('agent-long')[0]
  const first = v('agent-long', al, 'rxagent', 'firstDeltaMs')
  target(`AGENT LONG first delta ≤ 1 ms at ${al} msgs (default sliding window)`, first, '≤', 1, `${first?.toFixed(3)} ms`)
  const [small, big] = sizesOf('agent-restore')
  const grow = v('agent-restore', big, 'rxagent', 'ms') / v('agent-restore', small, 'rxagent', 'ms')
  target(`AGENT ${k(big)}-message conversation: time per run ≤ 1.5× a ${k(small)}-message one`, grow, '≤', 1.5, x(grow))
  // Issue 15: durable sessions.
  const dt = sizesOf('durable-tools')[0]
  const turnMs = (store) => v(store === undefined ? 'durable-tools' : `durable-tools-${store}`, dt, 'rxagent', 'msPerTurn')
  for (const [store, limit, name] of [
    ['pglite', 2, 'PGlite'],
    ['postgres', 5, 'PostgreSQL on 127.0.0.1'],
  ]) {
    const over = turnMs(store) - turnMs(undefined)
    target(`DURABLE tool turn with ${name} ≤ +${limit} ms over the in-memory Agent`, over, '≤', limit, `+${over.toFixed(3)} ms (${turnMs(store)?.toFixed(3)} vs ${turnMs(undefined)?.toFixed(3)} ms/turn)`)
  }
  // Every size is checked: a run's commits are a fixed cost, so the smallest size is the hardest.
  for (const dd of sizesOf('durable-text')) {
    for (const store of durableStores) {
      const r = pairRatio(`durable-text-${store}`, 'rxagent', 'durable-text', 'rxagent', dd, 'perDeltaUs')
      target(`DURABLE TEXT ${k(dd)} on the ${store} store ≤ 1.2× the in-memory Agent per delta`, r[0], '≤', 1.2, detail(r))
    }
  }
  const dn = sizesOf('durable-open')[0]
  const openMs = v('durable-open-pglite', dn, 'rxagent', 'ms')
  target(`DURABLE open a ${k(dn)}-entry session on PGlite ≤ 100 ms`, openMs, '≤', 100, `${openMs?.toFixed(1)} ms`)
  return out
}
