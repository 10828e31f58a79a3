/**
 * The model catalog: the current major models of each provider, with what
 * the runtime needs to call and price them. Prices are USD per million tokens
 * as published by each provider when this table was written (`pricesAsOf`);
 * they change — override or extend the catalog rather than editing it:
 *
 * ```ts
 * const mine = models.with([{ ...models.get('anthropic', 'claude-sonnet-4-5')!, cost: { input: 2.5, output: 12, cacheRead: 0.25, cacheWrite: 3 } }])
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

const M = 1_000_000
const K = 1_000
const pricesAsOf = '2025-11'

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

// Anthropic: cache writes are the 5-minute rate (1.25× input); 1-hour writes cost 2× input.
const anthropic = rows('anthropic', 'anthropic-messages', [
  ['claude-opus-4-5', 'Claude Opus 4.5', 200 * K, 64 * K, 5, 25, 0.5, 6.25, true, true],
  ['claude-sonnet-4-5', 'Claude Sonnet 4.5', 200 * K, 64 * K, 3, 15, 0.3, 3.75, true, true],
  ['claude-haiku-4-5', 'Claude Haiku 4.5', 200 * K, 64 * K, 1, 5, 0.1, 1.25, true, true],
  ['claude-opus-4-1', 'Claude Opus 4.1', 200 * K, 32 * K, 15, 75, 1.5, 18.75, true, true],
  ['claude-sonnet-4-0', 'Claude Sonnet 4', 200 * K, 64 * K, 3, 15, 0.3, 3.75, true, true],
])

// OpenAI: cached input is billed at the cache-read rate; there is no cache-write charge.
const openai = rows('openai', 'openai-responses', [
  ['gpt-5.1', 'GPT-5.1', 400 * K, 128 * K, 1.25, 10, 0.125, 0, true, true],
  ['gpt-5', 'GPT-5', 400 * K, 128 * K, 1.25, 10, 0.125, 0, true, true],
  ['gpt-5-mini', 'GPT-5 mini', 400 * K, 128 * K, 0.25, 2, 0.025, 0, true, true],
  ['gpt-5-nano', 'GPT-5 nano', 400 * K, 128 * K, 0.05, 0.4, 0.005, 0, true, true],
  ['gpt-4.1', 'GPT-4.1', 1_047_576, 32_768, 2, 8, 0.5, 0, false, true],
  ['gpt-4.1-mini', 'GPT-4.1 mini', 1_047_576, 32_768, 0.4, 1.6, 0.1, 0, false, true],
  ['gpt-4o', 'GPT-4o', 128 * K, 16_384, 2.5, 10, 1.25, 0, false, true],
  ['o3', 'o3', 200 * K, 100 * K, 2, 8, 0.5, 0, true, true],
  ['o4-mini', 'o4-mini', 200 * K, 100 * K, 1.1, 4.4, 0.275, 0, true, true],
])

// Google: prices for prompts up to 200k tokens (longer prompts cost more: override when you send them).
const google = rows('google', 'google-gemini', [
  ['gemini-3-pro-preview', 'Gemini 3 Pro (preview)', 1_048_576, 65_536, 2, 12, 0.2, 0, true, true],
  ['gemini-2.5-pro', 'Gemini 2.5 Pro', 1_048_576, 65_536, 1.25, 10, 0.125, 0, true, true],
  ['gemini-2.5-flash', 'Gemini 2.5 Flash', 1_048_576, 65_536, 0.3, 2.5, 0.03, 0, true, true],
  ['gemini-2.5-flash-lite', 'Gemini 2.5 Flash-Lite', 1_048_576, 65_536, 0.1, 0.4, 0.01, 0, true, true],
])

const compatible = [
  ...rows('deepseek', 'openai-compatible', [
    ['deepseek-chat', 'DeepSeek V3.2 (chat)', 128 * K, 8 * K, 0.28, 0.42, 0.028, 0, false, false],
    ['deepseek-reasoner', 'DeepSeek V3.2 (reasoner)', 128 * K, 64 * K, 0.28, 0.42, 0.028, 0, true, false],
  ]),
  ...rows('xai', 'openai-compatible', [
    ['grok-4', 'Grok 4', 256 * K, 64 * K, 3, 15, 0.75, 0, true, true],
    ['grok-4-fast', 'Grok 4 Fast', 2 * M, 30 * K, 0.2, 0.5, 0.05, 0, true, true],
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

/**
 * Whether a successful response silently overflowed: some servers (Ollama,
 * llama.cpp) truncate the prompt instead of failing, which shows as prompt
 * usage at or beyond the context window.
 */
export function isSilentOverflow(usage: { readonly input: number; readonly cacheRead: number; readonly cacheWrite: number }, contextWindow: number | undefined): boolean {
  return contextWindow !== undefined && contextWindow > 0 && usage.input + usage.cacheRead + usage.cacheWrite >= contextWindow
}
