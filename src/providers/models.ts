/**
 * The model catalog: the current major models of each provider, with what
 * the runtime needs to call and price them. Prices are USD per million tokens
 * as published by each provider. Each row says when its prices were checked
 * against the provider's own page (`checked`, with the page in
 * `priceSource`; `priceNote` names any other page a rate was read from), or,
 * when they could not all be, says so in `priceNote` ("not verified: …",
 * with what the provider's pages did confirm and where the other rates come
 * from) and leaves `checked` unset. Third-party pages (resellers, gateways,
 * blogs) never make a row checked. Prices change — override or extend the
 * catalog rather than editing it:
 *
 * ```ts
 * const mine = models.with([{ ...models.get('anthropic', 'claude-sonnet-5-5')!, cost: { input: 1.8, output: 9, cacheRead: 0.18, cacheWrite: 2.25 } }])
 * const local = models.with([catalogModel('ollama', 'qwen3:32b', { api: 'openai-compatible', contextWindow: 40_960, reasoning: true })])
 * ```
 *
 * Prices that depend on the prompt's length are `cost.tiers`: a request
 * whose prompt (input + cache reads + cache writes) is above a tier's
 * `aboveInputTokens` is billed at that tier's rates, all of it (see `costOf`).
 */
import * as t from 'io-ts'
import { struct } from '../types/codec.js'
import { ModelSpec, type ThinkingLevel } from '../types/model.js'
import type { CostRates, CostTier } from '../types/usage.js'

/** The wire API a model is called through. */
export const ModelApi = t.keyof(
  { 'anthropic-messages': null, 'openai-responses': null, 'openai-chat': null, 'google-gemini': null, 'openai-compatible': null },
  'ModelApi',
)
export type ModelApi = t.TypeOf<typeof ModelApi>

/** A catalog entry: a `ModelSpec` plus what the catalog knows about the model. */
export const CatalogModel = t.intersection(
  [
    ModelSpec,
    struct(
      'CatalogModelInfo',
      { api: ModelApi, name: t.string, reasoning: t.boolean, images: t.boolean },
      {
        /** The day (YYYY-MM-DD) the prices were checked against `priceSource`; absent when they could not be. */
        checked: t.string,
        /** The provider's page the prices were read from. */
        priceSource: t.string,
        /** What is known, or not verified, about the prices. */
        priceNote: t.string,
      },
    ),
  ],
  'CatalogModel',
)
export type CatalogModel = t.TypeOf<typeof CatalogModel>

const K = 1_000
const M = 1_000_000
/** The day the rows marked checked were first compared with the providers' pages. */
const CHECKED = '2026-11-25'
/** The day of the second pass; none of the pages it read shows a date of its own, so rows checked then carry this day. */
const CHECKED_AGAIN = '2026-11-26'
const undated = `the page shows no date of its own: ${CHECKED_AGAIN} is the day its stored copy was read`

/** Builds a catalog entry; unspecified facts default to "unknown" (no cost, no limits) rather than guesses. */
export function catalogModel(
  provider: string,
  modelId: string,
  info: Partial<Omit<CatalogModel, 'provider' | 'modelId'>> & { readonly api: ModelApi },
): CatalogModel {
  return { thinkingLevel: 'off', name: modelId, reasoning: false, images: false, ...info, provider, modelId }
}

/** Where a row's prices come from: a checked provider page (checked on `checked`, default {@link CHECKED}), or a note saying they are not verified. */
type Provenance =
  | { readonly source: string; readonly checked?: string; readonly note?: string; readonly tiers?: readonly CostTier[] }
  | { readonly unverified: string; readonly tiers?: readonly CostTier[] }

type Row = [
  modelId: string,
  name: string,
  contextWindow: number,
  maxOutput: number,
  rates: readonly [input: number, output: number, cacheRead: number, cacheWrite: number],
  reasoning: boolean,
  images: boolean,
  provenance: Provenance,
]

/** A tier above `aboveInputTokens` prompt tokens. */
const above = (aboveInputTokens: number, input: number, output: number, cacheRead: number, cacheWrite: number): CostTier => ({
  aboveInputTokens,
  input,
  output,
  cacheRead,
  cacheWrite,
})

const rows = (provider: string, api: ModelApi, list: readonly Row[]): CatalogModel[] =>
  list.map(([modelId, name, contextWindow, maxOutputTokens, [input, output, cacheRead, cacheWrite], reasoning, images, provenance]) => {
    const cost: CostRates = provenance.tiers === undefined ? { input, output, cacheRead, cacheWrite } : { input, output, cacheRead, cacheWrite, tiers: provenance.tiers }
    const price =
      'source' in provenance
        ? { checked: provenance.checked ?? CHECKED, priceSource: provenance.source, ...(provenance.note === undefined ? {} : { priceNote: provenance.note }) }
        : { priceNote: `not verified: ${provenance.unverified}` }
    return catalogModel(provider, modelId, { api, name, contextWindow, maxOutputTokens, cost, reasoning, images, ...price })
  })

// Anthropic: `cacheWrite` is the 5-minute write (1-hour writes cost more: override `cacheWrite` if you use them).
// Cache reads are not one multiple of input any more: 0.025× on Fable 5.1, 0.05× on Opus 5.5 and Sonnet 5.5.
const ANTHROPIC_PRICING = 'https://platform.claude.com/docs/en/about-claude/pricing'
const anthropic = rows('anthropic', 'anthropic-messages', [
  ['claude-fable-5-2', 'Claude Fable 5.2', 1 * M, 128 * K, [8, 40, 0.2, 10], true, true, {
    unverified:
      'input 8 and output 40 are on Anthropic\'s release notes of 2026-11-09 (https://platform.claude.com/docs/ja/release-notes/overview, and the ko edition); ' +
      'no Anthropic page with its cache rates was available (the stored pricing page and model overviews predate it, and the stored "What\'s new in Claude Fable 5.2" page is cut before its pricing). ' +
      'Cache read 0.20 and 5-minute write 10 as quoted by https://docs.apiyi.com/en/news/claude-fable-5-2-launch.md and https://github.com/archid21/rightsize/releases/tag/v0.10.2',
  }],
  ['claude-fable-5-1', 'Claude Fable 5.1', 1 * M, 128 * K, [10, 50, 0.25, 12.5], true, true, { source: ANTHROPIC_PRICING }],
  ['claude-opus-5-5', 'Claude Opus 5.5', 1 * M, 128 * K, [4, 20, 0.2, 5], true, true, { source: 'https://platform.claude.com/docs/zh-CN/models/opus-5-5/overview' }],
  ['claude-sonnet-5-5', 'Claude Sonnet 5.5', 1 * M, 128 * K, [2, 10, 0.1, 2.5], true, true, {
    source: 'https://platform.claude.com/docs/en/release-notes/overview?entry=2026-10-08-eb9a2f8c3565aed4',
    checked: CHECKED_AGAIN,
    note:
      'the release notes of 2026-10-07 cut its cache read from 0.20 to 0.10 (0.05× input), cache writes and the other rates unchanged; ' +
      'input, output and the 5-minute write are on https://platform.claude.com/docs/zh-CN/models/sonnet-5-5/overview, whose stored copy predates the cut; ' +
      undated,
  }],
  ['claude-haiku-5-5', 'Claude Haiku 5.5', 1 * M, 128 * K, [0.1, 0.5, 0.01, 0.125], true, true, {
    unverified:
      'the base rates and the tier above 100,000 prompt tokens (billed at the higher rates for the whole request, cache reads and writes included) are on https://platform.claude.com/docs/zh-CN/models/haiku-5-5/overview; ' +
      'the stored page is cut before the tier cache-read rate: 0.05 as reported by https://github.com/kurofune/claudit/releases/tag/v1.9.2',
    tiers: [above(100_000, 0.5, 2.5, 0.05, 0.625)],
  }],
  ['claude-opus-5', 'Claude Opus 5 (legacy)', 1 * M, 128 * K, [5, 25, 0.5, 6.25], true, true, { source: 'https://platform.claude.com/docs/models/opus-5/overview' }],
  ['claude-sonnet-5', 'Claude Sonnet 5 (legacy)', 1 * M, 128 * K, [2, 10, 0.2, 2.5], true, true, { source: 'https://platform.claude.com/docs/zh-CN/models/sonnet-5/overview' }],
  ['claude-sonnet-4-5', 'Claude Sonnet 4.5 (legacy)', 200 * K, 64 * K, [3, 15, 0.3, 3.75], true, true, {
    unverified:
      'input 3 and output 15 (200K context, 64K output) are on https://platform.claude.com/docs/zh-CN/models/sonnet-4-5/overview, which also says it retires on 2026-11-30; ' +
      'its cache rates are not on any stored Anthropic page (the overview is cut before them, the pricing page before its row): 0.30 and 3.75 are the standard 0.1× / 1.25× of input',
  }],
  ['claude-haiku-4-5', 'Claude Haiku 4.5', 200 * K, 64 * K, [1, 5, 0.1, 1.25], true, true, {
    unverified:
      'input 1 and output 5 are in the comparison table of https://platform.claude.com/docs/en/models/opus-5/overview; its cache rates are on no stored Anthropic page: 0.10 and 1.25 are the standard 0.1× / 1.25× of input',
  }],
])

// OpenAI: GPT-6 and GPT-5.4 bill a prompt above 272K input tokens at double the input and cache rates and 1.5× output — the whole
// request. A row without a tier has none stated on any OpenAI page available (GPT-5.5: see its note).
const openai = rows('openai', 'openai-responses', [
  ['gpt-6.2-sol', 'GPT-6.2 Sol', 1_050_000, 128 * K, [2, 10, 0.1, 2.5], true, true, {
    source: 'https://developers.openai.com/api/docs/models/gpt-6.2-sol',
    note: 'cache writes are 30-minute retention',
    tiers: [above(272_000, 4, 15, 0.2, 5)],
  }],
  ['gpt-6-sol', 'GPT-6 Sol', 1_050_000, 128 * K, [2, 10, 0.2, 2.5], true, true, {
    unverified:
      'the base rates are on https://developers.openai.com/api/docs/models/gpt-6-sol.md; the stored page is cut before its long-context note: the 272K tier as reported by https://github.com/BerriAI/litellm/discussions/42523',
    tiers: [above(272_000, 4, 15, 0.4, 5)],
  }],
  ['gpt-6-luna', 'GPT-6 Luna', 1_050_000, 128 * K, [0.1, 0.5, 0.01, 0.125], true, true, {
    source: 'https://developers.openai.com/ja-JP/api/docs/models/gpt-6-luna',
    tiers: [above(272_000, 0.2, 0.75, 0.02, 0.25)],
  }],
  ['gpt-5.5', 'GPT-5.5', 1_050_000, 128 * K, [5, 30, 0.5, 0], true, true, {
    unverified:
      'input 5 and output 30 are on https://developers.openai.com/docs/models; its cached-input rate is not on any OpenAI page available (0.50 as quoted by https://www.morphllm.com/openai-api-pricing). ' +
      'https://www.benchr.org/articles/gpt-5-5-pricing-explained reports a tier above 272K input tokens (10 in / 45 out / 1.00 cached) that no OpenAI page available states: not modelled',
  }],
  ['gpt-5.4', 'GPT-5.4', 1_050_000, 128 * K, [2.5, 15, 0.25, 0], true, true, {
    unverified:
      'input 2.50 and output 15 are on https://developers.openai.com/docs/models, and the tier on https://developers.openai.com/ko-KR/api/docs/models/gpt-5.4-pro, which says that for GPT-5.4 and GPT-5.4 Pro a prompt above 272K input tokens is billed 2× input and 1.5× output for the whole request; ' +
      'its cached-input rate (0.25, doubled in the tier as input is) is not on any OpenAI page available',
    tiers: [above(272_000, 5, 22.5, 0.5, 0)],
  }],
  ['gpt-5.4-mini', 'GPT-5.4 mini', 400 * K, 128 * K, [0.75, 4.5, 0.075, 0], true, true, {
    unverified: 'input 0.75 and output 4.50 (400K context) are on https://developers.openai.com/docs/models; its cached-input rate (0.075) is not on any OpenAI page available',
  }],
  ['gpt-5.4-nano', 'GPT-5.4 nano', 400 * K, 128 * K, [0.2, 1.25, 0.02, 0], true, true, { source: 'https://developers.openai.com/ja-JP/api/docs/models/gpt-5.4-nano' }],
  ['gpt-5-mini', 'GPT-5 mini', 400 * K, 128 * K, [0.25, 2, 0.025, 0], true, true, {
    source: 'https://developers.openai.com/ko-KR/api/docs/models/gpt-5-mini',
    checked: CHECKED_AGAIN,
    note: `the page marks the model as scheduled for deprecation; ${undated}`,
  }],
  ['gpt-4.1', 'GPT-4.1', 1_047_576, 32_768, [2, 8, 0.5, 0], false, true, {
    unverified: 'no OpenAI page for it was available (the one for its sibling, https://developers.openai.com/ko-KR/api/docs/models/gpt-4.1-nano, marks that model as shut down)',
  }],
])

// Google: the 3.8 Flash price is an introductory rate, reported (not by a Google page available) to double on 2027-01-01.
const noGooglePage =
  'no Google page with its prices was available (searched for ai.google.dev/gemini-api/docs/pricing, the Vertex AI / Gemini Enterprise Agent Platform pricing on cloud.google.com and Google\'s model guides; the guides found stop before any price)'
const google = rows('google', 'google-gemini', [
  ['gemini-3.8-flash', 'Gemini 3.8 Flash', 1_048_576, 65_536, [0.75, 3.75, 0.075, 0], true, true, {
    unverified: `${noGooglePage}; https://raw.githubusercontent.com/api-evangelist/gemini/refs/heads/main/plans/gemini-plans-pricing.yml transcribes $0.75 input "through December 31, 2026" from https://ai.google.dev/gemini-api/docs/pricing, and https://github.com/BerriAI/litellm/discussions/39357 gives 0.75 / 3.75 / 0.075 cached until then and 1.50 / 7.50 from 2027-01-01`,
  }],
  ['gemini-3.5-flash', 'Gemini 3.5 Flash', 1_048_576, 65_536, [1.5, 9, 0.15, 0], true, true, {
    unverified: `${noGooglePage}; 1.50 / 9 / 0.15 cached as quoted by third parties (e.g. https://github.com/simstudioai/sim/pull/4660)`,
  }],
  ['gemini-3.1-pro-preview', 'Gemini 3.1 Pro (preview)', 1_048_576, 65_536, [2, 12, 0.2, 0], true, true, {
    unverified: `${noGooglePage}; rates for prompts up to 200K tokens. https://geotoolbox.ai/blog/gemini-api-pricing reports 4 in / 18 out above 200K, with no cached rate: not modelled`,
  }],
  ['gemini-2.5-pro', 'Gemini 2.5 Pro', 1_048_576, 65_536, [1.25, 10, 0.125, 0], true, true, {
    unverified: `${noGooglePage}; the tier above 200K prompt tokens as modelled by https://docs.rs/crate/gemini-cost/latest/source/src/pricing.rs`,
    tiers: [above(200_000, 2.5, 15, 0.25, 0)],
  }],
  ['gemini-2.5-flash', 'Gemini 2.5 Flash', 1_048_576, 65_536, [0.3, 2.5, 0.03, 0], true, true, { unverified: noGooglePage }],
  ['gemini-2.5-flash-lite', 'Gemini 2.5 Flash-Lite', 1_048_576, 65_536, [0.1, 0.4, 0.01, 0], true, true, { unverified: noGooglePage }],
])

// OpenAI-compatible servers: none of these rows could be checked against its vendor's page; each note says what was found.
const deepseek = {
  unverified:
    'DeepSeek\'s pricing page as stored (https://api-docs.deepseek.com/quick_start/pricing-details-usd) predates these rates: it lists the V3 / R1 prices of early 2025 (chat 0.27 in / 0.07 cached / 1.10 out, reasoner 0.55 / 0.14 / 2.19, 64K context). ' +
    'These are the V3.2 rates of December 2025 as carried by https://raw.githubusercontent.com/RooCodeInc/Roo-Code/main/packages/types/src/providers/deepseek.ts. ' +
    'Third parties (e.g. https://github.com/arikusi/deepseek-mcp-server/releases/tag/v2.0.0) report both ids retired on 2026-07-24 in favour of deepseek-v4-flash: not confirmed on a DeepSeek page',
} as const
const xai = {
  unverified: 'xAI\'s documentation as stored (docs.x.ai) has pages for grok-4.5 and grok-4.7, but none was found with the prices of grok-4 or grok-code-fast(-1)',
} as const
const groq = {
  unverified:
    'input and output are not on any Groq page available (third parties quote 0.59 / 0.79 for Llama 3.3 70B and 0.15 / 0.60 for gpt-oss-120b); ' +
    'cache reads are half the input rate per https://console.groq.com/docs/prompt-caching ("reducing … token costs by 50% for cached portions", on the models it supports)',
} as const
const mistral = {
  unverified:
    'no Mistral page was available; third-party pages disagree on the current models and rates (https://developer.puter.com/tutorials/mistral-api-pricing/ lists Mistral Large 3 at 0.50 / 1.50 and Medium 3.5 at 1.50 / 7.50, https://www.aicost.ai/ai-cost-guides/pricing/mistral Large 3 at 2 / 6); ' +
    'whether Mistral bills cached input, and at what rate, is unknown: cached tokens are priced at 0 here',
} as const
const compatible = [
  ...rows('deepseek', 'openai-compatible', [
    ['deepseek-chat', 'DeepSeek (chat)', 128 * K, 8 * K, [0.28, 0.42, 0.028, 0], false, false, deepseek],
    ['deepseek-reasoner', 'DeepSeek (reasoner)', 128 * K, 64 * K, [0.28, 0.42, 0.028, 0], true, false, deepseek],
  ]),
  ...rows('xai', 'openai-compatible', [
    ['grok-4', 'Grok 4', 256 * K, 64 * K, [3, 15, 0.75, 0], true, true, xai],
    ['grok-code-fast', 'Grok Code Fast', 256 * K, 64 * K, [0.2, 1.5, 0.02, 0], true, false, xai],
  ]),
  ...rows('groq', 'openai-compatible', [
    ['llama-3.3-70b-versatile', 'Llama 3.3 70B (Groq)', 131_072, 32_768, [0.59, 0.79, 0.295, 0], false, false, groq],
    ['openai/gpt-oss-120b', 'gpt-oss-120b (Groq)', 131_072, 65_536, [0.15, 0.6, 0.075, 0], true, false, groq],
  ]),
  ...rows('mistral', 'openai-compatible', [
    ['mistral-large-latest', 'Mistral Large', 128 * K, 32 * K, [2, 6, 0, 0], false, true, mistral],
    ['mistral-medium-latest', 'Mistral Medium', 128 * K, 32 * K, [0.4, 2, 0, 0], false, true, mistral],
  ]),
]

/** An immutable set of models, looked up by provider and id. */
export class ModelCatalog {
  private readonly byKey: ReadonlyMap<string, CatalogModel>

  constructor(entries: readonly CatalogModel[]) {
    const map = new Map<string, CatalogModel>()
    for (const entry of entries) map.set(`${entry.provider}/${entry.modelId}`, Object.freeze(entry))
    this.byKey = map
  }

  /** The model `provider`/`modelId`, if known. */
  get(provider: string, modelId: string): CatalogModel | undefined {
    return this.byKey.get(`${provider}/${modelId}`)
  }

  /** Looks up `"provider/modelId"` or a bare model id (first match); throws with suggestions when unknown. */
  find(id: string): CatalogModel {
    const exact = this.byKey.get(id)
    if (exact !== undefined) return exact
    const bare = [...this.byKey.values()].find((m) => m.modelId === id)
    if (bare !== undefined) return bare
    const near = [...this.byKey.keys()].filter((k) => k.includes(id.split('/').at(-1)!.slice(0, 6))).slice(0, 5)
    throw new Error(`unknown model '${id}'${near.length === 0 ? '' : ` (did you mean ${near.join(', ')}?)`}; add it with models.with([...])`)
  }

  /** Every model, or those of `provider`. */
  list(provider?: string): CatalogModel[] {
    return [...this.byKey.values()].filter((m) => provider === undefined || m.provider === provider)
  }

  /** A new catalog with `entries` added; an entry with a known provider/id replaces it. */
  with(entries: readonly CatalogModel[]): ModelCatalog {
    return new ModelCatalog([...this.byKey.values(), ...entries])
  }
}

/** The built-in catalog. */
export const models = new ModelCatalog([...anthropic, ...openai, ...google, ...compatible])

/** A `ModelSpec` from the catalog, with a thinking level (default off). */
export function model(id: string, thinkingLevel: ThinkingLevel = 'off', catalog: ModelCatalog = models): CatalogModel {
  const found = catalog.find(id)
  return thinkingLevel === 'off' || !found.reasoning ? found : { ...found, thinkingLevel }
}
