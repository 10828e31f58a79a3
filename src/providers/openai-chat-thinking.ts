/**
 * Thinking on Chat Completions servers: the reasoning effort a thinking
 * level is sent as, whether a model id is an OpenAI reasoning model, and the
 * body's thinking parameters per the server's compat row.
 */
import type { ModelSpec, ThinkingLevel } from '../types/model.js'
import type { Json } from './json.js'
import type { Compat, ReasoningEffort } from './openai-chat-compat.js'

const effortOrder: readonly ReasoningEffort[] = ['minimal', 'low', 'medium', 'high']

/** The accepted effort nearest to `level`, at or above it; `xhigh` and anything above the list take its highest. */
export function reasoningEffortFor(level: Exclude<ThinkingLevel, 'off'>, accepted: readonly ReasoningEffort[]): ReasoningEffort | undefined {
  if (accepted.length === 0) return undefined
  const wanted = level === 'xhigh' ? effortOrder.length - 1 : effortOrder.indexOf(level)
  const sorted = [...accepted].sort((x, y) => effortOrder.indexOf(x) - effortOrder.indexOf(y))
  return sorted.find((e) => effortOrder.indexOf(e) >= wanted) ?? sorted.at(-1)
}

/** Whether an OpenAI model id names a reasoning model (o-series, gpt-5 family), which takes `developer` messages and no temperature. */
export const isOpenAIReasoningModel = (modelId: string): boolean => /^(?:o\d|gpt-5)/.test(modelId.replace(/^openai\//, ''))

/** The thinking parameters of the body for `model`, per the compat row. `reasoning` says whether an effort was requested. */
export function thinkingParams(model: ModelSpec, compat: Compat): { params: Json; reasoning: boolean } {
  const level = model.thinkingLevel
  switch (compat.thinkingParam) {
    case 'chat_template_kwargs':
      // Qwen-style templates think by default: "off" has to be said.
      return { params: { chat_template_kwargs: { enable_thinking: level !== 'off' } }, reasoning: level !== 'off' }
    case 'thinking_type':
      return level === 'off' ? { params: {}, reasoning: false } : { params: { thinking: { type: 'enabled' } }, reasoning: true }
    case 'reasoning_effort':
    case 'openrouter': {
      // "off" sends nothing: non-reasoning models reject the parameter, reasoning ones use their default.
      if (level === 'off') return { params: {}, reasoning: false }
      const effort = reasoningEffortFor(level, compat.reasoningEfforts)
      if (effort === undefined) return { params: {}, reasoning: false }
      return { params: compat.thinkingParam === 'openrouter' ? { reasoning: { effort } } : { reasoning_effort: effort }, reasoning: true }
    }
    case 'none':
      return { params: {}, reasoning: false }
  }
}
