/**
 * Child processes for tests that must kill a real process (SIGKILL) or run
 * several at once: their TypeScript is turned into JavaScript here, without
 * `dist/` (another suite runs `npm run build`, which deletes `dist/` while
 * this one runs) and without a loader such as tsx (not a dependency).
 *
 * Every `.ts` file of the library (`src`, `marbles`, `operators`) and of the
 * given test directories is transpiled file by file with TypeScript's
 * `transpileModule` (the project compiles with `isolatedModules` and
 * `verbatimModuleSyntax`, so a file's JavaScript does not depend on other
 * files: no type-checking is needed here; `npm test` type-checks everything
 * first) into a fresh temporary directory with the repository's layout, a
 * `package.json` saying `"type": "module"` and a link to the repository's
 * `node_modules`. Nothing in the working tree is written.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import ts from 'typescript'

/** A transpiled copy of the repository's TypeScript; `remove()` deletes it. */
export interface ChildBuild {
  /** The temporary directory (the repository's root, transpiled). */
  readonly dir: string
  /** The compiled path of a repository file: `script('test/sessions/crash/child.ts')` → `<dir>/test/sessions/crash/child.js`. */
  script(path: string): string
  remove(): void
}

const LIBRARY = ['src', 'marbles', 'operators']

function tsFiles(root: string, dir: string): string[] {
  const out: string[] = []
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...tsFiles(root, path))
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') && !entry.name.endsWith('.test.ts')) out.push(path)
  }
  return out
}

/**
 * Transpiles the library and `testDirs` (repository-relative directories,
 * e.g. `test/sessions/crash`) into a fresh temporary directory.
 *
 * @throws Error listing the files whose transpilation reported syntax errors.
 */
export function buildChildScripts(testDirs: readonly string[], root = resolve('.')): ChildBuild {
  const dir = mkdtempSync(join(tmpdir(), 'rxagent-child-'))
  try {
    const compilerOptions: ts.CompilerOptions = {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      verbatimModuleSyntax: true,
      inlineSourceMap: true,
      inlineSources: true,
    }
    const problems: string[] = []
    for (const file of [...LIBRARY, ...testDirs].flatMap((d) => tsFiles(root, d))) {
      const output = ts.transpileModule(readFileSync(join(root, file), 'utf8'), { compilerOptions, fileName: join(root, file), reportDiagnostics: true })
      for (const d of output.diagnostics ?? []) problems.push(`${file}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`)
      const target = join(dir, file.replace(/\.ts$/, '.js'))
      mkdirSync(dirname(target), { recursive: true })
      writeFileSync(target, output.outputText)
    }
    if (problems.length > 0) throw new Error(`transpiling the child scripts failed:\n${problems.join('\n')}`)
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }))
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir')
  } catch (error) {
    rmSync(dir, { recursive: true, force: true })
    throw error
  }
  return {
    dir,
    script(path) {
      const target = join(dir, path.replace(/\.ts$/, '.js'))
      if (!existsSync(target)) throw new Error(`no transpiled script for '${path}' (looked for ${relative(root, target)} in ${dir})`)
      return target
    },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  }
}
