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
 *
 * With `maxDepth` (a scalar is level 0, an object or array level 1) it is
 * also the depth check of freshly parsed JSON: it returns `false`, leaving
 * the value partly frozen, as soon as a node lies deeper; this is the walk a
 * parsed value needed anyway (to be frozen), with the check folded in.
 */
export function deepFreeze(value: unknown, maxDepth = Number.POSITIVE_INFINITY): boolean {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return true
  if (maxDepth < 1) return false
  Object.freeze(value)
  // Two parallel stacks rather than a pair per node: no allocation per node.
  const nodes: object[] = [value]
  const depths: number[] = [1]
  while (nodes.length > 0) {
    const node = nodes.pop()!
    const depth = depths.pop()!
    const children: readonly unknown[] = Array.isArray(node) ? node : Object.values(node)
    for (const child of children) {
      if (typeof child !== 'object' || child === null || Object.isFrozen(child)) continue
      if (depth >= maxDepth) return false
      Object.freeze(child)
      nodes.push(child)
      depths.push(depth + 1)
    }
  }
  return true
}
