/**
 * Running token totals of a transcript, kept from turn to turn: what a
 * window needs to decide its cut without estimating the history again.
 */
import type { AgentMessage } from '../types/message.js'
import { TranscriptMemo, type PrefixFacts } from '../types/transcript-memo.js'
import type { EstimateTokens } from './estimate-tokens.js'

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
export function tokenSums(estimate: EstimateTokens): (messages: readonly AgentMessage[]) => readonly number[] {
  const memo = new TranscriptMemo<TokenSums>()
  return (messages) => {
    const n = messages.length
    const known = memo.find(messages)
    if (known !== undefined && known.length >= n) return known.sums
    let from = 0
    let sums: number[] = [0]
    if (known !== undefined) {
      from = known.length
      // Entries past `known.length` may belong to another transcript that extended the same one.
      sums = known.sums.length === from + 1 ? (known.sums as number[]) : known.sums.slice(0, from + 1)
    }
    let total = sums[from]!
    for (let i = from; i < n; i++) {
      total += estimate(messages[i]!)
      sums.push(total)
    }
    memo.record(messages, { length: n, sums })
    return sums
  }
}
