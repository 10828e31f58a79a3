/**
 * Transcripts that grow by appending, as frozen arrays.
 *
 * Every state of a run holds the transcript as it was then, a frozen array.
 * Copying a frozen array is slow in V8 (its copy builtins leave their fast
 * path), and a spread over-allocates about threefold. So the transcripts a run
 * builds share one plain backing array that only grows: each snapshot is an
 * exact-size copy of a prefix of it, made with the fast plain-array `slice`,
 * and an append to the latest snapshot is a `push` plus that copy. Appending
 * to an older snapshot (a branch) starts a new backing array.
 */
import type { AgentMessage } from './message.js'

/** The plain array transcripts of one lineage are prefixes of. Internal (see `lazy-transcript.ts`). */
export interface Backing {
  readonly items: AgentMessage[]
  /** Index of the first custom message in `items` (Infinity if none). */
  firstCustom: number
  /** The last snapshot taken, handed again to a holder asking for the same length. */
  latest: readonly AgentMessage[] | undefined
  /** The last lazy transcript made on it (`lazy-transcript.ts`), shared the same way. */
  tip: object | undefined
}

/**
 * A backing, every field set from the start: one hidden class for all of them. Built
 * `{ items, firstCustom }` and given `latest`, then (from LAZY_FROM messages on) `tip`, later,
 * a backing went through three classes, and the last one, reached only by a run's appends
 * to a long transcript, had no instance left after a full GC between two runs (a restored
 * Agent holds a backing without `tip`): `grown`'s optimized code was thrown away for weak
 * objects and compiled again (AGENT restored 60k, 40 warm-up runs, then runs 2-9 each after
 * a full GC, `--trace-opt --trace-deopt`: weak-objects deopts 7-8 -> 0, compilations of
 * `grown` 5-7 -> 0). See also the resident lazy states (`resident-states.ts`).
 */
const newBacking = (items: AgentMessage[], firstCustom: number): Backing => ({ items, firstCustom, latest: undefined, tip: undefined })

const BACKING = Symbol('rxagent.transcriptBacking')

type WithBacking = readonly AgentMessage[] & { readonly [BACKING]?: Backing }

/** The backing array `messages` is a prefix of, if it was built here. */
export const backingOf = (messages: readonly AgentMessage[]): Backing | undefined => (messages as WithBacking)[BACKING]

/**
 * An opaque key shared by every transcript built here on the same backing
 * array, or `undefined`. Transcripts with the same lineage are prefixes of
 * one another (the backing only grows), so facts computed over a prefix of
 * one (token sums, checks) hold for every other of its lineage up to that
 * length: see `src/types/transcript-memo.ts`.
 */
export const lineageOf = (messages: readonly AgentMessage[]): object | undefined => backingOf(messages)

/**
 * A new empty transcript with a backing of its own. Holders that append the
 * same messages to it (a run's loop and its Agent's state) then share their
 * snapshots, as they do on any transcript built here; appended to a plain
 * empty array, each would start a backing of its own and copy the whole
 * transcript at every append (an Agent's first run: four copies per tool
 * turn instead of two). Its own backing, not a shared constant's: the
 * backing holds every message appended to it.
 */
export function emptyTranscript(): readonly AgentMessage[] {
  return snapshotOf(newBacking([], Number.POSITIVE_INFINITY), 0)
}

/**
 * A transcript from outside the runtime as one built here: a frozen copy on a
 * backing of its own, whose first custom message the caller found at
 * `firstCustom` (Infinity if none) on a walk it made anyway. Appending to it
 * then copies nothing more and scans nothing (see {@link grown}). `messages`
 * itself when it was built here.
 */
export function adoptedTranscript(messages: readonly AgentMessage[], firstCustom: number): readonly AgentMessage[] {
  if (backingOf(messages) !== undefined) return messages
  return snapshotOf(newBacking([...messages], firstCustom), messages.length)
}

/** `messages` followed by `more`, frozen; `messages` itself is untouched. */
export function appendMessages(messages: readonly AgentMessage[], more: readonly AgentMessage[]): readonly AgentMessage[] {
  if (more.length === 0) return messages
  return snapshotOf(grown(backingOf(messages), messages, messages.length, more), messages.length + more.length)
}

/**
 * A backing whose first `length + more.length` items are the first `length`
 * messages of `backing` (or of `messages`, when it has none) followed by
 * `more`: `backing` itself when another holder appended exactly `more`
 * already or when `length` is its tip (a `push`), else a new one.
 */
export function grown(backing: Backing | undefined, messages: readonly AgentMessage[] | undefined, length: number, more: readonly AgentMessage[]): Backing {
  // Another holder of this backing (the loop, the Agent's state) appended exactly `more` already: share it.
  if (backing !== undefined && backing.items.length >= length + more.length && startsWith(backing.items, length, more)) return backing
  if (backing === undefined || backing.items.length !== length) {
    // The plain backing's own copy when there is one (a frozen array's copy is slow).
    const items = backing !== undefined ? backing.items.slice(0, length) : [...messages!]
    backing = newBacking(items, firstCustomIn(items))
  }
  for (const m of more) {
    if (m.role === 'custom' && backing.firstCustom === Number.POSITIVE_INFINITY) backing.firstCustom = backing.items.length
    backing.items.push(m)
  }
  return backing
}

/**
 * The index of the first custom message (Infinity if none). A loop, not `findIndex` with an arrow:
 * after a full garbage collection a run's fresh arrow ran unoptimized for most of a long
 * transcript (5,000 messages: 0.35–0.6 ms against 0.02–0.04 ms for this loop).
 */
function firstCustomIn(items: readonly AgentMessage[]): number {
  for (let i = 0; i < items.length; i++) if (items[i]!.role === 'custom') return i
  return Number.POSITIVE_INFINITY
}

/** The first `length` items of `backing`, frozen, knowing their backing. */
export function snapshotOf(backing: Backing, length: number): readonly AgentMessage[] {
  // Frozen and the same prefix: two holders appending the same messages (the loop, the Agent's state) share one copy.
  if (backing.latest?.length === length) return backing.latest
  const snapshot = backing.items.slice(0, length)
  // Not enumerable: invisible to iteration, spreads, JSON and deep equality.
  Object.defineProperty(snapshot, BACKING, { value: backing })
  backing.latest = Object.freeze(snapshot)
  return backing.latest
}

/** Whether `items` holds `more` from `at` on. */
function startsWith(items: readonly AgentMessage[], at: number, more: readonly AgentMessage[]): boolean {
  for (let i = 0; i < more.length; i++) if (items[at + i] !== more[i]) return false
  return true
}

/** Frozen lists known to hold no custom message without being built here (a window's cut of such a transcript). */
const customFree = new WeakSet<readonly AgentMessage[]>()

/**
 * Whether `messages` is known, in O(1), to hold no custom message: built by
 * {@link appendMessages} without one, or noted by {@link noteNoCustomMessages}.
 * `false` means "not known", not "has one".
 */
export function knownNoCustomMessages(messages: readonly AgentMessage[]): boolean {
  const backing = backingOf(messages)
  return backing !== undefined ? backing.firstCustom >= messages.length : customFree.has(messages)
}

/**
 * Notes that `messages`, a frozen list the caller built from messages it
 * knows are not custom, holds none: {@link hasNoCustomMessages} then answers
 * in O(1). Ignored for a list that is not frozen (it could change).
 */
export function noteNoCustomMessages(messages: readonly AgentMessage[]): void {
  if (Object.isFrozen(messages)) customFree.add(messages)
}

/**
 * Whether `messages` holds no custom message: O(1) for transcripts built by
 * {@link appendMessages} (or noted, see {@link noteNoCustomMessages}), a scan
 * otherwise. Converting a transcript for the model needs no copy when this holds.
 */
export function hasNoCustomMessages(messages: readonly AgentMessage[]): boolean {
  if (knownNoCustomMessages(messages)) return true
  if (backingOf(messages) !== undefined) return false
  for (let i = 0; i < messages.length; i++) if (messages[i]!.role === 'custom') return false
  return true
}

/** `messages.slice(start)`, without the slow path V8 takes for frozen arrays. */
export function messagesFrom(messages: readonly AgentMessage[], start: number): readonly AgentMessage[] {
  const backing = backingOf(messages)
  if (backing !== undefined) return backing.items.slice(start, messages.length)
  const out: AgentMessage[] = []
  for (let i = start; i < messages.length; i++) out.push(messages[i]!)
  return out
}
