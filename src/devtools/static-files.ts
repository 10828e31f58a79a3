/**
 * The page's files (`static/`: HTML, one script, one stylesheet; no build
 * step, nothing fetched from elsewhere: the page works offline). They ship
 * in the package under `src/devtools/static/`; read once when a server starts.
 */
import { readFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** A file the server answers with. */
export interface StaticFile {
  readonly type: string
  readonly body: Buffer
}

const FILES: Readonly<Record<string, string>> = {
  '/': 'index.html',
  '/app.js': 'app.js',
  '/draw.js': 'draw.js',
  '/style.css': 'style.css',
}

const TYPES: Readonly<Record<string, string>> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
}

/** Where `static/` is: beside this module when run from the sources, under `src/` when run from `dist/`. */
function staticDir(): string {
  const candidates = [new URL('./static/', import.meta.url), new URL('../../../src/devtools/static/', import.meta.url)]
  for (const url of candidates) {
    const dir = fileURLToPath(url)
    if (existsSync(`${dir}index.html`)) return dir
  }
  throw new Error(`serveDevtools: the page's files are missing (looked in ${candidates.map((u) => fileURLToPath(u)).join(' and ')}); reinstall rxagent`)
}

/** Reads the page's files: URL path → file. */
export async function loadStaticFiles(): Promise<ReadonlyMap<string, StaticFile>> {
  const dir = staticDir()
  const files = new Map<string, StaticFile>()
  for (const [path, name] of Object.entries(FILES)) {
    files.set(path, { type: TYPES[name.split('.').pop()!]!, body: await readFile(`${dir}${name}`) })
  }
  return files
}
