/**
 * Facts about a transcript (its messages checked, its token sums, its
 * tool-call bookkeeping) kept so that a transcript seen again, or one that
 * extends a transcript seen before, is walked over its new messages only.
 *
 * A conversation grows by appending: each run and each turn sees the
 * previous transcript plus a few messages. Walking the whole history every
 * time costs in proportion to it, and walking a frozen array is slow in V8
 * (its keyed loads leave the fast path: about 8 ns per element, 0.5 ms for
 * 60,000 messages, before anything is done with them). A memo is found, in
 * this order:
 *
 * 1. by the array itself, when it is frozen (it cannot change);
 * 2. by its lineage: transcripts the loop builds by appending share a
 *    backing array (`lineageOf`), so one is a prefix of the other and facts
 *    about the first `length` messages hold for all of them. A frozen
 *    transcript recorded here starts a lineage of its own, which a frozen
 *    transcript joins when step 3 proves it extends the longest one, or when
 *    the code that built it by appending says so ({@link noteAppended});
 * 3. by the last transcript recorded that starts with the same first
 *    message object, when the new one starts with all of its message
 *    objects, or is a prefix of it (the same history restored into a second
 *    Agent, after the first one's runs grew it): the one walk left, an
 *    identity comparison without property reads. Keyed by the first message,
 *    so that other lists checked in between (a prompt, another conversation)
 *    do not displace it. What step 3 finds is then kept for the new
 *    transcript by steps 1 and 2, and the comparison of two frozen arrays is
 *    remembered for the other memos: a transcript is compared once, not at
 *    every lookup of every memo. A second Agent restored from the same 60,000
 *    messages compared its history at every run's decoding and check, and
 *    walked it whole when the first Agent's longer transcript was the one
 *    remembered: one short prompt took 9.3 to 11.3 ms (median of 100 Agents
 *    on the same message objects), now 2.1 to 2.2 ms, as on fresh ones.
 *
 * Steps 1 and 2 read nothing of the transcript.
 *
 * A fact holds for a message object's lifetime: callers record only what
 * cannot change (a check: frozen messages only; token estimates: the
 * per-message rule of `cachedEstimate`, transcripts being immutable).
 *
 * Internal: not exported from the package.
 */
import { lineageOf } from './growing-transcript.js'
import type { AgentMessage } from './message.js'

/**
 * Frozen transcripts proven, by the identity comparison of step 3, to start
 * with all of the one before: a lineage of their own, so that the other
 * memos place them without comparing again. `tip` is the longest one's length.
 */
interface ProvenLineage {
  tip: number
}
const proven = new WeakMap<readonly AgentMessage[], ProvenLineage>()

/** The lineage of `messages`: the loop's, else one proven here; with `start`, a frozen transcript without one starts its own. */
function lineage(messages: readonly AgentMessage[], start = false): object | undefined {
  const line = lineageOf(messages) ?? proven.get(messages)
  if (line !== undefined || !start || !Object.isFrozen(messages)) return line
  const chain: ProvenLineage = { tip: messages.length }
  proven.set(messages, chain)
  return chain
}

/**
 * Pairs of frozen transcripts found to agree on every message both hold (one
 * is a prefix of the other), each kept under the one compared last: the
 * memos find the same pair in turn (a restored transcript is decoded,
 * checked and estimated), and compare it once.
 */
const agreeing = new WeakMap<readonly AgentMessage[], readonly AgentMessage[]>()

/** Whether `a` and `b` hold the same message objects up to the shorter one's length. */
function sharePrefix(a: readonly AgentMessage[], b: readonly AgentMessage[]): boolean {
  if (agreeing.get(b) === a || agreeing.get(a) === b) return true
  for (let i = Math.min(a.length, b.length) - 1; i >= 0; i--) if (a[i] !== b[i]) return false
  if (Object.isFrozen(a) && Object.isFrozen(b)) agreeing.set(b, a)
  return true
}

/** `messages` was found to start with all of `seen`: when both are frozen and `seen` is the longest of its lineage, `messages` joins it. */
function join(seen: readonly AgentMessage[], messages: readonly AgentMessage[]): void {
  if (!Object.isFrozen(seen) || !Object.isFrozen(messages) || lineageOf(seen) !== undefined || lineage(messages) !== undefined) return
  let chain = proven.get(seen)
  if (chain === undefined) {
    chain = { tip: seen.length }
    proven.set(seen, chain)
  }
  if (chain.tip !== seen.length) return
  chain.tip = messages.length
  proven.set(messages, chain)
}

/**
 * Tells the memos that `next` starts with every message of `prev`, as a
 * transcript built by appending to `prev` does: they then place `next`
 * without comparing it message by message (a lineage, step 2). For code that
 * builds transcripts outside the loop, such as an Agent's state. Does
 * nothing unless both are frozen; the caller vouches for the prefix.
 */
export function noteAppended(prev: readonly AgentMessage[], next: readonly AgentMessage[]): void {
  if (next.length >= prev.length) join(prev, next)
}

/** Facts about the first `length` messages of a transcript. */
export interface PrefixFacts {
  readonly length: number
}

/** Facts found for a transcript: they cover its first `facts.length` messages (at most all of them). */
export class TranscriptMemo<F extends PrefixFacts> {
  private readonly memo = new WeakMap<object, F>()
  /** The last transcript recorded, by its first message. */
  private readonly byFirst = new WeakMap<object, { readonly messages: readonly AgentMessage[]; readonly facts: F }>()

  /**
   * The facts recorded for `messages` or for a prefix of it; `undefined` when
   * none is known. The facts may cover more than `messages` (a longer
   * transcript of the same lineage, or one that `messages` is a prefix of):
   * read them up to `messages.length`.
   */
  find(messages: readonly AgentMessage[]): F | undefined {
    if (Object.isFrozen(messages)) {
      const exact = this.memo.get(messages)
      if (exact !== undefined) return exact
    }
    const line = lineage(messages)
    if (line !== undefined) {
      const facts = this.memo.get(line)
      if (facts !== undefined) return facts
    }
    const first: unknown = messages[0]
    const last = typeof first === 'object' && first !== null ? this.byFirst.get(first) : undefined
    if (last === undefined || !sharePrefix(last.messages, messages)) return undefined
    const { facts } = last
    if (last.messages.length <= messages.length) join(last.messages, messages)
    // Kept for `messages`, so that it is not compared again: by itself when frozen (facts may
    // then cover more than it, as a lineage's do), by its lineage when they cover no more.
    if (Object.isFrozen(messages)) this.memo.set(messages, facts)
    if (line !== undefined && facts.length <= messages.length) this.memo.set(line, facts)
    return facts
  }

  /** The facts recorded for the lineage `line` (a growing transcript's backing): they cover a prefix of it. */
  findLineage(line: object): F | undefined {
    return this.memo.get(line)
  }

  /** Records `facts` about the first `facts.length` messages of the lineage `line` (a lazy transcript's, `lazy-transcript.ts`). */
  recordLineage(line: object, facts: F): void {
    if ((this.memo.get(line)?.length ?? -1) < facts.length) this.memo.set(line, facts)
  }

  /** Records `facts` about `messages` (whose first `facts.length` they cover). */
  record(messages: readonly AgentMessage[], facts: F): void {
    const frozen = Object.isFrozen(messages)
    if (frozen && facts.length === messages.length) this.memo.set(messages, facts)
    // A frozen transcript gets a lineage of its own, which those that extend it can join.
    const line = lineage(messages, facts.length === messages.length)
    if (line !== undefined && (this.memo.get(line)?.length ?? -1) < facts.length) this.memo.set(line, facts)
    const first: unknown = messages[0]
    if (typeof first !== 'object' || first === null || facts.length === 0) return
    // The caller's array may change later: the comparison is against a copy of what was checked.
    const checked = facts.length === messages.length && frozen ? messages : messages.slice(0, facts.length)
    this.byFirst.set(first, { messages: checked, facts })
  }
}
