import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'

// The benchmark suite at tiny sizes, so that it cannot rot: the package is
// built, every scenario runs in its own worker process for every runtime
// (peers only when bench/ has been installed by `npm run bench`), and every
// result is checked for correctness by the worker.
describe('npm run bench, at a tiny size', () => {
  it('runs every scenario and prints the table', () => {
    execFileSync('npm', ['run', 'build'], { stdio: 'pipe' })
    const out = execFileSync(process.execPath, ['bench/run.mjs', '--smoke'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
    expect(out).toMatch(/\| TOOLS 3 turns \| ms\/turn \| \d/)
    expect(out).toMatch(/\| LONG 20 msgs \| µs\/delta \| \d/)
    expect(out).toMatch(/\| FANOUT 5 runs \| ms total \| \d/)
    expect(out).toMatch(/\| COLD dependency closure \| packages \| 6 /)
    expect(out).toContain('smoke run: every scenario ran and produced the expected result.')
  }, 120_000)
})
