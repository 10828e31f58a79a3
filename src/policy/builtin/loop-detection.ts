/** Catching a model that keeps making the same tool call, as a post-turn policy. */
import type { ToolCallContent } from '../../types/content.js'
import { toolCallsOf, userMessage, type AgentMessage, type AssistantMessage } from '../../types/message.js'
import { Verdict, type PostTurnPolicy, type PostTurnView } from '../policy.js'

/** Options of {@link loopDetection}. */
export interface LoopDetectionOptions {
  /** Consecutive assistant turns making the same call that count as a loop. At least 2; default 3. */
  readonly threshold?: number
  /** `stop` ends the run with `policyStop`; `nudge` adds a user message and lets the model try again. */
  readonly action: 'stop' | 'nudge'
  /**
   * The nudge: a text for a user message, or a function building the message
   * from the repeated call and the streak's length. Default: a user message
   * that names the call and asks the model to try something else.
   */
  readonly nudge?: string | ((call: ToolCallContent, count: number) => AgentMessage)
  /** Timestamp of a nudge built from text, in milliseconds since the epoch. Default `Date.now`. */
  readonly now?: () => number
}

/**
 * Arguments as JSON with object keys sorted at every level, so key order does
 * not tell two calls apart. The replacer sorts each object as `JSON.stringify`
 * reaches it: no recursion of ours over data that came from a model.
 */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, sortKeys) ?? 'null'
}

function sortKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value
  const record = value as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(record).sort()) out[key] = record[key]
  return out
}

/**
 * What makes two calls the same. Arguments too deep for `JSON.stringify` (a
 * restored transcript; the model's own are capped by `maxArgumentDepth`)
 * cannot be compared: such a call counts as unlike any other.
 */
function signatureOf(call: ToolCallContent): string {
  try {
    return `${call.name}\u0000${canonicalJson(call.arguments)}`
  } catch {
    return `${call.name}\u0001${call.id}`
  }
}

/** The complete calls of a message by signature; incomplete ones were never executed, so they are no repetition. */
function callsBySignature(message: AssistantMessage): Map<string, ToolCallContent> {
  const calls = new Map<string, ToolCallContent>()
  for (const call of toolCallsOf(message)) {
    if (call.partialJson !== undefined || call.parseError !== undefined) continue
    const signature = signatureOf(call)
    if (!calls.has(signature)) calls.set(signature, call)
  }
  return calls
}

/** The assistant turns of the transcript, oldest first, ending with this turn's message. */
function assistantTurns(view: PostTurnView): AssistantMessage[] {
  const turns = view.messages.filter((m): m is AssistantMessage => m.role === 'assistant')
  if (turns.at(-1) !== view.message) turns.push(view.message)
  return turns
}

interface Streak {
  readonly call: ToolCallContent
  /** Consecutive assistant turns, ending with this one, that made the call. */
  readonly count: number
}

/** One streak per distinct call of this turn, in call order. */
function streaksOf(view: PostTurnView): Streak[] {
  const turns = assistantTurns(view).map(callsBySignature)
  const current = turns.at(-1) ?? new Map<string, ToolCallContent>()
  return [...current].map(([signature, call]) => {
    let count = 0
    for (let i = turns.length - 1; i >= 0 && turns[i]!.has(signature); i--) count++
    return { call, count }
  })
}

/** Long arguments are cut: the nudge only has to remind the model which call it keeps making. */
function shortArgs(call: ToolCallContent): string {
  const json = canonicalJson(call.arguments)
  return json.length <= 200 ? json : `${json.slice(0, 200)}…`
}

function defaultNudge(call: ToolCallContent, count: number): string {
  return (
    `You have called the tool '${call.name}' with the same arguments ${count} times in a row (${shortArgs(call)}), ` +
    'and repeating it will not give a different result. Do not make this call again; try a different approach, ' +
    'or explain what is blocking you.'
  )
}

/**
 * Detects a model stuck in a loop: the same tool call (same name, same
 * arguments compared as canonical JSON, so key order does not matter) made in
 * `threshold` consecutive assistant turns, anywhere among each turn's calls.
 * A turn without that call (a different call, or an answer without tools)
 * ends the streak. Messages in between (tool results, nudges, steering) do
 * not: only what the model does counts.
 *
 * - `stop`: ends the run once the streak reaches `threshold`; the reason
 *   names the tool and the count.
 * - `nudge`: when the streak reaches exactly `threshold`, injects a user
 *   message and forces another turn; once per streak, so a model that ignores
 *   the nudge is not nudged again on every turn. Pair it with a `stop` at a
 *   higher threshold to end such a run.
 *
 * The streak is read from the transcript, so the policy holds no state and
 * can be shared between runs; a continued transcript keeps its streak.
 *
 * @throws RangeError when `threshold` is not an integer of at least 2.
 *
 * @example
 * policies: {
 *   postTurn: [
 *     loopDetection({ threshold: 3, action: 'nudge' }),
 *     loopDetection({ threshold: 5, action: 'stop' }),
 *   ],
 * }
 */
export function loopDetection(options: LoopDetectionOptions): PostTurnPolicy {
  const threshold = options.threshold ?? 3
  if (!Number.isInteger(threshold) || threshold < 2) {
    throw new RangeError(`loopDetection: threshold must be an integer of at least 2, got ${threshold}`)
  }
  const now = options.now ?? Date.now
  const nudgeFor = (call: ToolCallContent, count: number): AgentMessage => {
    const nudge = options.nudge
    if (typeof nudge === 'function') return nudge(call, count)
    return userMessage(nudge ?? defaultNudge(call, count), now())
  }
  return {
    name: 'loopDetection',
    evaluate: (view) => {
      const streaks = streaksOf(view)
      if (options.action === 'stop') {
        const longest = streaks.reduce<Streak | undefined>((a, b) => (a === undefined || b.count > a.count ? b : a), undefined)
        if (longest === undefined || longest.count < threshold) return Verdict.continue
        return Verdict.stop(`loop detected: the tool '${longest.call.name}' was called with the same arguments ${longest.count} times in a row`)
      }
      // Exactly at the threshold: a streak already nudged keeps growing past it and is left alone.
      const reached = streaks.find((s) => s.count === threshold)
      return reached === undefined ? Verdict.continue : Verdict.inject(nudgeFor(reached.call, reached.count))
    },
  }
}
