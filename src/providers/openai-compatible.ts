/**
 * Servers that speak the Chat Completions dialect: local ones (Ollama, vLLM,
 * llama.cpp, LM Studio) and hosted ones (OpenRouter, Groq, DeepSeek, xAI,
 * Mistral, Together, Fireworks, Cerebras). They differ in small ways; each
 * difference is one field of a `Compat` row, documented per row below.
 *
 * ```ts
 * const local = openaiCompatible({ server: 'ollama' }) // http://localhost:11434/v1, no key
 * const groq = openaiCompatible({ server: 'groq' }) // key from GROQ_API_KEY
 * const mine = openaiCompatible({ baseUrl: 'http://gpu-box:9000/v1', compat: { reasoningField: 'reasoning' } })
 * ```
 */
import type { StreamFn } from '../types/request.js'
import { streamFnOf, type WireProtocol } from './protocol.js'
import { openaiChatProtocolFor, type OpenAIChatSettings } from './openai-chat.js'
import { openaiCompat, type Compat } from './openai-chat-compat.js'

/** The servers with a built-in compat row. `generic` assumes only the common core of the dialect. */
export type CompatServer =
  | 'ollama'
  | 'vllm'
  | 'llamacpp'
  | 'openrouter'
  | 'groq'
  | 'deepseek'
  | 'xai'
  | 'mistral'
  | 'together'
  | 'fireworks'
  | 'cerebras'
  | 'lmstudio'
  | 'generic'

/** What most compatible servers do; rows below state only where they differ. */
const base: Compat = {
  ...openaiCompat,
  maxTokensField: 'max_tokens',
  supportsDeveloperRole: false,
  thinkingParam: 'none',
  reasoningEfforts: ['low', 'medium', 'high'],
  toolCallIdMaxLength: 64,
  supportsStrictTools: false,
  supportsPromptCacheKey: false,
  temperatureWithReasoning: true,
  defaultBaseUrl: undefined,
  apiKeyEnv: [],
  requiresApiKey: false,
}

const rows: Readonly<Record<CompatServer, Compat>> = {
  /**
   * Ollama's `/v1` endpoint: reasoning in `reasoning`, `reasoning_effort`
   * for thinking models (gpt-oss, qwen3), no key locally (`OLLAMA_API_KEY`
   * for ollama.com).
   */
  ollama: { ...base, reasoningField: 'reasoning', thinkingParam: 'reasoning_effort', defaultBaseUrl: 'http://localhost:11434/v1', apiKeyEnv: ['OLLAMA_API_KEY'] },
  /**
   * vLLM's server: reasoning parsers stream `reasoning` (`reasoning_content`
   * before 0.10, read too); thinking is switched by the chat template
   * (`chat_template_kwargs.enable_thinking`, Qwen-style). Key optional
   * (`--api-key`).
   */
  vllm: { ...base, reasoningField: 'reasoning', thinkingParam: 'chat_template_kwargs', defaultBaseUrl: 'http://localhost:8000/v1', apiKeyEnv: ['VLLM_API_KEY'] },
  /** llama.cpp's `llama-server`: `reasoning_content` (with `--reasoning-format`), thinking via the template kwargs (`--jinja`). */
  llamacpp: { ...base, reasoningField: 'reasoning_content', thinkingParam: 'chat_template_kwargs', defaultBaseUrl: 'http://localhost:8080/v1', apiKeyEnv: ['LLAMA_API_KEY'] },
  /**
   * OpenRouter: reasoning in `reasoning`, requested as `reasoning: {effort}`
   * and accepted back on assistant messages. Mid-stream failures come as
   * `{"error": {"code": <status>}}` payloads.
   */
  openrouter: {
    ...base,
    reasoningField: 'reasoning',
    replayReasoning: true,
    thinkingParam: 'openrouter',
    reasoningEfforts: ['minimal', 'low', 'medium', 'high'],
    defaultBaseUrl: 'https://openrouter.ai/api/v1',
    apiKeyEnv: ['OPENROUTER_API_KEY'],
    requiresApiKey: true,
  },
  /**
   * Groq: final usage in `x_groq.usage` (newer responses repeat it in
   * `usage`; one is read), reasoning in `reasoning`, `reasoning_effort` for
   * gpt-oss; reasoning is not accepted back.
   */
  groq: {
    ...base,
    reasoningField: 'reasoning',
    thinkingParam: 'reasoning_effort',
    usageLocation: 'x_groq',
    toolCallIdMaxLength: 40,
    defaultBaseUrl: 'https://api.groq.com/openai/v1',
    apiKeyEnv: ['GROQ_API_KEY'],
    requiresApiKey: true,
  },
  /**
   * DeepSeek: `reasoning_content`, which must NOT be sent back (the API
   * rejects it); thinking as `thinking: {type: 'enabled'}` (deepseek-reasoner
   * always thinks); cache hits as `prompt_cache_hit_tokens` (read).
   */
  deepseek: {
    ...base,
    reasoningField: 'reasoning_content',
    replayReasoning: false,
    thinkingParam: 'thinking_type',
    defaultBaseUrl: 'https://api.deepseek.com/v1',
    apiKeyEnv: ['DEEPSEEK_API_KEY'],
    requiresApiKey: true,
  },
  /**
   * xAI: `reasoning_content`; `completion_tokens` EXCLUDES reasoning tokens;
   * `reasoning_effort` takes only `low` and `high` (grok-3-mini; grok-4
   * rejects it: leave its thinking level off).
   */
  xai: {
    ...base,
    reasoningField: 'reasoning_content',
    thinkingParam: 'reasoning_effort',
    reasoningEfforts: ['low', 'high'],
    completionTokensIncludeReasoning: false,
    defaultBaseUrl: 'https://api.x.ai/v1',
    apiKeyEnv: ['XAI_API_KEY'],
    requiresApiKey: true,
  },
  /**
   * Mistral: rejects unknown fields (no `stream_options`; usage comes
   * anyway), tool-call ids of exactly 9 alphanumerics, a `name` on tool
   * messages, no user message directly after a tool message; Magistral
   * streams thinking as content parts (read).
   */
  mistral: {
    ...base,
    supportsStreamOptionsUsage: false,
    toolCallIdStyle: 'alphanumeric9',
    toolCallIdMaxLength: 9,
    requiresToolResultName: true,
    requiresAssistantAfterToolResult: true,
    defaultBaseUrl: 'https://api.mistral.ai/v1',
    apiKeyEnv: ['MISTRAL_API_KEY'],
    requiresApiKey: true,
  },
  /** Together AI: reasoning in `reasoning`, `reasoning_effort` for models that take it. */
  together: { ...base, reasoningField: 'reasoning', thinkingParam: 'reasoning_effort', defaultBaseUrl: 'https://api.together.xyz/v1', apiKeyEnv: ['TOGETHER_API_KEY'], requiresApiKey: true },
  /** Fireworks AI: `reasoning_content`, `reasoning_effort`. */
  fireworks: {
    ...base,
    reasoningField: 'reasoning_content',
    thinkingParam: 'reasoning_effort',
    defaultBaseUrl: 'https://api.fireworks.ai/inference/v1',
    apiKeyEnv: ['FIREWORKS_API_KEY'],
    requiresApiKey: true,
  },
  /** Cerebras: `max_completion_tokens`, reasoning in `reasoning`, `reasoning_effort` (gpt-oss); usage comes without `stream_options`. */
  cerebras: {
    ...base,
    supportsStreamOptionsUsage: false,
    maxTokensField: 'max_completion_tokens',
    reasoningField: 'reasoning',
    thinkingParam: 'reasoning_effort',
    defaultBaseUrl: 'https://api.cerebras.ai/v1',
    apiKeyEnv: ['CEREBRAS_API_KEY'],
    requiresApiKey: true,
  },
  /** LM Studio's local server: reasoning in `reasoning`, `reasoning_effort` (gpt-oss); no key. */
  lmstudio: { ...base, reasoningField: 'reasoning', thinkingParam: 'reasoning_effort', defaultBaseUrl: 'http://localhost:1234/v1' },
  /** Any other server: the common core only (no thinking parameter, no developer role); pass `baseUrl`, and a key if it wants one. */
  generic: base,
}

/** The built-in compat row of `server` (a frozen copy). */
export function compatFor(server: CompatServer): Compat {
  const row = rows[server]
  if (row === undefined) throw new TypeError(`unknown server '${String(server)}'; known: ${Object.keys(rows).join(', ')}`)
  return Object.freeze({ ...row })
}

/** Settings of the compatible adapter. */
export interface OpenAICompatibleSettings extends OpenAIChatSettings {
  /** Which server this is: picks its compat row and default base URL (default `generic`). */
  readonly server?: CompatServer
  /** Field-by-field overrides of the server's compat row. */
  readonly compat?: Partial<Compat>
  /** The base URL including the version path (e.g. `http://localhost:11434/v1`). Required unless `server` has a default. */
  readonly baseUrl?: string
  /**
   * The key (sent only as `Authorization: Bearer`), or a function resolving
   * it per call. Default: the server's environment variable (e.g.
   * `GROQ_API_KEY`); local servers need none.
   */
  readonly apiKey?: OpenAIChatSettings['apiKey']
  /** Names the provider in errors (default: the server's name, or `openai-compatible`). */
  readonly provider?: string
}

/** The wire protocol for `settings` (server row + overrides). Throws a `TypeError` when no base URL is known. */
export function openaiCompatibleProtocol(settings: OpenAICompatibleSettings = {}): WireProtocol<OpenAICompatibleSettings> {
  const server = settings.server ?? 'generic'
  const compat: Compat = { ...compatFor(server), ...settings.compat }
  if ((settings.baseUrl ?? compat.defaultBaseUrl ?? '') === '') {
    throw new TypeError(`openaiCompatible: pass \`baseUrl\` (the server '${server}' has no default address)`)
  }
  const provider = settings.provider ?? (server === 'generic' ? 'openai-compatible' : server)
  return openaiChatProtocolFor<OpenAICompatibleSettings>(provider, compat)
}

/** A `StreamFn` calling an OpenAI-compatible server (see the module comment). */
export function openaiCompatible(settings: OpenAICompatibleSettings): StreamFn {
  return streamFnOf(openaiCompatibleProtocol(settings), settings)
}
