/** The turn limit as a pre-turn policy. */
import { Verdict, type PreTurnPolicy } from '../policy.js'

/**
 * Stops the run before turn index `n` starts, so at most `n` turns run
 * (turn indices `0 … n-1`). The run ends with `policyStop` and the reason
 * `max turns (n) reached`.
 *
 * Unlike the loop's `maxTurns` option, this is an ordinary policy: it shows
 * up in `policyDecision` events and composes with other pre-turn policies
 * (the first `stop` in the slot wins).
 *
 * @param n - Turns allowed; a non-negative integer (`0` stops before the first turn).
 * @throws RangeError when `n` is not a non-negative integer.
 *
 * @example
 * agentLoop(prompt, context, { model, streamFn, policies: { preTurn: [maxTurnsPolicy(10)] } })
 */
export function maxTurnsPolicy(n: number): PreTurnPolicy {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`maxTurnsPolicy: n must be a non-negative integer, got ${n}`)
  return {
    name: 'maxTurns',
    evaluate: ({ turnIndex }) => (turnIndex >= n ? Verdict.stop(`max turns (${n}) reached`) : Verdict.continue),
  }
}
