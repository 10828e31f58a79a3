/**
 * A local, deterministic token estimate for messages and content blocks.
 *
 * The heuristic, defined once here:
 * - text, thinking, tool-call name + JSON arguments, extension data as JSON:
 *   `ceil(characters / 4)` per block (characters = UTF-16 code units, as
 *   `string.length` counts them). Four characters per token is the usual
 *   rule of thumb for English prose and code on current tokenizers;
 * - redacted thinking: its encrypted payload (carried in `signature`) is
 *   replayed to the provider, so it counts like text. Signatures of readable
 *   thinking do not count: providers do not bill them as prompt text;
 * - an image, inline or by URL: {@link IMAGE_TOKENS} (1,200), about what a
 *   1-megapixel image costs on Anthropic and OpenAI. A URL image costs the
 *   same because the provider fetches and tokenizes the same pixels;
 * - a tool result: its content blocks (its id and name are in the overhead);
 * - every message sent to a model: {@link MESSAGE_OVERHEAD_TOKENS} (4) more,
 *   for role markers and framing;
 * - a custom message: 0, since it never reaches a model.
 *
 * The `usage` an assistant message carries is deliberately not used: it
 * counts the whole prompt of that call (not the message), differs between
 * providers and tokenizers, and is missing on failed or foreign turns. A
 * window decided from local text alone gives the same answer for the same
 * transcript whatever model produced it, which keeps tests and replays stable.
 */
import type { Content } from '../types/content.js'
import type { AgentMessage } from '../types/message.js'

/** Tokens counted for one image, whatever its source: about a 1-megapixel image on Anthropic and OpenAI. */
export const IMAGE_TOKENS = 1_200

/** Tokens added for each message a model sees (role markers, framing). */
export const MESSAGE_OVERHEAD_TOKENS = 4

/** Estimated tokens of a piece of text: `ceil(length / 4)`. */
export const estimateTextTokens = (value: string): number => Math.ceil(value.length / 4)

// Extension data is unknown JSON; anything JSON cannot encode (cycles, BigInt) is
// something no adapter can send either, so it counts as nothing rather than throwing.
function jsonLength(value: unknown): number {
  try {
    return JSON.stringify(value)?.length ?? 0
  } catch {
    return 0
  }
}

function estimateContent(block: Content): number {
  switch (block.type) {
    case 'text':
      return estimateTextTokens(block.text)
    case 'thinking':
      return block.redacted === true ? estimateTextTokens(block.signature ?? '') : estimateTextTokens(block.thinking)
    case 'toolCall':
      return Math.ceil((block.name.length + jsonLength(block.arguments)) / 4)
    case 'image':
      return IMAGE_TOKENS
    case 'extension':
      return Math.ceil(jsonLength(block.data) / 4)
  }
}

function isMessage(item: AgentMessage | Content): item is AgentMessage {
  return 'role' in item
}

/**
 * Estimated tokens of a message (its blocks plus {@link MESSAGE_OVERHEAD_TOKENS};
 * 0 for a custom message) or of one content block. See the module comment for
 * the heuristic. Pure and cheap, but linear in the message's size: callers that
 * estimate the same history every turn should keep what they computed, as
 * `slidingWindow` does (running totals per transcript, see `token-sums.ts`).
 */
export function estimateTokens(item: AgentMessage | Content): number {
  if (!isMessage(item)) return estimateContent(item)
  if (item.role === 'custom') return 0
  let tokens = MESSAGE_OVERHEAD_TOKENS
  for (const block of item.content) tokens += estimateContent(block)
  return tokens
}

/** How one message is estimated; `estimateTokens` by default. Must be non-negative and depend on the message only. */
export type EstimateTokens = (message: AgentMessage) => number

// Transcripts are immutable and their message objects shared from turn to turn,
// so an estimate keyed by object identity stays valid for the object's lifetime.
const caches = new WeakMap<EstimateTokens, WeakMap<AgentMessage, number>>()

/**
 * `estimate`, memoized per message object (in a WeakMap, so dropped messages
 * are collected). Every caller wrapping the same `estimate` shares one cache.
 */
export function cachedEstimate(estimate: EstimateTokens = estimateTokens): EstimateTokens {
  let cache = caches.get(estimate)
  if (cache === undefined) {
    cache = new WeakMap()
    caches.set(estimate, cache)
  }
  const memo = cache
  return (message) => {
    let tokens = memo.get(message)
    if (tokens === undefined) {
      tokens = estimate(message)
      memo.set(message, tokens)
    }
    return tokens
  }
}

const cachedDefault = cachedEstimate(estimateTokens)

/**
 * Estimated tokens of a whole context: every message (cached per message
 * object) plus the system prompt's text. Tool definitions are not included.
 */
export function estimateContextTokens(messages: readonly AgentMessage[], systemPrompt = ''): number {
  let tokens = estimateTextTokens(systemPrompt)
  for (const message of messages) tokens += cachedDefault(message)
  return tokens
}
