/**
 * The package as users install it: `npm pack` on a fresh copy of the sources
 * (no dist/), unpacked into a `node_modules` beside its peers, then loaded the
 * ways users load it. One pack for the whole file: it builds, which takes a while.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { execFileSync, spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'

const root = resolve('.')
let dir: string
/** Where the tarball is unpacked: `<dir>/app/node_modules/rxagent`. */
let installed: string
let app: string
let packed: { files: Array<{ path: string }> }

/** Files a fresh clone has: tracked and untracked-but-not-ignored ones (so uncommitted work is packed too). */
function sourceFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: root, encoding: 'utf8' })
  return out.split('\0').filter((file) => file !== '' && existsSync(join(root, file)))
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'rxagent-pack-'))
  const clone = join(dir, 'clone')
  for (const file of sourceFiles()) {
    mkdirSync(dirname(join(clone, file)), { recursive: true })
    cpSync(join(root, file), join(clone, file))
  }
  symlinkSync(join(root, 'node_modules'), join(clone, 'node_modules'), 'dir')
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', dir], { cwd: clone, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  // prepack's own output (tsc) comes before npm's JSON on stdout.
  const json = JSON.parse(out.slice(out.search(/^\[/m))) as Array<{ filename: string; files: Array<{ path: string }> }>
  const [result] = json
  if (result === undefined) throw new Error(`npm pack printed no result: ${out}`)
  packed = result
  app = join(dir, 'app')
  installed = join(app, 'node_modules', 'rxagent')
  mkdirSync(installed, { recursive: true })
  execFileSync('tar', ['-xzf', join(dir, result.filename), '-C', installed, '--strip-components=1'])
  // The peers and dependencies, as a user's install would put them beside the package.
  for (const dependency of ['rxjs', 'tslib', 'io-ts', 'fp-ts', 'immer', 'eventsource-parser', 'partial-json']) {
    symlinkSync(join(root, 'node_modules', dependency), join(app, 'node_modules', dependency), 'dir')
  }
}, 300_000)
afterAll(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

const node = (args: string[]) => spawnSync(process.execPath, args, { cwd: app, encoding: 'utf8' })

describe('npm pack', () => {
  it('ships the build, the license and the sources the maps point at, and no tests', () => {
    const files = packed.files.map((file) => file.path)
    for (const entry of ['src', 'operators', 'marbles', 'src/providers', 'src/sessions', 'src/devtools', 'src/mcp', 'src/dbos']) {
      expect(files).toContain(`dist/${entry}/index.js`)
      expect(files).toContain(`dist/${entry}/index.d.ts`)
    }
    for (const store of ['pglite-store', 'postgres-store']) expect(files).toContain(`dist/src/sessions/${store}.js`)
    expect(files).toContain('LICENSE')
    expect(files.filter((file) => file.startsWith('test/') || file.startsWith('dist/test/') || file.startsWith('dist/examples/'))).toEqual([])
    expect(readFileSync(join(installed, 'LICENSE'), 'utf8')).toMatch(/^MIT License[\s\S]*rxagent contributors/)
  })

  it("every source map's sources resolve inside the package", () => {
    const maps = packed.files.map((file) => file.path).filter((file) => file.endsWith('.map'))
    expect(maps.length).toBeGreaterThan(100)
    const missing: string[] = []
    for (const map of maps) {
      const { sources, sourceRoot } = JSON.parse(readFileSync(join(installed, map), 'utf8')) as { sources: string[]; sourceRoot?: string }
      for (const source of sources) {
        const target = resolve(installed, dirname(map), sourceRoot ?? '', source)
        if (!target.startsWith(installed + '/') || !existsSync(target)) missing.push(`${map} → ${source}`)
      }
    }
    expect(missing).toEqual([])
  })
})

describe('loading the installed package', () => {
  const entries = ['rxagent', 'rxagent/operators', 'rxagent/marbles', 'rxagent/providers', 'rxagent/sessions', 'rxagent/pglite', 'rxagent/postgres', 'rxagent/devtools', 'rxagent/mcp', 'rxagent/dbos']

  it('imports every entry point as ESM', () => {
    const script = `for (const e of ${JSON.stringify(entries)}) { const m = await import(e); console.log(e, Object.keys(m).length) }`
    const run = node(['--input-type=module', '-e', script])
    expect(run.stderr).toBe('')
    expect(run.status).toBe(0)
    for (const entry of entries) expect(run.stdout).toMatch(new RegExp(`^${entry} [1-9]\\d*$`, 'm'))
  })

  it('serves the devtools page from the installed files, and has the rxagent command', async () => {
    const script = `import { serveDevtools } from 'rxagent/devtools'
import { memorySessionStore } from 'rxagent/sessions'
const devtools = await serveDevtools({ store: memorySessionStore() })
for (const path of ['/', '/app.js', '/draw.js', '/style.css']) console.log(path, (await fetch(new URL(path, devtools.url))).status)
await devtools.close()`
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: app, encoding: 'utf8' })
    expect(run.stderr).toBe('')
    expect(run.stdout).toBe('/ 200\n/app.js 200\n/draw.js 200\n/style.css 200\n')
    const bin = (JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { bin: Record<string, string> }).bin.rxagent!
    const help = node([join(installed, bin), 'devtools', '--help'])
    expect(help.status).toBe(0)
    expect(help.stdout).toMatch(/^usage: rxagent devtools/)
    const wrong = node([join(installed, bin), 'devtools', '--store', 'mysql://x'])
    expect(wrong.status).toBe(2)
    expect(wrong.stderr).toMatch(/--store must be pglite:<dir> or postgres/)
    expect(readFileSync(join(installed, bin), 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n/)
  })

  it('the database stores load without their optional peers, and say what to install when opened', () => {
    const script = `const { pgliteSessionStore } = await import('rxagent/pglite')
const { postgresSessionStore } = await import('rxagent/postgres')
for (const open of [() => pgliteSessionStore({ dataDir: 'unused' }), () => postgresSessionStore({ connectionString: 'postgresql://127.0.0.1:1/x' })]) {
  console.log(await open().then(() => 'opened', (e) => e.message))
}`
    const run = node(['--input-type=module', '-e', script])
    expect(run.stderr).toBe('')
    expect(run.stdout).toBe(
      'pgliteSessionStore needs the optional peer dependency @electric-sql/pglite: npm install @electric-sql/pglite\n' +
        'postgresSessionStore needs the optional peer dependency pg: npm install pg\n',
    )
  })

  it('rxagent/mcp without the MCP SDK installed: loads, and says which package to install when used', () => {
    const script = `const { connectMcp } = await import('rxagent/mcp'); await connectMcp({ servers: {} }).then(() => console.log('connected'), (e) => console.log(e.message))`
    const run = node(['--input-type=module', '-e', script])
    expect(run.stderr).toBe('')
    expect(run.stdout).toMatch(/^connectMcp needs the optional peer dependency @modelcontextprotocol\/client: npm install @modelcontextprotocol\/client$/m)
  })

  it('rxagent/dbos without DBOS installed: loads, and says which packages to install when used', () => {
    const script = `const { startWorker, dbosAgentClient } = await import('rxagent/dbos')
for (const start of [() => startWorker({ pg: 'postgresql://127.0.0.1:1/x', agents: [] }), () => dbosAgentClient({ pg: 'postgresql://127.0.0.1:1/x' })]) console.log(await start().then(() => 'started', (e) => e.message))`
    const run = node(['--input-type=module', '-e', script])
    expect(run.stderr).toBe('')
    expect(run.stdout).toBe(
      'startWorker needs the optional peer dependencies @dbos-inc/dbos-sdk and pg: npm install @dbos-inc/dbos-sdk pg\n' +
        'dbosAgentClient needs the optional peer dependencies @dbos-inc/dbos-sdk and pg: npm install @dbos-inc/dbos-sdk pg\n',
    )
  })

  it("require('rxagent') works on Node 20.19+ (require of the ESM build)", () => {
    const script = `for (const e of ${JSON.stringify(entries)}) { const m = require(e); console.log(e, Object.keys(m).length) }
const { agentLoop, defineTool } = require('rxagent'); console.log(typeof agentLoop, typeof defineTool)`
    const run = node(['-e', script])
    expect(run.stderr.replace(/^.*ExperimentalWarning.*\n(.*--trace-warnings.*\n)?/gm, '')).toBe('')
    expect(run.status).toBe(0)
    for (const entry of entries) expect(run.stdout).toMatch(new RegExp(`^${entry} [1-9]\\d*$`, 'm'))
    expect(run.stdout).toMatch(/^function function$/m)
  })
})

describe('the optional-peer entries', () => {
  it('rxagent/otel and rxagent/ag-ui load beside their peer (@opentelemetry/api, @ag-ui/core), ESM and require', () => {
    // Another app, so that the peers do not leak into the checks above (the core entries load without them).
    const withPeers = join(dir, 'app-with-peers')
    mkdirSync(join(withPeers, 'node_modules', '@opentelemetry'), { recursive: true })
    mkdirSync(join(withPeers, 'node_modules', '@ag-ui'), { recursive: true })
    symlinkSync(installed, join(withPeers, 'node_modules', 'rxagent'), 'dir')
    for (const dependency of ['rxjs', 'tslib', 'io-ts', 'fp-ts', 'immer', 'eventsource-parser', 'partial-json', '@opentelemetry/api', '@ag-ui/core']) {
      symlinkSync(join(root, 'node_modules', dependency), join(withPeers, 'node_modules', dependency), 'dir')
    }
    const entries = ['rxagent/otel', 'rxagent/ag-ui']
    const esm = spawnSync(process.execPath, ['--preserve-symlinks', '--input-type=module', '-e', `for (const e of ${JSON.stringify(entries)}) { const m = await import(e); console.log(e, Object.keys(m).length) }`], { cwd: withPeers, encoding: 'utf8' })
    expect(esm.stderr).toBe('')
    for (const entry of entries) expect(esm.stdout).toMatch(new RegExp(`^${entry} [1-9]\\d*$`, 'm'))
    const cjs = spawnSync(process.execPath, ['--preserve-symlinks', '-e', `for (const e of ${JSON.stringify(entries)}) console.log(e, Object.keys(require(e)).length)`], { cwd: withPeers, encoding: 'utf8' })
    expect(cjs.status).toBe(0)
    for (const entry of entries) expect(cjs.stdout).toMatch(new RegExp(`^${entry} [1-9]\\d*$`, 'm'))
  })
})
