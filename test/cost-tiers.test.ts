/**
 * Costs users can bill from: prompt-length price tiers (the whole request at
 * the tier its prompt reaches, as the providers bill), and the catalog rows
 * checked against the providers' pages.
 */
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { foldChunks } from '../marbles/fold-chunks.js'
import { chunk } from '../marbles/index.js'
import { models } from '../src/providers/models.js'
import { CostRates, costOf, ratesFor, usage, type Usage } from '../src/types/usage.js'
import { arbTieredCostRates, arbUsage } from './arbitraries.js'

const perMillion = (tokens: number, rate: number): number => (tokens * rate) / 1e6

describe('tiered prices', () => {
  const rates: CostRates = {
    input: 2,
    output: 10,
    cacheRead: 0.1,
    cacheWrite: 2.5,
    tiers: [{ aboveInputTokens: 272_000, input: 4, output: 15, cacheRead: 0.2, cacheWrite: 5 }],
  }

  it('a request whose prompt is above the threshold is billed at the tier, all of it (output included); at the threshold, the base rates', () => {
    const short = costOf(usage({ input: 200_000, cacheRead: 72_000, output: 1_000 }), rates)
    expect(short.total).toBeCloseTo(perMillion(200_000, 2) + perMillion(72_000, 0.1) + perMillion(1_000, 10), 12)
    const long = costOf(usage({ input: 200_000, cacheRead: 72_001, output: 1_000 }), rates)
    expect(long).toMatchObject({ input: perMillion(200_000, 4), cacheRead: perMillion(72_001, 0.2), output: perMillion(1_000, 15) })
    expect(long.total).toBeCloseTo(perMillion(200_000, 4) + perMillion(72_001, 0.2) + perMillion(1_000, 15), 12)
  })

  it('the prompt counts cache reads and writes; output never moves a request into a tier', () => {
    expect(ratesFor(usage({ input: 1, cacheWrite: 272_000 }), rates)).toMatchObject({ input: 4 })
    expect(ratesFor(usage({ input: 1_000, output: 5_000_000 }), rates)).toMatchObject({ input: 2 })
  })

  it('with several tiers, the highest threshold the prompt is above applies, in any order', () => {
    const two: CostRates = { ...rates, tiers: [{ aboveInputTokens: 500_000, input: 8, output: 20, cacheRead: 0.4, cacheWrite: 10 }, rates.tiers![0]!] }
    expect(ratesFor(usage({ input: 400_000 }), two).input).toBe(4)
    expect(ratesFor(usage({ input: 600_000 }), two).input).toBe(8)
  })

  it('property: the cost is costOf at the rates of the highest tier the prompt is above, or the base rates', () => {
    fc.assert(
      fc.property(arbUsage, arbTieredCostRates, (u: Usage, r: CostRates) => {
        const prompt = u.input + u.cacheRead + u.cacheWrite
        const tier = (r.tiers ?? []).filter((t) => prompt > t.aboveInputTokens).sort((a, b) => b.aboveInputTokens - a.aboveInputTokens)[0]
        const flat = tier === undefined ? { input: r.input, output: r.output, cacheRead: r.cacheRead, cacheWrite: r.cacheWrite } : tier
        expect(costOf(u, r)).toStrictEqual(costOf(u, { input: flat.input, output: flat.output, cacheRead: flat.cacheRead, cacheWrite: flat.cacheWrite }))
      }),
    )
  })

  it('the CostRates codec accepts tiers and rejects a negative tier price', () => {
    expect(CostRates.is(rates)).toBe(true)
    expect(CostRates.is({ ...rates, tiers: [{ ...rates.tiers![0]!, output: -1 }] })).toBe(false)
  })

  it('an assistant message is priced by its request: gpt-6.2-sol above 272K input tokens costs the long-context rate', () => {
    const gpt = models.get('openai', 'gpt-6.2-sol')!
    const message = foldChunks([chunk.start('r'), chunk.text('ok'), chunk.stop(), chunk.usage({ input: 250_000, cacheRead: 50_000, output: 2_000 })], gpt)
    expect(message.cost.total).toBeCloseTo(perMillion(250_000, 4) + perMillion(50_000, 0.2) + perMillion(2_000, 15), 12)
  })
})

describe('the catalog', () => {
  const rates = (provider: string, id: string) => models.get(provider, id)?.cost
  it('corrected cache reads: Fable 5.1 0.25, Opus 5.5 0.20, Sonnet 5.5 0.10 (since 2026-10-07), GPT-6.2 Sol 0.10', () => {
    expect(rates('anthropic', 'claude-fable-5-1')).toMatchObject({ input: 10, output: 50, cacheRead: 0.25, cacheWrite: 12.5 })
    expect(rates('anthropic', 'claude-opus-5-5')).toMatchObject({ input: 4, output: 20, cacheRead: 0.2, cacheWrite: 5 })
    expect(rates('anthropic', 'claude-sonnet-5-5')).toMatchObject({ input: 2, output: 10, cacheRead: 0.1, cacheWrite: 2.5 })
    expect(rates('openai', 'gpt-6.2-sol')).toMatchObject({ input: 2, output: 10, cacheRead: 0.1, cacheWrite: 2.5 })
  })

  it('models released since: Claude Fable 5.2', () => {
    expect(models.get('anthropic', 'claude-fable-5-2')).toMatchObject({ contextWindow: 1_000_000, cost: { input: 8, output: 40, cacheRead: 0.2, cacheWrite: 10 } })
  })

  it('prompt-length tiers: OpenAI above 272K input tokens, Claude Haiku 5.5 above 100K', () => {
    expect(rates('openai', 'gpt-6.2-sol')?.tiers).toEqual([{ aboveInputTokens: 272_000, input: 4, output: 15, cacheRead: 0.2, cacheWrite: 5 }])
    expect(rates('openai', 'gpt-6-luna')?.tiers).toEqual([{ aboveInputTokens: 272_000, input: 0.2, output: 0.75, cacheRead: 0.02, cacheWrite: 0.25 }])
    expect(rates('anthropic', 'claude-haiku-5-5')).toMatchObject({ input: 0.1, output: 0.5, cacheRead: 0.01, cacheWrite: 0.125 })
    expect(rates('anthropic', 'claude-haiku-5-5')?.tiers).toEqual([{ aboveInputTokens: 100_000, input: 0.5, output: 2.5, cacheRead: 0.05, cacheWrite: 0.625 }])
  })

  it('GPT-5.4 above 272K input tokens: 2× input and 1.5× output for the whole request, as OpenAI states for it', () => {
    expect(rates('openai', 'gpt-5.4')).toMatchObject({ input: 2.5, output: 15 })
    expect(rates('openai', 'gpt-5.4')?.tiers).toEqual([{ aboveInputTokens: 272_000, input: 5, output: 22.5, cacheRead: 0.5, cacheWrite: 0 }])
  })

  it('Groq bills cache hits at half the input rate, not nothing', () => {
    for (const id of ['llama-3.3-70b-versatile', 'openai/gpt-oss-120b']) {
      const r = rates('groq', id)!
      expect(r.cacheRead, id).toBeGreaterThan(0)
      expect(r.cacheRead, id).toBeCloseTo(r.input / 2, 12)
    }
  })

  it('rows checked on the second pass carry its date and the provider page: Sonnet 5.5 (its 0.10 cache read), GPT-5 mini', () => {
    expect(models.get('anthropic', 'claude-sonnet-5-5')).toMatchObject({ checked: '2026-11-26', priceSource: expect.stringMatching(/^https:\/\/platform\.claude\.com\/docs\/en\/release-notes\//) })
    expect(models.get('openai', 'gpt-5-mini')).toMatchObject({
      checked: '2026-11-26',
      priceSource: expect.stringMatching(/^https:\/\/developers\.openai\.com\//),
      cost: { input: 0.25, output: 2, cacheRead: 0.025, cacheWrite: 0 },
    })
  })

  it('a row not verified says what the provider pages did confirm: Claude Fable 5.2 input and output are on the release notes, not its cache rates', () => {
    const fable = models.get('anthropic', 'claude-fable-5-2')!
    expect(fable.checked).toBeUndefined()
    expect(fable.priceNote).toMatch(/^not verified: .*release-notes/)
  })

  it('every row says when its prices were checked and where, or says that they were not', () => {
    for (const m of models.list()) {
      if (m.checked !== undefined) {
        expect(m.checked, m.modelId).toMatch(/^\d{4}-\d{2}-\d{2}$/)
        expect(m.priceSource, m.modelId).toMatch(/^https:\/\//)
      } else expect(m.priceNote, `${m.modelId} is unchecked and says nothing`).toMatch(/not verified/)
    }
  })

  it('a row marked checked takes no rate from elsewhere: no third-party source or derived multiplier in its note', () => {
    for (const m of models.list().filter((x) => x.checked !== undefined)) {
      expect(m.priceNote ?? '', m.modelId).not.toMatch(/github\.com|reported by|multiplier|reseller/)
      expect(m.priceSource, m.modelId).toMatch(/^https:\/\/([a-z-]+\.)*(claude\.com|anthropic\.com|openai\.com|google\.dev|google\.com|groq\.com|deepseek\.com|x\.ai|mistral\.ai)\//)
    }
  })
})
