/**
 * Paths of argument problems, written the way io-ts decode errors write them
 * (`range.start`, `items[2].path`, `(root)`), whichever validator found the
 * problem: the model reads one format.
 */

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/

/**
 * `keys` as a path into `value`: a key is an array index (`[2]`) when the
 * value it indexes is an array, a property (`.name`) when it is an identifier,
 * else a quoted key (`["a b"]`). `(root)` for no keys.
 */
export function formatPath(value: unknown, keys: readonly PropertyKey[]): string {
  let path = ''
  let at: unknown = value
  for (const key of keys) {
    const name = typeof key === 'symbol' ? key.toString() : String(key)
    if (Array.isArray(at) && /^\d+$/.test(name)) path += `[${name}]`
    else if (typeof key === 'string' && IDENTIFIER.test(key)) path += path === '' ? key : `.${key}`
    else path += `[${typeof key === 'symbol' ? name : JSON.stringify(name)}]`
    at = typeof at === 'object' && at !== null && Object.hasOwn(at, key) ? (at as Record<PropertyKey, unknown>)[key] : undefined
  }
  return path === '' ? '(root)' : path
}

/** The keys of a JSON Pointer (`/range/start`, with `~1` for `/` and `~0` for `~`), as Ajv's `instancePath` gives them. */
export function pointerKeys(pointer: string): string[] {
  if (pointer === '') return []
  return pointer
    .slice(1)
    .split('/')
    .map((key) => key.replace(/~1/g, '/').replace(/~0/g, '~'))
}
