/** Which model a turn runs on, and how hard it may think. */
import * as t from 'io-ts'
import { NonNegativeInteger, struct } from './codec.js'
import { CostRates } from './usage.js'

/** Reasoning effort, mapped by each provider to its own parameters. */
export const ThinkingLevel = t.keyof(
  { off: null, minimal: null, low: null, medium: null, high: null, xhigh: null },
  'ThinkingLevel',
)
export type ThinkingLevel = t.TypeOf<typeof ThinkingLevel>

/** Token budgets per thinking level, overriding the provider's defaults. */
export const ThinkingBudgets = t.partial(
  {
    minimal: NonNegativeInteger,
    low: NonNegativeInteger,
    medium: NonNegativeInteger,
    high: NonNegativeInteger,
    xhigh: NonNegativeInteger,
  },
  'ThinkingBudgets',
)
export type ThinkingBudgets = t.TypeOf<typeof ThinkingBudgets>

/** A model, as the loop and providers see it. */
export const ModelSpec = struct(
  'ModelSpec',
  { provider: t.string, modelId: t.string, thinkingLevel: ThinkingLevel },
  {
    thinkingBudgets: ThinkingBudgets,
    contextWindow: NonNegativeInteger,
    maxOutputTokens: NonNegativeInteger,
    /** Price per million tokens; without it messages cost 0. */
    cost: CostRates,
  },
)
export type ModelSpec = t.TypeOf<typeof ModelSpec>

/** A model with thinking off and nothing else known. */
export function modelSpec(provider: string, modelId: string, more: Partial<Omit<ModelSpec, 'provider' | 'modelId'>> = {}): ModelSpec {
  return { provider, modelId, thinkingLevel: 'off', ...more }
}

/** The budget for `level`, if one is set. */
export function thinkingBudget(model: ModelSpec, level: ThinkingLevel = model.thinkingLevel): number | undefined {
  return level === 'off' ? undefined : model.thinkingBudgets?.[level]
}
