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
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) if (!visit(node[i], depth, maxDepth, nodes, depths)) return false
    } else {
      // `for…in` over V8's enum cache rather than an `Object.values` array per object: freezing the 10,016
      // entries of the DURABLE open bench's log 5-11 -> 1.9 ms (medians of 30 after a full GC, 3 alternating rounds).
      // Own properties only, as `Object.values` gave: an inherited enumerable one belongs to someone else.
      for (const key in node) if (hasOwn(node, key) && !visit((node as Record<string, unknown>)[key], depth, maxDepth, nodes, depths)) return false
    }
  }
  return true
}

const hasOwn = (o: object, key: string): boolean => Object.prototype.hasOwnProperty.call(o, key)

/** Freezes `child` and queues it for its own children; `false` if it lies deeper than `maxDepth`. */
function visit(child: unknown, depth: number, maxDepth: number, nodes: object[], depths: number[]): boolean {
  if (typeof child !== 'object' || child === null || Object.isFrozen(child)) return true
  if (depth >= maxDepth) return false
  Object.freeze(child)
  nodes.push(child)
  depths.push(depth + 1)
  return true
}

/**
 * {@link deepFreeze} with a depth limit, for a value `JSON.parse` has just
 * made: nothing in it is frozen or shared yet and it has no cycles, so no
 * node is asked `Object.isFrozen` (a runtime call each), and with a limit of
 * at most {@link MAX_ARGUMENT_DEPTH} levels the walk recurses (as deep as the
 * limit at most) instead of keeping two stacks. A larger limit takes the
 * iterative walk. `false`, the value partly frozen, for a node deeper than
 * `maxDepth`. Once per tool call (its final arguments): TOOLS 200 turns,
 * callgrind (40 warm-up runs, then 4 after two full GCs each, node
 * --single-threaded): 53.11 -> 52.74 M instructions a run.
 */
export function freezeParsed(value: unknown, maxDepth: number): boolean {
  if (maxDepth > MAX_ARGUMENT_DEPTH) return deepFreeze(value, maxDepth)
  if (typeof value !== 'object' || value === null) return true
  return maxDepth >= 1 && freezeFresh(value, 1, maxDepth)
}

/** Freezes `node`, at level `depth`, and what it holds; `false` at a node deeper than `maxDepth`. */
function freezeFresh(node: object, depth: number, maxDepth: number): boolean {
  Object.freeze(node)
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const child: unknown = node[i]
      if (typeof child === 'object' && child !== null && (depth >= maxDepth || !freezeFresh(child, depth + 1, maxDepth))) return false
    }
    return true
  }
  for (const key in node) {
    const child: unknown = (node as Record<string, unknown>)[key]
    // Own properties only (see `deepFreeze`): asked only of an object, as a scalar is not walked.
    if (typeof child === 'object' && child !== null && hasOwn(node, key) && (depth >= maxDepth || !freezeFresh(child, depth + 1, maxDepth))) return false
  }
  return true
}
