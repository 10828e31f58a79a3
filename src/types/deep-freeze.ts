/**
 * Freezing untrusted data (tool arguments a model wrote, tool result
 * `details`, extension data a server sent) without recursion: such data can
 * be nested deeper than the call stack (14 KB of `[` is 7,000 levels), and a
 * recursive walk over it — this one, or immer's auto-freeze — throws a
 * `RangeError` out of whatever is running, often as an uncaught exception.
 *
 * A frozen value is skipped by immer's auto-freeze, so freezing a value here
 * before it enters an immer draft keeps immer from walking it recursively.
 */

/**
 * How deep parsed tool-call arguments may nest: 64 levels, the arguments
 * object itself being level 1. Deeper arguments are a parse error the model
 * is told about ("its arguments are nested deeper than 64 levels"). Real tool
 * schemas nest a few levels; anything near this is a runaway or hostile
 * output.
 */
export const MAX_ARGUMENT_DEPTH = 64

/**
 * Freezes plain data (objects and arrays) all the way down, iteratively: any
 * depth, no recursion. A node already frozen is not entered again (immer
 * treats frozen values the same way), which also ends cycles.
 */
export function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return
  Object.freeze(value)
  const stack: object[] = [value]
  while (stack.length > 0) {
    const node = stack.pop()!
    const children: readonly unknown[] = Array.isArray(node) ? node : Object.values(node)
    for (const child of children) {
      if (typeof child !== 'object' || child === null || Object.isFrozen(child)) continue
      Object.freeze(child)
      stack.push(child)
    }
  }
}

/**
 * Freezes freshly parsed JSON all the way down if it nests at most
 * `maxDepth` levels (a scalar is level 0, an object or array level 1).
 * Returns `false`, leaving the value partly frozen, when it nests deeper.
 * Recursive, but never deeper than `maxDepth`: this is the walk a parsed
 * value needed anyway (to be frozen), with the depth check folded in.
 */
export function freezeWithin(value: unknown, maxDepth: number): boolean {
  if (typeof value !== 'object' || value === null) return true
  if (maxDepth <= 0) return false
  Object.freeze(value)
  if (Array.isArray(value)) {
    for (const item of value) if (!freezeWithin(item, maxDepth - 1)) return false
  } else {
    for (const key of Object.keys(value)) if (!freezeWithin((value as Record<string, unknown>)[key], maxDepth - 1)) return false
  }
  return true
}
