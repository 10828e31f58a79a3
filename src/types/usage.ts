/**
 * Token usage and its cost, with the arithmetic every layer shares.
 *
 * Invariants, defined once here: `input` excludes cache reads and writes;
 * `reasoning` is part of `output` and never billed twice; `total` is what the
 * provider reported, or input + output + cacheRead + cacheWrite when it did not.
 */
import * as t from 'io-ts'
import { addToRecord, NonNegativeInteger, NonNegativeNumber, struct } from './codec.js'
import { knownValid } from './fast-is.js'

/** Tokens used by one message, a turn, or a whole run. */
export const Usage = t.type(
  {
    input: NonNegativeInteger,
    output: NonNegativeInteger,
    reasoning: NonNegativeInteger,
    cacheRead: NonNegativeInteger,
    cacheWrite: NonNegativeInteger,
    total: NonNegativeInteger,
    /** Provider-specific counters (e.g. web-search requests), summed key-wise. */
    extra: t.record(t.string, NonNegativeInteger),
  },
  'Usage',
)
export type Usage = t.TypeOf<typeof Usage>

/** Money spent, in the currency of the model's rates (USD in the built-in catalog). */
export const Cost = t.type(
  {
    input: NonNegativeNumber,
    output: NonNegativeNumber,
    cacheRead: NonNegativeNumber,
    cacheWrite: NonNegativeNumber,
    total: NonNegativeNumber,
    extra: t.record(t.string, NonNegativeNumber),
  },
  'Cost',
)
export type Cost = t.TypeOf<typeof Cost>

/**
 * Prices per million tokens for requests whose prompt (input + cache reads +
 * cache writes) is above `aboveInputTokens`: the whole request, output
 * included, is billed at them (OpenAI above 272K input tokens, Claude Haiku
 * 5.5 above 100K, Gemini Pro above 200K).
 */
export const CostTier = t.type(
  {
    aboveInputTokens: NonNegativeInteger,
    input: NonNegativeNumber,
    output: NonNegativeNumber,
    cacheRead: NonNegativeNumber,
    cacheWrite: NonNegativeNumber,
  },
  'CostTier',
)
export type CostTier = t.TypeOf<typeof CostTier>

/** Price per million tokens; `tiers` replace all four rates for requests with longer prompts. */
export const CostRates = struct(
  'CostRates',
  { input: NonNegativeNumber, output: NonNegativeNumber, cacheRead: NonNegativeNumber, cacheWrite: NonNegativeNumber },
  { tiers: t.readonlyArray(CostTier) },
)
export type CostRates = t.TypeOf<typeof CostRates>

/** No tokens. Frozen, so it can be shared. */
export const emptyUsage: Usage = Object.freeze({
  input: 0,
  output: 0,
  reasoning: 0,
  cacheRead: 0,
  cacheWrite: 0,
  total: 0,
  extra: Object.freeze({}),
})

/** No cost. Frozen, so it can be shared. */
export const emptyCost: Cost = Object.freeze({
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  total: 0,
  extra: Object.freeze({}),
})

// Shared by every message built without a model call: its check takes them by identity.
knownValid(Usage, emptyUsage)
knownValid(Cost, emptyCost)

/** Key-wise sum of two count maps, as a new object (`a` is returned as is when `b` is empty). */
export function sumRecords(a: Readonly<Record<string, number>>, b: Readonly<Record<string, number>>): Record<string, number> {
  const keys = Object.keys(b)
  if (keys.length === 0) return a
  const sum: Record<string, number> = {}
  for (const key of Object.keys(a)) addToRecord(sum, key, a[key] ?? 0)
  for (const key of keys) addToRecord(sum, key, b[key] ?? 0)
  return sum
}

/** A usage with the given fields and zero elsewhere; `total` defaults to the sum of the four token kinds. */
export function usage(fields: Partial<Usage> = {}): Usage {
  const u = { ...emptyUsage, ...fields }
  return fields.total === undefined ? { ...u, total: u.input + u.output + u.cacheRead + u.cacheWrite } : u
}

/** Field-wise sum of two usages, extra maps merged key-wise. */
export function addUsage(a: Usage, b: Usage): Usage {
  return {
    input: a.input + b.input,
    output: a.output + b.output,
    reasoning: a.reasoning + b.reasoning,
    cacheRead: a.cacheRead + b.cacheRead,
    cacheWrite: a.cacheWrite + b.cacheWrite,
    total: a.total + b.total,
    extra: sumRecords(a.extra, b.extra),
  }
}

/** Field-wise sum of two costs, extra maps merged key-wise. */
export function addCost(a: Cost, b: Cost): Cost {
  return {
    input: a.input + b.input,
    output: a.output + b.output,
    cacheRead: a.cacheRead + b.cacheRead,
    cacheWrite: a.cacheWrite + b.cacheWrite,
    total: a.total + b.total,
    extra: sumRecords(a.extra, b.extra),
  }
}

/** Sums any number of usages. */
export const mergeUsage = (...usages: readonly Usage[]): Usage => usages.reduce(addUsage, emptyUsage)

/** Sums any number of costs. */
export const mergeCost = (...costs: readonly Cost[]): Cost => costs.reduce(addCost, emptyCost)

/** The share of prompt tokens served from cache, 0 to 1; 0 when there were none. */
export function cacheHitRate(u: Usage): number {
  const prompt = u.input + u.cacheRead + u.cacheWrite
  return prompt === 0 ? 0 : u.cacheRead / prompt
}

/**
 * The rates one request is billed at: those of the tier with the highest
 * `aboveInputTokens` its prompt (input + cache reads + cache writes) is
 * above, else the base rates. Output never moves a request into a tier.
 */
export function ratesFor(u: Usage, rates: CostRates): Omit<CostRates, 'tiers'> {
  const tiers = rates.tiers
  if (tiers === undefined || tiers.length === 0) return rates
  const prompt = u.input + u.cacheRead + u.cacheWrite
  let tier: CostTier | undefined
  for (const t of tiers) if (prompt > t.aboveInputTokens && (tier === undefined || t.aboveInputTokens > tier.aboveInputTokens)) tier = t
  return tier ?? rates
}

/**
 * What `u` costs at `rates` (per million tokens). Reasoning is inside output,
 * so it is not billed again. `u` is one request's usage (an assistant
 * message's): tiers are chosen by its prompt, the whole request at one tier.
 */
export function costOf(u: Usage, given: CostRates | undefined): Cost {
  if (given === undefined) return emptyCost
  const rates = ratesFor(u, given)
  const input = (u.input * rates.input) / 1e6
  const output = (u.output * rates.output) / 1e6
  const cacheRead = (u.cacheRead * rates.cacheRead) / 1e6
  const cacheWrite = (u.cacheWrite * rates.cacheWrite) / 1e6
  return { input, output, cacheRead, cacheWrite, total: input + output + cacheRead + cacheWrite, extra: {} }
}
