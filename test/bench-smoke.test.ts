import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

// The benchmark suite at tiny sizes, so that it cannot rot: the package is
// built, every scenario runs in its own worker process for every runtime
// (peers only when bench/ has been installed by `npm run bench`; WIRE only
// when bench/wire/ exists), and every result is checked for correctness by
// the worker (text length, tool results, what the UI reader saw).
describe('npm run bench, at a tiny size', () => {
  it('runs every scenario and prints the tables', () => {
    execFileSync('npm', ['run', 'build'], { stdio: 'pipe' })
    const out = execFileSync(process.execPath, ['bench/run.mjs', '--smoke'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
    const wallCpu = String.raw` \d+\.\d+ / \d+\.\d+ \|`
    expect(out).toMatch(new RegExp(String.raw`\| TEXT 200 deltas \| µs/delta, wall / CPU \|${wallCpu}`))
    expect(out).toMatch(new RegExp(String.raw`\| TEXT 200, rxagent sync source \(extra\) \| µs/delta, wall / CPU \|${wallCpu}`))
    expect(out).toMatch(new RegExp(String.raw`\| TOOLS 3 turns, warm \| ms/turn, wall / CPU \|${wallCpu}`))
    expect(out).toMatch(/\| COLD first 3 tool turns, fresh process \| ms total \| \d/)
    expect(out).toMatch(new RegExp(String.raw`\| LONG 20 msgs \| µs/delta, wall / CPU \|${wallCpu}`))
    expect(out).toMatch(/\| FANOUT 5 runs \| ms total, wall \/ CPU \| \d/)
    // Itself excluded: its required peers rxjs (+ tslib), io-ts, fp-ts and its runtime dependencies immer, eventsource-parser, partial-json (streamed tool arguments); optional peers do not count.
    expect(out).toMatch(/\| COLD dependency closure \| packages \| 7 /)
    expect(out).toMatch(new RegExp(String.raw`\| AGENT TEXT 200 deltas \| µs/delta, wall / CPU \|${wallCpu}${wallCpu}`))
    expect(out).toMatch(new RegExp(String.raw`\| AGENT TOOLS 3 turns \| ms/turn, wall / CPU \|${wallCpu}${wallCpu}`))
    expect(out).toMatch(/\| AGENT LONG first delta \| ms \| \d/)
    expect(out).toMatch(new RegExp(String.raw`\| AGENT restored 200 msgs, one short run \| ms/run, wall / CPU \|${wallCpu}`))
    // DURABLE: in-memory, memory store, PGlite, and PostgreSQL when its binaries are installed (else skipped, saying why).
    const postgresSkipped = /skipped: durable-tools-postgres: no PostgreSQL (?:cluster|store)/.test(out)
    const postgres = postgresSkipped ? String.raw` — \|` : wallCpu
    expect(out).toMatch(new RegExp(String.raw`\| DURABLE TOOLS 3 turns \| ms/turn, wall / CPU \|${wallCpu}${wallCpu}${wallCpu}${postgres}`))
    expect(out).toMatch(new RegExp(String.raw`\| DURABLE TEXT 200 deltas \| µs/delta, wall / CPU \|${wallCpu}${wallCpu}${wallCpu}${postgres}`))
    expect(out).toMatch(new RegExp(String.raw`\| DURABLE open a 200-entry session \| ms, wall / CPU \|${wallCpu}${wallCpu}${wallCpu}${postgres}`))
    if (existsSync('bench/wire/worker.mjs')) expect(out).toMatch(/\| WIRE Anthropic text/)
    else expect(out).toContain('WIRE rows skipped: bench/wire/worker.mjs does not exist')
    expect(out).toMatch(new RegExp(String.raw`\| MCP tool call, local stdio server \(5 sequential calls\) \| ms/call, wall / CPU \| \d+\.\d+ / \d+\.\d+ \| \d+\.\d+ / \d+\.\d+ \|`))
    // SCALE: rxagent/dbos on one worker process and one run at a time (a throwaway PostgreSQL cluster), or skipped saying why.
    if (/SCALE rows skipped: /.test(out)) expect(out).toMatch(/SCALE rows skipped: (?:no PostgreSQL|could not start|no @dbos-inc)/)
    else {
      expect(out).toMatch(/\| SCALE 6 runs over 3 sessions, 4 runs per worker \| model turns\/s \(a run: 2 turns \+ 1 tool call\) \| \d+\.\d \|/)
      expect(out).toMatch(/\| SCALE DBOS overhead per step \| ms, \(DBOS − plain\) \/ 3 \| — \| -?\d+\.\d \|/)
    }
    expect(out).toContain('smoke run: every scenario ran and produced the expected result.')
  }, 480_000)
})
