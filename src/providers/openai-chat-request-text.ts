/**
 * The Chat Completions request body as JSON text, assembled from each
 * message's cached text (see `wire-cache.ts`): the same text as
 * `JSON.stringify(openaiChatRequestBody(request, settings, compat))`, without
 * converting and serializing the whole transcript again every turn.
 *
 * Nor assembling it again: a transcript that extends one built before for the
 * same target (the next turn of a conversation) goes on from the assembly
 * that one reached (`assemblies`), so a turn reads its new messages only,
 * where looking up each message's cached text had every turn walk the whole
 * history. WIRE 50 tool turns, CPU profile of 30 timed runs (sample counts),
 * with the frozen prompt of `agentLoop`: building the bodies 9.0 → 3.3 ms a
 * run (Anthropic 6.1 → 2.8).
 */
import type { AgentMessage, LlmMessage } from '../types/message.js'
import type { LlmRequest } from '../types/request.js'
import type { Json } from './json.js'
import { TranscriptMemo, type PrefixFacts } from '../types/transcript-memo.js'
import { OpenAIAssembly, type OpenAIAssemblyState } from './openai-chat-assembly.js'
import {
  openaiChatBodyTail,
  openaiSystemMessage,
  openaiWirePart,
  toolImagesIntro,
  toolResultsAcknowledged,
  type OpenAIChatRequestSettings,
  type OpenAIWirePart,
} from './openai-chat-request.js'
import { toolCallIdNormalizer, type Compat } from './openai-chat-compat.js'
import { replayedWithPrefix } from './replay.js'
import { JsonText, WirePieces } from './wire-cache.js'

const pieces = new WirePieces<LlmMessage, OpenAIWirePart<string>>()

/** The assembly of a transcript's first `length` messages for `target` (the pieces' target and the placement rule), all of them frozen, replayed as they are (nothing dropped or added). */
interface Assembled extends PrefixFacts {
  readonly target: string
  readonly state: OpenAIAssemblyState<string>
}

/** Assemblies reached, by transcript (see transcript-memo.ts): the next turn's transcript finds its prefix's. */
const assemblies = new TranscriptMemo<Assembled>()

/** As an array element: `JSON.stringify` of an object whose `toJSON` gives nothing is `null` there. */
const elementText = (value: Json): string => JSON.stringify(value) ?? 'null'

/** Names everything a message's part depends on (see `openaiWirePart`), so that a part built for another target is not reused. */
const targetOf = (request: LlmRequest, compat: Compat): string =>
  [request.model.provider, request.model.modelId, compat.toolCallIdStyle, compat.toolCallIdMaxLength, compat.requiresToolResultName, compat.replayReasoning, compat.reasoningField].join('\u0000')

const fillerText = JSON.stringify(toolResultsAcknowledged)
const imagesText = (images: readonly string[]): string => `{"role":"user","content":[${JSON.stringify(toolImagesIntro)},${images.join(',')}]}`

/** The body of {@link openaiChatRequestBody}, serialized. Throws what `JSON.stringify` of that body would (a cycle, a `BigInt`, a value nested too deep). */
export function openaiChatRequestText(request: LlmRequest, settings: OpenAIChatRequestSettings, compat: Compat): JsonText {
  const target = targetOf(request, compat)
  const normalize = toolCallIdNormalizer(compat)
  const build = (m: LlmMessage): OpenAIWirePart<string> => {
    const part = openaiWirePart(m, request.model, compat, normalize)
    return { role: part.role, message: part.message === undefined ? undefined : elementText(part.message), images: part.images.map(elementText) }
  }
  const all = request.messages
  const { replayed, prefix } = replayedWithPrefix(assemblies, all)
  // Replayed as it is (the usual case): the messages an earlier request assembled for this target need not be read again.
  const asIs = replayed === all
  // The placement of the pieces depends on one more compat field.
  const assemblyTarget = `${target}\u0000${compat.requiresAssistantAfterToolResult}`
  const from = asIs && prefix?.target === assemblyTarget ? prefix : undefined
  const assembly = new OpenAIAssembly<string>(compat, fillerText, imagesText, from?.state)
  let cached = asIs
  for (let i = from?.length ?? 0; i < replayed.length; i++) {
    const m = replayed[i]!
    assembly.add(pieces.of(m, target, build))
    // Only what cannot change is remembered: every message's piece cached.
    if (cached && !pieces.has(m, target)) cached = false
  }
  if (cached && all.length > (from?.length ?? 0)) assemblies.record(all as readonly AgentMessage[], { length: all.length, target: assemblyTarget, state: assembly.state() })
  const messages = assembly.finish()
  const system = openaiSystemMessage(request, compat)
  if (system !== undefined) messages.unshift(elementText(system))
  const tail = JSON.stringify(openaiChatBodyTail(request, settings, compat))
  return new JsonText(`{"model":${JSON.stringify(request.model.modelId)},"messages":[${messages.join(',')}],${tail.slice(1)}`)
}
