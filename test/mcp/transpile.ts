/**
 * The sources as plain JavaScript for child processes the tests start (Node 20
 * cannot run TypeScript): each file of `src`, `operators` and `marbles`
 * transpiled on its own, no type checking (tsc does that), into
 * node_modules/.cache so that bare imports resolve to this checkout's packages.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..')

function* tsFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) yield* tsFiles(path)
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) yield path
  }
}

/** Transpiles the sources; `dir` holds `src/`, `operators/`, `marbles/`; `remove()` deletes it. */
export function transpiledSources(): { readonly dir: string; remove(): void } {
  const out = join(root, 'node_modules', '.cache', `rxagent-test-${process.pid}`)
  for (const dir of ['src', 'operators', 'marbles']) {
    for (const file of tsFiles(join(root, dir))) {
      const js = ts.transpileModule(readFileSync(file, 'utf8'), {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false },
        fileName: file,
      }).outputText
      const target = join(out, relative(root, file)).replace(/\.ts$/, '.js')
      mkdirSync(dirname(target), { recursive: true })
      writeFileSync(target, js)
    }
  }
  return { dir: out, remove: () => rmSync(out, { recursive: true, force: true }) }
}
