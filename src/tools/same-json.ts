/** Structural equality of JSON-like values (tool-call arguments), without recursion. */

const isPlainObject = (v: unknown): v is Record<string, unknown> => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false
  const proto: unknown = Object.getPrototypeOf(v)
  return proto === Object.prototype || proto === null
}

/**
 * Whether `a` and `b` are the same JSON-like value: primitives by
 * `Object.is`, arrays item by item, plain objects key by key (in any order);
 * any other object (a `Date`, a class instance) only if it is the same one.
 * Iterative, so arguments nested however deep cannot overflow the stack.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  const pending: [unknown, unknown][] = [[a, b]]
  while (pending.length > 0) {
    const [x, y] = pending.pop()!
    if (Object.is(x, y)) continue
    if (Array.isArray(x) && Array.isArray(y)) {
      if (x.length !== y.length) return false
      for (let i = 0; i < x.length; i++) pending.push([x[i], y[i]])
      continue
    }
    if (!isPlainObject(x) || !isPlainObject(y)) return false
    const keys = Object.keys(x)
    if (keys.length !== Object.keys(y).length) return false
    for (const key of keys) {
      if (!Object.prototype.hasOwnProperty.call(y, key)) return false
      pending.push([x[key], y[key]])
    }
  }
  return true
}
