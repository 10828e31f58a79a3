/**
 * Node module hooks that run this repository's TypeScript sources in a child
 * process without a build: `./x.js` resolves to `./x.ts` when only the `.ts`
 * exists, and `.ts` files are transpiled (types dropped, nothing checked:
 * `npm run typecheck` does that). Registered by ts-register.mjs:
 *
 *   node --import ./test/support/ts-register.mjs test/sessions/children/x.ts
 */
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

export async function resolve(specifier, context, next) {
  if (specifier.endsWith('.js') && /^(\.{1,2}\/|\/|file:)/.test(specifier) && context.parentURL?.startsWith('file:')) {
    const url = new URL(specifier, context.parentURL)
    const source = new URL(url.href.replace(/\.js$/, '.ts'))
    if (!existsSync(fileURLToPath(url)) && existsSync(fileURLToPath(source))) return { url: source.href, shortCircuit: true }
  }
  return next(specifier, context)
}

export async function load(url, context, next) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return next(url, context)
  const fileName = fileURLToPath(url)
  const { outputText } = ts.transpileModule(await readFile(fileName, 'utf8'), {
    fileName,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, sourceMap: false, inlineSourceMap: true, verbatimModuleSyntax: true },
  })
  return { format: 'module', source: outputText, shortCircuit: true }
}
