/**
 * Hidden classes that outlive a run.
 *
 * V8 gives the objects a constructor builds a hidden class (a "map") per
 * field layout, reached from the constructor's initial map by transitions that
 * it holds weakly. When a full GC finds no instance of such a class alive — a
 * process between two runs, a server after an idle spell — the maps are
 * collected, and every optimized function that embeds them is thrown away
 * ("deoptimizing … reason: weak objects"); the next run builds new maps,
 * relearns its type feedback and waits for the functions on its hot path to
 * be optimized again. With an asynchronous source and a full GC before each
 * run, that re-warming was most of a 10,000-delta run: TEXT 10k cost 2.6 µs
 * per delta against 0.25 µs in the same process with only minor GCs between
 * runs (bench/scratch probe, `from(asyncGenerator)` source, Node 20).
 *
 * One instance of each class on the per-token path, kept here for the life of
 * the process, keeps its maps — and the optimized code that depends on them —
 * alive. Each holds a few dozen bytes and does nothing.
 *
 * Internal: not exported from the package.
 */

const residents: unknown[] = []

/**
 * Keeps `instance` alive for the life of the process, and with it the hidden
 * classes of its kind (see above). Build it with the constructor the hot path
 * uses, so that it has the same field layout.
 *
 * @returns `instance`.
 */
export function resident<T>(instance: T): T {
  residents.push(instance)
  return instance
}

/** The latest instance kept for each owner (see {@link residentFor}). */
const latestFor = new WeakMap<object, unknown>()

/**
 * Keeps `instance` alive for as long as `owner` lives, in place of the one
 * kept for `owner` before: for hidden classes that come from data rather
 * than from a constructor of ours (a tool's arguments, parsed from the
 * model's JSON and frozen), whose only instances are a run's. Holds one
 * instance per owner, the latest: a value the run that made it handed out
 * anyway (the transcript holds the same object).
 *
 * @returns `instance`.
 */
export function residentFor<T>(owner: object, instance: T): T {
  latestFor.set(owner, instance)
  return instance
}

/**
 * A placeholder for a constructor argument of a resident instance (see
 * {@link resident}): a resident is never used, only kept.
 */
export const unused = undefined as never
