/**
 * Gemini model ids and thinking: which version an id names, whether a
 * response's `modelVersion` is the requested model, and the `thinkingConfig`
 * a thinking level is requested with (a budget on Gemini 2.5, a level on 3).
 */
import type { ModelSpec, ThinkingLevel } from '../types/model.js'
import type { Json } from './json.js'

/**
 * How thinking levels are requested. `budget`: `thinkingConfig.thinkingBudget`
 * (Gemini 2.5). `level`: `thinkingConfig.thinkingLevel` (Gemini 3). `auto`
 * (default): `level` for model ids of Gemini 3 and later, `budget` for the
 * others (ids without a version, such as `gemini-flash-latest`, included).
 */
export type GoogleThinkingParameter = 'auto' | 'budget' | 'level'

/**
 * Thinking budgets per level when the model sets none. They fit every
 * Gemini 2.5 model's range (Flash-Lite's minimum is 512, Flash's maximum
 * 24576); `xhigh` is 32768 on Pro models, whose maximum it is.
 */
export const defaultGoogleThinkingBudgets: Readonly<Record<Exclude<ThinkingLevel, 'off'>, number>> = {
  minimal: 512,
  low: 2048,
  medium: 8192,
  high: 24576,
  xhigh: 24576,
}

export const stripModels = (id: string): string => id.replace(/^models\//, '')

/** `gemini-2.5-flash` → [2, 5]; `undefined` for ids without a version (`gemini-flash-latest`). */
function geminiVersion(modelId: string): readonly [number, number] | undefined {
  const m = /gemini-(\d+)(?:\.(\d+))?/.exec(modelId)
  return m === null ? undefined : [Number(m[1]), m[2] === undefined ? 0 : Number(m[2])]
}

/** Whether `modelId` is Gemini 3 or later, by its id. */
export const isGemini3 = (modelId: string): boolean => (geminiVersion(modelId)?.[0] ?? 0) >= 3

/**
 * Whether the response's `modelVersion` `a` is the requested model `b`:
 * equal up to a `models/` prefix, or `b` plus a version suffix
 * (`gemini-2.0-flash-001`, `…-09-2025`). Aliases such as
 * `gemini-flash-latest` answer with another name and count as another
 * model: their thinking is then replayed as text.
 */
export function sameGeminiModel(a: string, b: string): boolean {
  const [x, y] = [stripModels(a), stripModels(b)]
  if (x === y) return true
  const [short, long] = x.length < y.length ? [x, y] : [y, x]
  return long.startsWith(`${short}-`) && /^(?:\d{3}|\d{2}-\d{4})$/.test(long.slice(short.length + 1))
}

/**
 * The `thinkingConfig` for `model`, or `undefined` to leave the API's default.
 *
 * - `off`: Gemini 2.5 Flash and Flash-Lite get budget 0; 2.5 Pro, which
 *   cannot stop thinking, its minimum (128); Gemini 3, which cannot either,
 *   its lowest level (`minimal` on Flash, `low` on Pro); any other model
 *   (older ones do not think) no `thinkingConfig` at all.
 * - a level: `includeThoughts: true` plus a budget (the model's
 *   `thinkingBudgets` when set for that level, even on Gemini 3, else
 *   {@link defaultGoogleThinkingBudgets}) or a Gemini 3 level: `minimal`
 *   (Flash) or `low`, `low`, `medium` (Flash and 3.1+) or `high`, `high`,
 *   `high`.
 */
export function googleThinkingConfig(model: ModelSpec, parameter: GoogleThinkingParameter = 'auto'): Json | undefined {
  const id = stripModels(model.modelId).toLowerCase()
  const useLevel = parameter === 'level' || (parameter === 'auto' && isGemini3(id))
  const flash = /flash/.test(id)
  const level = model.thinkingLevel
  if (level === 'off') {
    if (useLevel) return { thinkingLevel: flash ? 'minimal' : 'low' }
    if (/gemini-2\.5-pro/.test(id)) return { thinkingBudget: 128 }
    if (/gemini-2\.5-flash/.test(id) || parameter === 'budget') return { thinkingBudget: 0 }
    return undefined
  }
  const explicit = model.thinkingBudgets?.[level]
  if (explicit !== undefined) return { includeThoughts: true, thinkingBudget: explicit }
  if (useLevel) return { includeThoughts: true, thinkingLevel: gemini3Level(level, id) }
  const budget = level === 'xhigh' && /pro/.test(id) ? 32768 : defaultGoogleThinkingBudgets[level]
  return { includeThoughts: true, thinkingBudget: budget }
}

function gemini3Level(level: Exclude<ThinkingLevel, 'off'>, id: string): string {
  const flash = /flash/.test(id)
  const version = geminiVersion(id)
  switch (level) {
    case 'minimal':
      return flash ? 'minimal' : 'low'
    case 'low':
      return 'low'
    case 'medium':
      // Gemini 3 Pro has only low and high; Flash and 3.1 Pro add medium.
      return flash || (version !== undefined && (version[0] > 3 || version[1] >= 1)) ? 'medium' : 'high'
    case 'high':
    case 'xhigh':
      return 'high'
  }
}
