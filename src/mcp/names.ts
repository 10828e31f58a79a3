/**
 * Tool names as providers accept them (`^[a-zA-Z0-9_-]{1,64}$`), from MCP
 * tool names, which may hold any character and any length.
 *
 * - Each character outside `[a-zA-Z0-9_-]` becomes `_`.
 * - With a prefix (the default), the name is `<server>__<tool>`.
 * - A name longer than 64 is cut to 55 and ends with `_` and 8 hex digits of
 *   a hash of the whole name, so that two long names stay apart.
 * - Names still equal after all that (two tools whose names differ only in
 *   replaced characters) get `_2`, `_3`… in listing order, servers in the
 *   order they were configured.
 */
import { createHash } from 'node:crypto'

const MAX = 64
const UNSAFE = /[^a-zA-Z0-9_-]/g

/** `name` with every character providers reject replaced by `_` (`_` alone for an empty name). */
export const sanitizeName = (name: string): string => (name.length === 0 ? '_' : name.replace(UNSAFE, '_'))

/** `name` cut to 64 characters, ending with a hash of the whole name when it was longer. */
export function fitName(name: string): string {
  if (name.length <= MAX) return name
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8)
  return `${name.slice(0, MAX - 9)}_${hash}`
}

/** The provider-safe name of `tool` from `server`, with or without the server prefix. */
export const toolNameFor = (server: string, tool: string, prefix: boolean): string =>
  fitName(prefix ? `${sanitizeName(server)}__${sanitizeName(tool)}` : sanitizeName(tool))

/**
 * Makes every name in `names` unique: the first keeps its name, later ones get
 * `_2`, `_3`… (cut to fit). Returns the names in the same order.
 */
export function uniqueNames(names: readonly string[]): readonly string[] {
  const taken = new Set<string>()
  return names.map((name) => {
    let candidate = name
    for (let n = 2; taken.has(candidate); n++) {
      const suffix = `_${n}`
      candidate = `${name.slice(0, MAX - suffix.length)}${suffix}`
    }
    taken.add(candidate)
    return candidate
  })
}
