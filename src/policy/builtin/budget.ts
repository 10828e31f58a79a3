/** Spending limits as a pre-turn policy. */
import { Verdict, type PreTurnPolicy, type PreTurnView } from '../policy.js'

/** Limits of one run; unset (or infinite) limits are never reached. None may be negative. */
export interface BudgetLimits {
  /** Total cost of the run, in the currency of the model's rates (USD in the built-in catalog). */
  readonly maxCost?: number
  /**
   * Prompt tokens sent: `input + cacheRead + cacheWrite`. Cached tokens count
   * because they were sent too; `Usage.input` alone excludes them.
   */
  readonly maxInputTokens?: number
  /** Tokens generated, reasoning included (`Usage.output`). */
  readonly maxOutputTokens?: number
  /** `Usage.total`: the provider's total, or the sum of the four token kinds. */
  readonly maxTotalTokens?: number
}

interface Limit {
  readonly label: string
  readonly max: number
  readonly spent: (view: PreTurnView) => number
  readonly show: (value: number) => string
}

/** Money with enough digits that a small spend does not print as zero. */
function money(value: number): string {
  return value === 0 || value >= 0.0001 ? `$${value.toFixed(4)}` : `$${value.toPrecision(2)}`
}

const tokens = (value: number): string => String(value)

function limitsOf(limits: BudgetLimits): Limit[] {
  const all: (Limit | undefined)[] = [
    limits.maxCost === undefined ? undefined : { label: 'cost', max: limits.maxCost, spent: (v) => v.cost.total, show: money },
    limits.maxInputTokens === undefined
      ? undefined
      : { label: 'input tokens', max: limits.maxInputTokens, spent: (v) => v.usage.input + v.usage.cacheRead + v.usage.cacheWrite, show: tokens },
    limits.maxOutputTokens === undefined ? undefined : { label: 'output tokens', max: limits.maxOutputTokens, spent: (v) => v.usage.output, show: tokens },
    limits.maxTotalTokens === undefined ? undefined : { label: 'total tokens', max: limits.maxTotalTokens, spent: (v) => v.usage.total, show: tokens },
  ]
  const set = all.filter((l): l is Limit => l !== undefined)
  for (const l of set) {
    if (Number.isNaN(l.max) || l.max < 0) throw new RangeError(`budgetPolicy: the ${l.label} limit must be a non-negative number, got ${l.max}`)
  }
  return set
}

/**
 * Stops the run before a turn would start over budget: when what the run has
 * used so far has reached or passed a limit. A turn already running is never
 * cut short, so a run overshoots by at most one turn's spend; set limits with
 * that margin. Usage and cost are those of the current run (a continued
 * transcript starts from zero).
 *
 * The reason names the limit and the numbers, e.g.
 * `budget: cost $0.0123 reached the limit $0.0100`. With several limits
 * reached, the first in the order cost, input, output, total is named.
 *
 * @throws RangeError when a limit is negative or NaN.
 *
 * @example
 * policies: { preTurn: [budgetPolicy({ maxCost: 0.5, maxTotalTokens: 200_000 })] }
 */
export function budgetPolicy(limits: BudgetLimits): PreTurnPolicy {
  const checks = limitsOf(limits)
  return {
    name: 'budget',
    evaluate: (view) => {
      for (const { label, max, spent, show } of checks) {
        const value = spent(view)
        if (value >= max) return Verdict.stop(`budget: ${label} ${show(value)} reached the limit ${show(max)}`)
      }
      return Verdict.continue
    },
  }
}
