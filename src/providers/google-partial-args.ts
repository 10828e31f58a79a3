/**
 * Function-call arguments that Gemini streams as `partialArgs`: each entry
 * sets one JSON path (`$.a.b[0]`) to a value, and a string may continue over
 * several entries (`willContinue`). The call's arguments are rebuilt here
 * until its last part.
 */
import { protocolError } from './errors.js'
import { GOOGLE } from './google-errors.js'
import { isRecord, stringOf, type Json } from './json.js'

type PathKey = string | number

/** `$.a.b[0]['c d']` → `['a', 'b', 0, 'c d']`; `undefined` when it is not such a path. */
export function parseGoogleJsonPath(path: string): PathKey[] | undefined {
  if (!path.startsWith('$')) return undefined
  const keys: PathKey[] = []
  let i = 1
  while (i < path.length) {
    const rest = path.slice(i)
    const dotted = /^\.([^.[\]]+)/.exec(rest)
    const index = dotted === null ? /^\[(\d+)\]/.exec(rest) : null
    const quoted = dotted === null && index === null ? /^\[(['"])((?:\\.|(?!\1)[^\\])*)\1\]/.exec(rest) : null
    if (dotted !== null) keys.push(dotted[1]!)
    else if (index !== null) keys.push(Number(index[1]))
    else if (quoted !== null) keys.push(quoted[2]!.replace(/\\(.)/g, '$1'))
    else return undefined
    i += (dotted ?? index ?? quoted)![0].length
  }
  return keys
}

/** Sets `key` as own data even when it is `__proto__`: arguments are data. */
function put(target: Record<PathKey, unknown>, key: PathKey, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
}

/** The value fields of a partial argument (`google.protobuf.Value`'s), in the order they are looked for. */
const valueKeys = ['stringValue', 'numberValue', 'boolValue', 'nullValue', 'structValue', 'listValue'] as const

/** A function call whose arguments arrive as `partialArgs`, until its last part. */
export class StreamingCall {
  readonly args: Json
  /** Paths whose string value continues in the next partial argument. */
  private readonly continuing = new Set<string>()
  signature: string | undefined

  constructor(
    readonly id: string,
    readonly name: string,
    args: unknown,
    signature: string | undefined,
  ) {
    this.args = isRecord(args) ? structuredClone(args) : {}
    this.signature = signature
  }

  apply(partial: unknown): void {
    if (!isRecord(partial)) throw protocolError(GOOGLE, `a partial function-call argument is not an object`)
    const path = stringOf(partial['jsonPath'])
    const keys = path === undefined ? undefined : parseGoogleJsonPath(path)
    if (path === undefined || keys === undefined) throw protocolError(GOOGLE, `a partial argument of '${this.name}' has an unreadable jsonPath: ${JSON.stringify(partial['jsonPath'])}`)
    const valueKey = valueKeys.find((k) => Object.hasOwn(partial, k)) ?? Object.keys(partial).find((k) => k.endsWith('Value'))
    // An entry with no value adds nothing (the API sends none, but a missing value must not become `undefined`).
    if (valueKey === undefined) return
    const raw = partial[valueKey]
    const value = valueKey === 'nullValue' ? null : raw
    const append = valueKey === 'stringValue' && this.continuing.has(path)
    if (valueKey === 'stringValue' && partial['willContinue'] === true) this.continuing.add(path)
    else this.continuing.delete(path)
    this.set(keys, value, append)
  }

  private set(keys: readonly PathKey[], value: unknown, append: boolean): void {
    if (keys.length === 0) {
      if (isRecord(value)) for (const [k, v] of Object.entries(value)) put(this.args, k, v)
      return
    }
    let node = this.args as Record<PathKey, unknown>
    for (let i = 0; i < keys.length - 1; i++) {
      const key = keys[i]!
      let child = Object.hasOwn(node, key) ? node[key] : undefined
      if (typeof child !== 'object' || child === null) {
        child = typeof keys[i + 1] === 'number' ? [] : {}
        put(node, key, child)
      }
      node = child as Record<PathKey, unknown>
    }
    const last = keys[keys.length - 1]!
    const previous = Object.hasOwn(node, last) ? node[last] : undefined
    put(node, last, append && typeof previous === 'string' && typeof value === 'string' ? previous + value : value)
  }
}
