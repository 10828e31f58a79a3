/**
 * kill -9 at any moment loses nothing acknowledged (issue 15): real child
 * processes run a scripted agent on a durable session and are SIGKILLed at
 * points chosen from a seed — mid-stream, mid-tool, during an append, while
 * waiting for approval, during open (the settlement of the crash before), at
 * a random time — at least 50 per store. Every next process opens the
 * session fresh and is checked: every acknowledged entry is there unchanged,
 * the stored log decodes, the transcript answers every tool call exactly
 * once, an approval left waiting is still pending, no tool call whose
 * decision, start or result was acknowledged runs again (one that ran
 * unacknowledged may: the summary names them; never one that needed
 * approval, whose decision is committed before it runs), and the run goes on to its
 * final answer (see `crash/chain.ts`).
 *
 * The children are one Node process each (with PGlite, its WASM database):
 * a few seconds apiece on a busy machine, so the file takes minutes.
 *
 * Reproduce a failure with `RXAGENT_CRASH_SEED=<seed printed> npx vitest run test/sessions/crash.test.ts`.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildChildScripts, type ChildBuild } from '../support/child-build.js'
import { describePostgres } from '../support/postgres-cluster.js'
import { runChain, TRIGGER_KINDS, type ChainReport } from './crash/chain.js'
import type { StoreConfig } from './crash/child.js'
import { inParallel, killAllChildren, seededRandom, startChild } from './crash/harness.js'

const seed = Number(process.env.RXAGENT_CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31))
/** 6 chains × 9 kills: ≥ 54 kill points per store, 4 chains at a time (each child is a whole Node process with its database). */
const CHAINS = 6
const KILLS_PER_CHAIN = 9
const PARALLEL = 4

let build: ChildBuild
let dir: string
beforeAll(() => {
  build = buildChildScripts(['test/sessions/crash'])
  dir = mkdtempSync(join(tmpdir(), 'rxagent-crash-'))
}, 60_000)
// Removing databases on a busy disk takes a while.
afterAll(() => {
  killAllChildren()
  build?.remove()
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
}, 120_000)

/** Runs the chains on `storeFor`'s stores and checks the reports; the seed is in every failure. */
async function crashChains(name: string, storeFor: (chain: number) => Promise<StoreConfig> | StoreConfig): Promise<void> {
  const random = seededRandom(seed ^ name.length)
  const chains = Array.from({ length: CHAINS }, (_, i) => i)
  const plans = chains.map((index) => ({ index, random: seededRandom(Math.floor(random() * 2 ** 31)), stableHolder: index !== 2 }))
  // The chains' executions files, one directory per store.
  const storeDir = mkdtempSync(join(dir, `${name}-`))
  const reports: ChainReport[] = await inParallel(plans, PARALLEL, async (plan) => {
    const store = await storeFor(plan.index)
    const report = await runChain({ ...plan, script: build.script('test/sessions/crash/child.ts'), store, dir: storeDir, kills: KILLS_PER_CHAIN })
    if (store.kind === 'pglite') rmSync(store.dataDir, { recursive: true, force: true })
    return report
  })
  const problems = reports.flatMap((r) => r.problems)
  const kills = reports.flatMap((r) => r.kills)
  const byKind = Object.fromEntries(TRIGGER_KINDS.map((kind) => [kind, kills.filter((k) => k.trigger.kind === kind).length]))
  const reruns = reports.flatMap((r) => r.reruns)
  const summary = `${name}: seed ${seed}, ${kills.length} kills ${JSON.stringify(byKind)}, ${reports.reduce((n, r) => n + r.processes, 0)} processes, ${reruns.length} tool calls ran twice (unacknowledged when killed: allowed; none needing approval) ${JSON.stringify(reruns)}`
  console.info(summary)
  expect(problems, `${summary}\n(RXAGENT_CRASH_SEED=${seed} reproduces the kill points)`).toEqual([])
  expect(kills.length, summary).toBeGreaterThanOrEqual(50)
  for (const kind of ['delta', 'tool', 'append', 'approval', 'open'] as const) expect(byKind[kind], `${summary}: no kill ${kind}`).toBeGreaterThan(0)
}

describe('SIGKILL at random points of a durable session', () => {
  it('PGlite: nothing acknowledged is lost, the log decodes, the transcript is valid, no acknowledged tool call runs again, the run finishes', async () => {
    // One database made by a child (PGlite's initdb takes seconds on a busy machine), copied for each chain.
    const template = join(dir, 'pglite-template')
    const maker = startChild(build.script('test/sessions/crash/child.ts'), { mode: 'read', store: { kind: 'pglite', dataDir: template }, executions: join(dir, 'none'), sessionId: 'none' })
    expect(await maker.exited(), maker.describe()).toMatchObject({ code: 0 })
    await crashChains('PGlite', (chain) => {
      const dataDir = join(dir, `pglite-${chain}`)
      cpSync(template, dataDir, { recursive: true })
      return { kind: 'pglite', dataDir }
    })
  }, 400_000)
})

describePostgres('SIGKILL at random points of a durable session on PostgreSQL', (cluster) => {
  it('PostgreSQL: nothing acknowledged is lost, the log decodes, the transcript is valid, no acknowledged tool call runs again, the run finishes', async () => {
    await crashChains('PostgreSQL', async () => ({ kind: 'postgres', connectionString: await cluster().createDatabase() }))
  }, 400_000)
})
