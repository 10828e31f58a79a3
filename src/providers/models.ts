/**
 * The model catalog: the current major models of each provider, with what
 * the runtime needs to call and price them. Prices are USD per million tokens
 * as published by each provider when this table was written (`pricesAsOf`);
 * they change — override or extend the catalog rather than editing it:
 *
 * ```ts
 * const mine = models.with([{ ...models.get('anthropic', 'claude-sonnet-5-5')!, cost: { input: 1.8, output: 9, cacheRead: 0.18, cacheWrite: 2.25 } }])
 * const local = models.with([catalogModel('ollama', 'qwen3:32b', { api: 'openai-compatible', contextWindow: 40_960, reasoning: true })])
 * ```
 */
import * as t from 'io-ts'
import { struct } from '../types/codec.js'
import { ModelSpec, type ThinkingLevel } from '../types/model.js'

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
      { pricesAsOf: t.string },
    ),
  ],
  'CatalogModel',
)
export type CatalogModel = t.TypeOf<typeof CatalogModel>

const K = 1_000
const M = 1_000_000
/** When the prices below were read from the providers' pages. */
const pricesAsOf = '2026-11'

/** Builds a catalog entry; unspecified facts default to "unknown" (no cost, no limits) rather than guesses. */
export function catalogModel(
  provider: string,
  modelId: string,
  info: Partial<Omit<CatalogModel, 'provider' | 'modelId'>> & { readonly api: ModelApi },
): CatalogModel {
  return { thinkingLevel: 'off', name: modelId, reasoning: false, images: false, ...info, provider, modelId }
}

type Row = [modelId: string, name: string, contextWindow: number, maxOutput: number, input: number, output: number, cacheRead: number, cacheWrite: number, reasoning: boolean, images: boolean]

const rows = (provider: string, api: ModelApi, list: readonly Row[]): CatalogModel[] =>
  list.map(([modelId, name, contextWindow, maxOutputTokens, input, output, cacheRead, cacheWrite, reasoning, images]) =>
    catalogModel(provider, modelId, { api, name, contextWindow, maxOutputTokens, cost: { input, output, cacheRead, cacheWrite }, reasoning, images, pricesAsOf }),
  )

// Anthropic: cache reads cost 0.1× input, 5-minute cache writes 1.25× (1-hour writes 2×: override `cacheWrite` if you use them).
const anthropic = rows('anthropic', 'anthropic-messages', [
  ['claude-fable-5-1', 'Claude Fable 5.1', 1 * M, 128 * K, 10, 50, 1, 12.5, true, true],
  ['claude-opus-5-5', 'Claude Opus 5.5', 1 * M, 128 * K, 4, 20, 0.4, 5, true, true],
  ['claude-sonnet-5-5', 'Claude Sonnet 5.5', 1 * M, 128 * K, 2, 10, 0.2, 2.5, true, true],
  ['claude-haiku-5-5', 'Claude Haiku 5.5', 1 * M, 128 * K, 0.1, 0.5, 0.01, 0.125, true, true],
  ['claude-opus-5', 'Claude Opus 5 (legacy)', 1 * M, 128 * K, 5, 25, 0.5, 6.25, true, true],
  ['claude-sonnet-5', 'Claude Sonnet 5 (legacy)', 1 * M, 128 * K, 2, 10, 0.2, 2.5, true, true],
  ['claude-sonnet-4-5', 'Claude Sonnet 4.5 (legacy)', 200 * K, 64 * K, 3, 15, 0.3, 3.75, true, true],
  ['claude-haiku-4-5', 'Claude Haiku 4.5', 200 * K, 64 * K, 1, 5, 0.1, 1.25, true, true],
])

// OpenAI: cached input at 0.1× input on the GPT-5/6 families; GPT-6 also bills cache writes.
const openai = rows('openai', 'openai-responses', [
  ['gpt-6.2-sol', 'GPT-6.2 Sol', 1_050_000, 128 * K, 2, 10, 0.2, 2.5, true, true],
  ['gpt-6-sol', 'GPT-6 Sol', 1_050_000, 128 * K, 2, 10, 0.2, 2.5, true, true],
  ['gpt-6-luna', 'GPT-6 Luna', 1_050_000, 128 * K, 0.1, 0.5, 0.01, 0.125, true, true],
  ['gpt-5.5', 'GPT-5.5', 1_050_000, 128 * K, 5, 30, 0.5, 0, true, true],
  ['gpt-5.4', 'GPT-5.4', 1_050_000, 128 * K, 2.5, 15, 0.25, 0, true, true],
  ['gpt-5.4-mini', 'GPT-5.4 mini', 400 * K, 128 * K, 0.75, 4.5, 0.075, 0, true, true],
  ['gpt-5.4-nano', 'GPT-5.4 nano', 400 * K, 128 * K, 0.2, 1.25, 0.02, 0, true, true],
  ['gpt-5-mini', 'GPT-5 mini', 400 * K, 128 * K, 0.25, 2, 0.025, 0, true, true],
  ['gpt-4.1', 'GPT-4.1', 1_047_576, 32_768, 2, 8, 0.5, 0, false, true],
])

// Google: prices for prompts up to 200k tokens (Pro models cost more above: override when you send such prompts).
// The 3.8 Flash price is Google's introductory rate, announced to double on 2027-01-01.
const google = rows('google', 'google-gemini', [
  ['gemini-3.8-flash', 'Gemini 3.8 Flash', 1_048_576, 65_536, 0.75, 3.75, 0.075, 0, true, true],
  ['gemini-3.5-flash', 'Gemini 3.5 Flash', 1_048_576, 65_536, 1.5, 9, 0.15, 0, true, true],
  ['gemini-3.1-pro-preview', 'Gemini 3.1 Pro (preview)', 1_048_576, 65_536, 2, 12, 0.2, 0, true, true],
  ['gemini-2.5-pro', 'Gemini 2.5 Pro', 1_048_576, 65_536, 1.25, 10, 0.125, 0, true, true],
  ['gemini-2.5-flash', 'Gemini 2.5 Flash', 1_048_576, 65_536, 0.3, 2.5, 0.03, 0, true, true],
  ['gemini-2.5-flash-lite', 'Gemini 2.5 Flash-Lite', 1_048_576, 65_536, 0.1, 0.4, 0.01, 0, true, true],
])

const compatible = [
  ...rows('deepseek', 'openai-compatible', [
    ['deepseek-chat', 'DeepSeek (chat)', 128 * K, 8 * K, 0.28, 0.42, 0.028, 0, false, false],
    ['deepseek-reasoner', 'DeepSeek (reasoner)', 128 * K, 64 * K, 0.28, 0.42, 0.028, 0, true, false],
  ]),
  ...rows('xai', 'openai-compatible', [
    ['grok-4', 'Grok 4', 256 * K, 64 * K, 3, 15, 0.75, 0, true, true],
    ['grok-code-fast', 'Grok Code Fast', 256 * K, 64 * K, 0.2, 1.5, 0.02, 0, true, false],
  ]),
  ...rows('groq', 'openai-compatible', [
    ['llama-3.3-70b-versatile', 'Llama 3.3 70B (Groq)', 131_072, 32_768, 0.59, 0.79, 0, 0, false, false],
    ['openai/gpt-oss-120b', 'gpt-oss-120b (Groq)', 131_072, 65_536, 0.15, 0.6, 0, 0, true, false],
  ]),
  ...rows('mistral', 'openai-compatible', [
    ['mistral-large-latest', 'Mistral Large', 128 * K, 32 * K, 2, 6, 0, 0, false, true],
    ['mistral-medium-latest', 'Mistral Medium', 128 * K, 32 * K, 0.4, 2, 0, 0, false, true],
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
