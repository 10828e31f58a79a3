/**
 * A probe of the session stores' own costs (not a bench row: `npm run bench`
 * has the DURABLE rows): append latency for small batches, and reading a
 * 10,000-entry session back, decoded. Runs the TypeScript sources directly:
 *
 *   node --import ./test/support/ts-register.mjs bench/session-store-probe.ts memory
 *   node --import ./test/support/ts-register.mjs bench/session-store-probe.ts pglite [dataDir]
 *   node --import ./test/support/ts-register.mjs bench/session-store-probe.ts postgres <connectionString>
 *
 * Prints medians over rounds (µs per append, ms per read); a PGlite data
 * directory defaults to a fresh temporary one, removed at the end.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { SessionStore, TimedRecord } from '../src/agent/session-store.js'
import { memorySessionStore } from '../src/sessions/index.js'
import { init, messageEnd, note, stream } from '../test/sessions/fixtures.js'

const [kind = 'memory', where] = process.argv.slice(2)
let cleanup = () => {}
async function open(): Promise<SessionStore> {
  if (kind === 'memory') return memorySessionStore()
  if (kind === 'pglite') {
    const dataDir = where ?? mkdtempSync(join(tmpdir(), 'rxagent-probe-'))
    if (where === undefined) cleanup = () => rmSync(dataDir, { recursive: true, force: true })
    const { pgliteSessionStore } = await import('../src/sessions/pglite-store.js')
    return pgliteSessionStore({ dataDir })
  }
  if (kind === 'postgres' && where !== undefined) {
    const { postgresSessionStore } = await import('../src/sessions/postgres-store.js')
    return postgresSessionStore({ connectionString: where, schema: `probe_${process.pid}` })
  }
  throw new Error('usage: session-store-probe.ts memory | pglite [dataDir] | postgres <connectionString>')
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const store = await open()
const id = `probe-${Date.now()}`
let length = (await store.append(id, { expectedSeq: 0, records: [init()] })).length

/** µs per append of `batch(length)`, median of 5 rounds of `n`. */
async function appends(label: string, n: number, batch: (length: number) => readonly TimedRecord[]): Promise<void> {
  const rounds: number[] = []
  for (let round = 0; round < 6; round++) {
    const start = performance.now()
    for (let i = 0; i < n; i++) length = (await store.append(id, { expectedSeq: length, records: batch(length) })).length
    if (round > 0) rounds.push(((performance.now() - start) / n) * 1000)
  }
  console.log(`${kind} append ${label}: ${median(rounds).toFixed(0)} µs (rounds ${rounds.map((r) => r.toFixed(0)).join(', ')})`)
}

await appends('1 entry', 100, (l) => [note(l)])
await appends('1 stream record of 20 deltas', 100, (l) => [stream(l, 20)])
await appends('3 entries ending a message (compaction)', 100, (l) => [stream(l, 5), messageEnd(l), note(l + 1), note(l + 2)])
while (length < 10_000) {
  const k = Math.min(1_000, 10_000 - length)
  length = (await store.append(id, { expectedSeq: length, records: Array.from({ length: k }, (_, i) => note(length + i)) })).length
}
const reads: number[] = []
const cpu: number[] = []
for (let round = 0; round < 5; round++) {
  const start = performance.now()
  const used = process.cpuUsage()
  const records = await store.read(id)
  reads.push(performance.now() - start)
  const { user, system } = process.cpuUsage(used)
  cpu.push((user + system) / 1000)
  if (records.length < 10_000) throw new Error(`read ${records.length} records`)
}
console.log(`${kind} read 10,000 entries, decoded: ${median(reads).toFixed(1)} ms wall, ${median(cpu).toFixed(1)} ms CPU (rounds ${reads.map((r) => r.toFixed(1)).join(', ')})`)
await store.delete(id)
await store.close()
cleanup()
