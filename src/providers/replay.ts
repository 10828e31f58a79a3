/**
 * Preparing a transcript for the model it is about to be sent to, whichever
 * models wrote it: switching model or provider mid-conversation works.
 *
 * - Assistant messages that failed or were aborted are dropped with their
 *   tool results: their content may be cut mid-block, and replaying it
 *   teaches the model nothing.
 * - Every tool call without a result gets a synthetic error result.
 * - Thinking is replayed (with its signature) only to the model that wrote
 *   it; another model gets its text as plain text, and redacted thinking,
 *   unreadable to anyone else, is dropped.
 * - Tool-call ids are rewritten, consistently in calls and results, into the
 *   form the target accepts.
 */
import type { AssistantContent } from '../types/content.js'
import type { AssistantMessage, LlmMessage, ToolResultMessage } from '../types/message.js'
import { toolCallsOf } from '../types/message.js'
import { repairTranscript } from '../types/settle.js'
import type { PrefixFacts, TranscriptMemo } from '../types/transcript-memo.js'
import type { AgentMessage } from '../types/message.js'

/** The model a transcript is being prepared for. */
export interface ReplayTarget {
  readonly provider: string
  readonly modelId: string
  /** Rewrites a tool-call id into one the target accepts; must be deterministic and injective in practice. */
  readonly normalizeToolCallId?: (id: string) => string
}

/** A model id without a trailing snapshot date (`claude-sonnet-4-5-20250929`, `gpt-5-nano-2025-08-07`). */
export const undatedModelId = (id: string): string => id.replace(/-(?:\d{8}|\d{4}-\d{2}-\d{2})$/, '')

/**
 * Whether `message` was written by the target model itself. Responses name
 * the dated snapshot while requests use the alias: both are the same model.
 */
export const isSameModel = (message: AssistantMessage, target: ReplayTarget): boolean =>
  message.provider === target.provider && (message.model === target.modelId || undatedModelId(message.model) === undatedModelId(target.modelId))

/** A small, stable hash (FNV-1a, base 36) for shortening ids without collisions in practice. */
export function shortHash(value: string): string {
  let h = 0x811c9dc5
  for (let i = 0; i < value.length; i++) {
    h ^= value.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return (h >>> 0).toString(36)
}

/**
 * An id rewriter: characters outside `allowed` become `_`, and an id longer
 * than `maxLength` keeps its start plus a hash of the whole, so two long ids
 * stay distinct. Ids that already fit come back unchanged.
 */
export function idSanitizer(allowed: RegExp, maxLength: number, prefix = ''): (id: string) => string {
  const bad = new RegExp(`[^${allowed.source}]`, 'g')
  return (id) => {
    let out = id.replace(bad, '_')
    if (!out.startsWith(prefix)) out = prefix + out
    if (out.length <= maxLength && out === id) return id
    if (out.length > maxLength) {
      const hash = shortHash(id)
      out = `${out.slice(0, maxLength - hash.length - 1)}_${hash}`
    }
    return out
  }
}

/** The reason of the synthetic results a replayed transcript gets. */
const movedOn = 'the conversation moved on before this tool call finished'

/** Whether `m` is an assistant message that failed or was aborted (dropped from a replay, with its results). */
const unfinished = (m: LlmMessage): m is AssistantMessage => m.role === 'assistant' && (m.stopReason === 'error' || m.stopReason === 'aborted')

/**
 * {@link replayedMessages}, for a request builder that remembers what it
 * assembled (`memo`, see `transcript-memo.ts`): also the facts recorded for a
 * prefix of `messages`, which is then not looked at again for messages to
 * drop (a builder records facts only for a transcript replayed as it is).
 * Facts a lineage holds past `messages.length` are not about a prefix of it:
 * left out.
 */
export function replayedWithPrefix<F extends PrefixFacts>(memo: TranscriptMemo<F>, messages: readonly LlmMessage[]): { readonly replayed: readonly LlmMessage[]; readonly prefix: F | undefined } {
  const known = memo.find(messages as readonly AgentMessage[])
  const prefix = known !== undefined && known.length <= messages.length ? known : undefined
  return { replayed: replayedMessages(messages, prefix?.length), prefix }
}

/**
 * The messages of a transcript that are replayed, in order: failed and
 * aborted assistant messages dropped with their tool results, then settled
 * (every call answered). The message objects are the input's, except the
 * synthetic results; `messages` itself when nothing is dropped or added (a
 * request builder reads it, never changes it). The part of
 * {@link prepareMessages} that looks across messages.
 *
 * Nothing to drop is the usual case, and then the transcript goes to the
 * check as it is: the loop's frozen array, whose check is remembered
 * (`transcript-memo.ts`), so a turn checks its new messages only, where a
 * copy made each turn had the check compare the whole history again.
 * `clean`: how many of the first messages the caller knows hold no failed or
 * aborted assistant message (frozen messages a replay kept before); they are
 * not looked at again.
 */
export function replayedMessages(messages: readonly LlmMessage[], clean = 0): readonly LlmMessage[] {
  let first = clean
  while (first < messages.length && !unfinished(messages[first]!)) first++
  if (first === messages.length) return repairTranscript(messages, movedOn).messages
  const dropped = new Set<string>()
  const kept: LlmMessage[] = messages.slice(0, first)
  for (let i = first; i < messages.length; i++) {
    const m = messages[i]!
    if (unfinished(m)) {
      for (const call of toolCallsOf(m)) dropped.add(call.id)
      continue
    }
    if (m.role === 'toolResult' && dropped.has(m.toolCallId)) continue
    kept.push(m)
  }
  return repairTranscript(kept, movedOn).messages
}

/**
 * One replayed message as the target should see it: tool-call ids
 * normalized by `idOf`, other models' thinking turned into text. The
 * message itself when nothing changes. The part of {@link prepareMessages}
 * that looks at one message alone.
 */
export function prepareMessage(m: LlmMessage, target: ReplayTarget, idOf: (id: string) => string = target.normalizeToolCallId ?? ((id) => id)): LlmMessage {
  if (m.role === 'toolResult') {
    const id = idOf(m.toolCallId)
    return id === m.toolCallId ? m : ({ ...m, toolCallId: id } satisfies ToolResultMessage)
  }
  if (m.role !== 'assistant') return m
  const same = isSameModel(m, target)
  const content: AssistantContent[] = []
  let changed = false
  for (const block of m.content) {
    if (block.type === 'thinking' && !same) {
      changed = true
      if (!block.redacted && block.thinking.trim() !== '') content.push({ type: 'text', text: block.thinking })
    } else if (block.type === 'toolCall') {
      const id = idOf(block.id)
      if (id !== block.id) changed = true
      content.push(id === block.id ? block : { ...block, id })
    } else content.push(block)
  }
  return changed ? { ...m, content } : m
}

/** The transcript as the target should see it (see the module comment). Returns new arrays; never mutates. */
export function prepareMessages(messages: readonly LlmMessage[], target: ReplayTarget): LlmMessage[] {
  const normalize = target.normalizeToolCallId
  const ids = new Map<string, string>()
  const idOf = (id: string): string => {
    if (normalize === undefined) return id
    let out = ids.get(id)
    if (out === undefined) {
      out = normalize(id)
      ids.set(id, out)
    }
    return out
  }
  return replayedMessages(messages).map((m) => prepareMessage(m, target, idOf))
}
