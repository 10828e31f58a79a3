/**
 * The default context transform: a sliding window over the transcript that
 * keeps the first messages and the newest ones that fit a token budget.
 */
import type { AgentMessage } from '../types/message.js'
import { cachedEstimate, estimateTokens, type EstimateTokens } from './estimate-tokens.js'
import { tokenSums } from './token-sums.js'
import { knownNoCustomMessages, noteNoCustomMessages } from '../types/growing-transcript.js'
import { readsTranscripts } from '../types/lazy-transcript.js'

export { compactionEventOf, compactionOf, slidingWindowRecovery } from './compaction.js'

/** What a window dropped. The transcript itself is never changed; only what the model sees. */
export interface CompactionReport {
  readonly droppedMessages: number
  readonly droppedTokens: number
  readonly keptMessages: number
  readonly keptTokens: number
  /** The budget the window applied. */
  readonly budget: number
  /** Whether the smaller overflow budget applied. */
  readonly overflow: boolean
  /**
   * True when what was kept still exceeds `budget`: the first messages and the
   * newest unit (which are always kept) are larger than the budget on their own.
   */
  readonly overBudget: boolean
}

/** A window's answer with its report; `report` is absent when nothing was dropped. */
export interface WindowResult {
  /** The input array itself when nothing was dropped. */
  readonly messages: readonly AgentMessage[]
  readonly report?: CompactionReport
}

/** What a window is told each turn. */
export interface WindowInfo {
  readonly turnIndex: number
  /** The provider rejected the context as too long: apply the smaller `overflowMaxTokens`. */
  readonly overflow?: boolean
  /**
   * The model's context window in tokens, when known (`ModelSpec.contextWindow`).
   * Budgets not set in the options are then at most a share of it (see
   * {@link windowBudgets}), so that a small model's prompt fits.
   */
  readonly contextWindow?: number
}

/** Options of {@link slidingWindow}. */
export interface SlidingWindowOptions {
  /**
   * Token budget of the messages a model sees each turn. The system prompt and
   * tools are not counted. Default: 100,000, or 3/4 of the model's context
   * window when that is smaller (`info.contextWindow`).
   */
  readonly maxTokens?: number
  /**
   * Budget when `info.overflow` is set, after the provider rejected a context
   * (or silently truncated it). Default: 50,000, or half of the model's
   * context window when that is smaller.
   */
  readonly overflowMaxTokens?: number
  /**
   * Messages at the start that are always kept (default 2: typically the
   * first prompt and its answer, which often set the task). When the last of
   * them is an assistant message with tool calls, its results are kept too.
   */
  readonly keepFirst?: number
  /** How a message is estimated (default {@link estimateTokens}); a given one is cached per message object. */
  readonly estimate?: EstimateTokens
  /** Told whenever the window drops something; not told by {@link SlidingWindow.compact}. */
  readonly onCompaction?: (report: CompactionReport) => void
}

/**
 * A sliding window: usable as a `TransformContext`, and callable with
 * `{ overflow: true }` for the smaller budget.
 */
export interface SlidingWindow {
  (messages: readonly AgentMessage[], info: WindowInfo): readonly AgentMessage[]
  /** The same window, returning its report instead of telling `onCompaction`. */
  readonly compact: (messages: readonly AgentMessage[], info?: WindowInfo) => WindowResult
  /** The budget without a known context window (a given `maxTokens`, else the default). */
  readonly maxTokens: number
  /** The overflow budget without a known context window. */
  readonly overflowMaxTokens: number
  readonly keepFirst: number
}

/** Default budgets, and the shares of a known context window they shrink to for smaller models. */
const DEFAULT_MAX_TOKENS = 100_000
const DEFAULT_OVERFLOW_MAX_TOKENS = 50_000
const WINDOW_SHARE = 0.75
const OVERFLOW_WINDOW_SHARE = 0.5

/**
 * The budgets a window applies: the given ones; else the defaults (100,000
 * and 50,000), lowered to 3/4 and 1/2 of `contextWindow` when it is known
 * and smaller. The share left over is for the system prompt, the tools, the
 * answer, and the estimate's error.
 */
function windowBudgets(
  options: Pick<SlidingWindowOptions, 'maxTokens' | 'overflowMaxTokens'>,
  contextWindow?: number,
): { readonly maxTokens: number; readonly overflowMaxTokens: number } {
  const known = contextWindow !== undefined && contextWindow > 0
  const fit = (fallback: number, share: number): number => (known ? Math.min(fallback, Math.floor(contextWindow * share)) : fallback)
  return {
    maxTokens: options.maxTokens ?? fit(DEFAULT_MAX_TOKENS, WINDOW_SHARE),
    overflowMaxTokens: options.overflowMaxTokens ?? fit(DEFAULT_OVERFLOW_MAX_TOKENS, OVERFLOW_WINDOW_SHARE),
  }
}

/**
 * Tool results (and custom messages, which a model never sees) belong to the
 * unit before them; a unit starts at each user or assistant message. An
 * assistant message with tool calls is thus one unit with the results that
 * answer it, and a kept tail cut at a unit start never begins with a result
 * whose call was dropped.
 */
const startsUnit = (message: AgentMessage): boolean => message.role === 'user' || message.role === 'assistant'

/**
 * A sliding window over the transcript, the default context transform.
 *
 * Keeps the first `keepFirst` messages and the newest units that fit the
 * budget together with them, dropping the oldest in between. A unit is a
 * user message, or an assistant message with the tool results answering it:
 * kept or dropped whole. The newest unit is always kept, even alone over
 * budget (the report then says `overBudget`). When nothing is dropped, the
 * input array itself is returned.
 *
 * Cost per turn: the new messages since a transcript it has seen (each
 * estimated once, the running totals kept; see `token-sums.ts`), a bisection
 * for the cut, and the copy of what is kept. Not the history: with 5,000
 * messages, a turn of an unchanged or appended transcript does not estimate
 * or even read the older ones.
 *
 * @example
 * const window = slidingWindow({ maxTokens: 30_000, onCompaction: (r) => log(r) })
 * agentLoop(prompt, context, { model, streamFn, transformContext: window })
 */
export function slidingWindow(options: SlidingWindowOptions = {}): SlidingWindow {
  const { maxTokens, overflowMaxTokens } = windowBudgets(options)
  const keepFirst = options.keepFirst ?? 2
  // The default estimate is cheaper than a WeakMap entry per message (a fresh 5,000-message transcript:
  // 0.6 ms through the per-message cache, most of the time to the first delta), and the running totals
  // already spare it a second time; a caller's estimate (a tokenizer, say) is cached per message too.
  const sums = tokenSums(options.estimate === undefined ? estimateTokens : cachedEstimate(options.estimate))
  const budgetOf = (info?: WindowInfo): number => {
    const overflow = info?.overflow === true
    const budgets = info?.contextWindow === undefined ? { maxTokens, overflowMaxTokens } : windowBudgets(options, info.contextWindow)
    return overflow ? budgets.overflowMaxTokens : budgets.maxTokens
  }
  const compact = (messages: readonly AgentMessage[], info?: WindowInfo): WindowResult =>
    windowOf(
      { items: messages, n: messages.length, sums: () => sums(messages), whole: () => messages, noCustom: () => knownNoCustomMessages(messages) },
      budgetOf(info),
      info?.overflow === true,
      keepFirst,
    )
  const window = (messages: readonly AgentMessage[], info: WindowInfo): readonly AgentMessage[] => {
    const result = compact(messages, info)
    if (result.report !== undefined) options.onCompaction?.(result.report)
    return result.messages
  }
  // A lazy transcript (`lazy-transcript.ts`) read through its backing: its array is made only when nothing is dropped.
  readsTranscripts(window, (transcript, info) => {
    const result = windowOf(
      { items: transcript.backing.items, n: transcript.length, sums: () => sums.ofTranscript(transcript), whole: () => transcript.array(), noCustom: () => transcript.noCustom },
      budgetOf(info),
      info.overflow === true,
      keepFirst,
    )
    if (result.report !== undefined) options.onCompaction?.(result.report)
    return result.messages
  })
  return Object.assign(window, { compact, maxTokens, overflowMaxTokens, keepFirst })
}

/** A transcript as the window reads it: its first `n` items, its token sums, itself whole. */
interface WindowSource {
  /** At least `n` long: the transcript is its first `n` items. */
  readonly items: readonly AgentMessage[]
  readonly n: number
  readonly sums: () => readonly number[]
  readonly whole: () => readonly AgentMessage[]
  /** Whether it is known, in O(1), to hold no custom message. */
  readonly noCustom: () => boolean
}

function windowOf(source: WindowSource, budget: number, overflow: boolean, keepFirst: number): WindowResult {
  const { items: messages, n } = source
  let head = Math.min(Math.max(0, keepFirst), n)
  // A head ending on a tool call keeps its results: a unit is never split.
  if (head > 0) while (head < n && !startsUnit(messages[head]!)) head++
  if (head >= n) return { messages: source.whole() }

  // sums[i]: the tokens of messages[0..i), kept from turn to turn (see token-sums.ts).
  const sums = source.sums()
  const headTokens = sums[head]!
  const total = sums[n]!
  if (total <= budget) return { messages: source.whole() }

  // With keepFirst 0 the transcript may open on orphan results or custom messages:
  // a cut must drop at least one whole unit, not just those.
  let firstUnit = head
  while (firstUnit < n && !startsUnit(messages[firstUnit]!)) firstUnit++

  // The newest unit is kept whatever it costs; older units while the head and the kept tail fit.
  // A tail from i costs total - sums[i], which only shrinks as i grows: the cut is the first unit
  // start at or after the first i > firstUnit whose tail fits, found by bisection, else the newest unit.
  let newest = n - 1
  while (newest > firstUnit && !startsUnit(messages[newest]!)) newest--
  // The newest unit is the first one after the head: there is nothing between to drop.
  if (newest <= firstUnit) return { messages: source.whole() }
  let low = firstUnit + 1
  let high = newest
  const need = total + headTokens - budget
  while (low < high) {
    const mid = (low + high) >>> 1
    if (sums[mid]! >= need) high = mid
    else low = mid + 1
  }
  let cut = low
  while (cut < newest && !startsUnit(messages[cut]!)) cut++

  const kept = keptOf(messages, head, cut, n)
  // Frozen, and known free of custom messages when the transcript is: converting it for the
  // model then needs no scan of what was kept (2,000 messages of a 60,000-message history: 40 µs).
  Object.freeze(kept)
  if (source.noCustom()) noteNoCustomMessages(kept)
  const keptTokens = headTokens + total - sums[cut]!
  return {
    messages: kept,
    report: {
      droppedMessages: cut - head,
      droppedTokens: total - keptTokens,
      keptMessages: kept.length,
      keptTokens,
      budget,
      overflow,
      overBudget: keptTokens > budget,
    },
  }
}

/**
 * The first `head` messages and those from `cut` to `n`, as a new array. A plain array (a
 * lazy transcript's backing) is copied by `slice` from `cut - head`, its first `head` items
 * then overwritten: one block copy, where a loop of element loads ran through V8's keyed-load
 * IC for every kept message (AGENT restored 60k, ~2,000 kept: 1,853 IC calls a run, about
 * 250k instructions under callgrind). A frozen array keeps the loop (its `slice` leaves V8's
 * fast path).
 */
function keptOf(messages: readonly AgentMessage[], head: number, cut: number, n: number): AgentMessage[] {
  if (!Object.isFrozen(messages)) {
    const kept = messages.slice(cut - head, n)
    for (let i = 0; i < head; i++) kept[i] = messages[i]!
    return kept
  }
  const kept = new Array<AgentMessage>(head + n - cut)
  for (let i = 0; i < head; i++) kept[i] = messages[i]!
  for (let i = cut; i < n; i++) kept[head + i - cut] = messages[i]!
  return kept
}
