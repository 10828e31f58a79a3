/**
 * Running token totals of a transcript, kept from turn to turn: what a
 * window needs to decide its cut without estimating the history again.
 */
import type { AgentMessage } from '../types/message.js'
import { TranscriptMemo, type PrefixFacts } from '../types/transcript-memo.js'
import type { EstimateTokens } from './estimate-tokens.js'
import type { Transcript } from '../types/lazy-transcript.js'

/** Prefix sums: `sums[i]` is the tokens of the first `i` messages, valid for `i ≤ length`. */
export interface TokenSums extends PrefixFacts {
  readonly sums: readonly number[]
}

/**
 * The prefix sums of `estimate` over a transcript, memoized (see
 * `TranscriptMemo`): a transcript seen before costs nothing, one that
 * extends it costs its new messages. `estimate` should be cached per message
 * (`cachedEstimate`) so that a transcript the memo cannot place costs one
 * lookup per message. Like that cache, the sums take a message object to
 * keep its estimate for its lifetime (transcripts are immutable).
 *
 * Sums are added in transcript order; with an `estimate` returning integers
 * (the default does) they are exact.
 */
export function tokenSums(estimate: EstimateTokens): TokenSumsOf {
  const memo = new TranscriptMemo<TokenSums>()
  /** The sums of the first `n` of `items`, from `known` on. */
  const extend = (known: TokenSums | undefined, n: number, items: readonly AgentMessage[]): TokenSums => {
    let from = 0
    let sums: number[] = [0]
    if (known !== undefined) {
      from = known.length
      // Entries past `known.length` may belong to another transcript that extended the same one.
      sums = known.sums.length === from + 1 ? (known.sums as number[]) : known.sums.slice(0, from + 1)
    }
    let total = sums[from]!
    for (let i = from; i < n; i++) {
      total += estimate(items[i]!)
      sums.push(total)
    }
    return { length: n, sums }
  }
  const of = (messages: readonly AgentMessage[]): readonly number[] => {
    const known = memo.find(messages)
    if (known !== undefined && known.length >= messages.length) return known.sums
    const facts = extend(known, messages.length, messages)
    memo.record(messages, facts)
    return facts.sums
  }
  const ofTranscript = (transcript: Transcript): readonly number[] => {
    const known = memo.findLineage(transcript.backing)
    if (known !== undefined && known.length >= transcript.length) return known.sums
    // The backing's first `length` items are the transcript (it may hold more).
    const facts = extend(known, transcript.length, transcript.backing.items)
    memo.recordLineage(transcript.backing, facts)
    return facts.sums
  }
  return Object.assign(of, { ofTranscript })
}

/** Prefix sums of a transcript (see {@link tokenSums}). */
export interface TokenSumsOf {
  (messages: readonly AgentMessage[]): readonly number[]
  /** The same for a lazy transcript (`lazy-transcript.ts`), without making its array. */
  readonly ofTranscript: (transcript: Transcript) => readonly number[]
}
