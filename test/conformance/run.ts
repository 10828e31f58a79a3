/**
 * `npm run conformance`: replays every file under ../shared/fixtures (when
 * that folder exists) through the matching adapter; one line per file, then
 * `N passed, N failed`. Exits non-zero when any file fails.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { basename, dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { ConformanceSuite } from './types.js'

const here = dirname(fileURLToPath(import.meta.url))
const candidates = [resolve(process.cwd(), '../shared/fixtures'), resolve(here, '../../../../shared/fixtures'), resolve(here, '../../../shared/fixtures')]
const root = process.argv[2] ?? candidates.find((p) => existsSync(p))

const suites: Record<string, () => Promise<ConformanceSuite>> = {
  anthropic: async () => (await import('./anthropic.js')).suite,
  'openai-chat': async () => (await import('./openai-chat.js')).suite,
  'openai-compatible': async () => (await import('./openai-compatible.js')).suite,
  'openai-responses': async () => (await import('./openai-responses.js')).suite,
  google: async () => (await import('./google.js')).suite,
}

function files(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name)
      return statSync(path).isDirectory() ? files(path) : [path]
    })
}

if (root === undefined) {
  console.log('no ../shared/fixtures folder: nothing to check')
  console.log('0 passed, 0 failed')
  process.exit(0)
}

let passed = 0
let failed = 0
for (const path of files(root)) {
  const rel = relative(root, path)
  const folder = rel.split(/[\\/]/)[0] ?? ''
  if (basename(path) === 'SOURCES.md') continue
  const load = suites[folder]
  let verdict
  try {
    verdict = load === undefined ? { ok: false, detail: `no suite for folder '${folder}'` } : await (await load())(path, readFileSync(path, 'utf8'))
    verdict ??= { ok: false, detail: 'not a fixture this suite knows' }
  } catch (error) {
    verdict = { ok: false, detail: `threw: ${error instanceof Error ? error.message : String(error)}` }
  }
  if (verdict.ok) passed++
  else failed++
  console.log(`${verdict.ok ? 'PASS' : 'FAIL'} ${rel} — ${verdict.detail}`)
}
console.log(`${passed} passed, ${failed} failed`)
process.exit(failed === 0 ? 0 : 1)
