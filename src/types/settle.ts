/**
 * The repair that makes any transcript valid for every provider: each tool
 * call answered exactly once, by a result that follows its assistant message
 * before the next user or assistant message.
 *
 * A transcript that breaks this (restored from storage, edited by hand, cut
 * by a custom window) is rejected by providers with HTTP 400 on every later
 * request. The runtime repairs it in one place, whatever `streamFn` is used:
 * `Agent.restore` and the Agent constructor, `agentLoop` and
 * `agentLoopContinue` at the start of a run, and the built-in adapters'
 * request builders. The rules:
 *
 * - a result whose call is in no assistant message (an orphan) is dropped;
 * - a second result for the same call is dropped;
 * - a result placed elsewhere (after an intervening user message, before its
 *   call) is moved right after the results its assistant message did get;
 * - a call without any result gets a synthetic error result.
 *
 * A valid transcript comes back unchanged.
 */
import { text } from './content.js'
import { toolCallsOf, type AgentMessage, type AssistantMessage, type ToolResultMessage } from './message.js'
import { TranscriptMemo, type PrefixFacts } from './transcript-memo.js'

/** One change {@link repairTranscript} made; `index` is the message's position in the input. */
export interface TranscriptRepair {
  readonly kind: 'orphanResult' | 'duplicateResult' | 'movedResult' | 'missingResult'
  readonly toolCallId: string
  /** The result's index, or the assistant message's for `missingResult`. */
  readonly index: number
}

/** A repaired transcript and what was changed (empty, and `messages` the input itself, when it was valid). */
export interface RepairedTranscript<M extends AgentMessage> {
  readonly messages: readonly (M | ToolResultMessage)[]
  readonly repairs: readonly TranscriptRepair[]
}

/** The reason a repair gives, in words. */
export function describeRepair(repair: TranscriptRepair): string {
  const at = `at messages[${repair.index}]`
  switch (repair.kind) {
    case 'orphanResult':
      return `${at}: the result for tool call '${repair.toolCallId}' has no call in any assistant message (dropped)`
    case 'duplicateResult':
      return `${at}: a second result for tool call '${repair.toolCallId}' (dropped)`
    case 'movedResult':
      return `${at}: the result for tool call '${repair.toolCallId}' does not follow its call's assistant message (moved there)`
    case 'missingResult':
      return `${at}: tool call '${repair.toolCallId}' has no result (an error result was added)`
  }
}

/** The default reason of a synthetic result. */
const unfinished = 'the run ended before this tool call finished'

/**
 * Every tool call id of a valid transcript, with the index of the message
 * that made it. Shared by the transcripts that extend one another: an entry
 * belongs to a transcript when its index is below that transcript's length,
 * and `covered` says how far the entries go (past it, another extension may
 * have added entries of its own).
 */
interface CallIndex {
  readonly ids: Map<string, number>
  covered: number
}

/** A valid transcript's first `length` messages, all frozen: valid, every call answered. */
interface ValidPrefix extends PrefixFacts {
  readonly calls: CallIndex
}

/** Transcripts found valid (see transcript-memo.ts): a transcript seen again or extended is checked over its new messages only. */
const validPrefixes = new TranscriptMemo<ValidPrefix>()

/**
 * The call ids `messages[from..]` adds when, after a valid prefix of length
 * `from`, it keeps the transcript valid; `undefined` when it does not. The
 * same rules as the repair's walk: a valid prefix has every call answered, so
 * a result for one of its calls is a duplicate, and a result must follow the
 * assistant message that made its call before any user message.
 */
function validSuffix(messages: readonly AgentMessage[], from: number, prefix: CallIndex | undefined): Map<string, number> | undefined {
  // One pass: a result is checked against the calls before it, which is all a valid transcript
  // allows (a result for a call made later, or by an earlier assistant message, is out of place
  // either way). Nothing is allocated for a transcript without tool calls.
  let added: Map<string, number> | undefined
  let done: Set<string> | undefined
  let answered = 0
  let current = -1
  for (let i = from; i < messages.length; i++) {
    const m = messages[i]!
    if (m.role === 'assistant') {
      current = i
      const content = m.content
      for (let j = 0; j < content.length; j++) {
        const block = content[j]!
        if (block.type !== 'toolCall' || added?.has(block.id) === true) continue
        const at = prefix?.ids.get(block.id)
        if (at !== undefined && at < from) continue
        ;(added ??= new Map()).set(block.id, i)
      }
    } else if (m.role === 'user') current = -1
    else if (m.role === 'toolResult') {
      if (added?.get(m.toolCallId) !== current || done?.has(m.toolCallId) === true) return undefined
      ;(done ??= new Set()).add(m.toolCallId)
      answered++
    }
  }
  return answered === (added?.size ?? 0) ? (added ?? new Map()) : undefined
}

/** Whether `messages[from..]` are all frozen: only then is their validity remembered. */
function frozenFrom(messages: readonly AgentMessage[], from: number): boolean {
  for (let i = from; i < messages.length; i++) if (!Object.isFrozen(messages[i])) return false
  return true
}

/**
 * Whether the prefix `messages` of a valid transcript is valid itself: a walk
 * back to its last assistant or user message. In the valid transcript, every
 * result follows its call's assistant message before the next user or
 * assistant message, so the prefix can miss results only for the calls of its
 * last assistant message (none after a user message). `false` when one of
 * those calls has no result in the prefix (or is a call id made twice, which
 * the full check sorts out).
 */
function lastTurnAnswered(messages: readonly AgentMessage[]): boolean {
  let answered: Set<string> | undefined
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!
    if (m.role === 'user') return true
    if (m.role === 'toolResult') (answered ??= new Set()).add(m.toolCallId)
    else if (m.role === 'assistant') {
      for (const block of m.content) if (block.type === 'toolCall' && answered?.has(block.id) !== true) return false
      return true
    }
  }
  return true
}

/**
 * Whether `messages` is valid, checking only what no earlier check covered;
 * remembered when its messages are frozen.
 */
function isValid(messages: readonly AgentMessage[]): boolean {
  const known = validPrefixes.find(messages)
  if (known !== undefined && known.length === messages.length) return true
  // A longer valid transcript starts with `messages`: it is valid unless cut inside a tool turn.
  if (known !== undefined && known.length > messages.length && lastTurnAnswered(messages)) return true
  const from = known !== undefined && known.length < messages.length ? known.length : 0
  const prefix = from === 0 ? undefined : known!.calls
  const added = validSuffix(messages, from, prefix)
  if (added === undefined) return false
  if (frozenFrom(messages, from)) {
    let calls: CallIndex
    if (prefix !== undefined && prefix.covered === from) calls = prefix
    else {
      // Another extension went on from the same prefix: its entries past `from` are not ours.
      const ids = new Map<string, number>()
      if (prefix !== undefined) for (const [id, at] of prefix.ids) if (at < from) ids.set(id, at)
      calls = { ids, covered: from }
    }
    for (const [id, at] of added) calls.ids.set(id, at)
    calls.covered = messages.length
    validPrefixes.record(messages, { length: messages.length, calls })
  }
  return true
}

/**
 * Repairs `messages` by the rules in the module comment. `reason` ends up in
 * every synthetic result: `Tool call not executed: <reason>.` A valid
 * transcript costs a check of what no earlier check covered (a transcript
 * seen before, or the new messages of one that extends it: see
 * transcript-memo.ts); repairing is one pass to index the calls and one to
 * place the results: linear in the transcript.
 */
export function repairTranscript<M extends AgentMessage>(messages: readonly M[], reason = unfinished): RepairedTranscript<M> {
  if (isValid(messages)) return { messages, repairs: [] }
  // Every call, by id: the index of the (first) assistant message that made it.
  const owner = new Map<string, number>()
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!
    if (m.role !== 'assistant') continue
    for (const block of m.content) if (block.type === 'toolCall' && !owner.has(block.id)) owner.set(block.id, i)
  }
  const repairs: TranscriptRepair[] = []
  /** The result kept for each call, and whether it already stands in its place. */
  const kept = new Map<string, { readonly index: number; readonly inPlace: boolean }>()
  let current = -1
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!
    if (m.role === 'assistant') current = i
    else if (m.role === 'user') current = -1
    else if (m.role === 'toolResult') {
      const callAt = owner.get(m.toolCallId)
      if (callAt === undefined) repairs.push({ kind: 'orphanResult', toolCallId: m.toolCallId, index: i })
      else if (kept.has(m.toolCallId)) repairs.push({ kind: 'duplicateResult', toolCallId: m.toolCallId, index: i })
      else {
        kept.set(m.toolCallId, { index: i, inPlace: callAt === current })
        if (callAt !== current) repairs.push({ kind: 'movedResult', toolCallId: m.toolCallId, index: i })
      }
    }
  }
  for (const [id, at] of owner) if (!kept.has(id)) repairs.push({ kind: 'missingResult', toolCallId: id, index: at })
  // Never empty: `isValid` said something is wrong, by the same rules.
  if (repairs.length === 0) return { messages, repairs }

  const out: (M | ToolResultMessage)[] = []
  let open: { readonly message: AssistantMessage; readonly index: number } | undefined
  /** The open assistant message's moved and missing results, after those it got in place. */
  const close = (): void => {
    if (open === undefined) return
    const { message, index } = open
    open = undefined
    for (const call of toolCallsOf(message)) {
      if (owner.get(call.id) !== index) continue
      const result = kept.get(call.id)
      if (result === undefined) {
        out.push({ role: 'toolResult', toolCallId: call.id, toolName: call.name, content: [text(`Tool call not executed: ${reason}.`)], isError: true, timestamp: message.timestamp })
        kept.set(call.id, { index: -1, inPlace: true })
      } else if (!result.inPlace) out.push(messages[result.index] as M)
    }
  }
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!
    if (m.role === 'toolResult') {
      const result = kept.get(m.toolCallId)
      if (result?.index === i && result.inPlace) out.push(m)
      continue
    }
    if (m.role === 'assistant' || m.role === 'user') close()
    out.push(m)
    if (m.role === 'assistant') open = { message: m, index: i }
  }
  close()
  return { messages: out, repairs }
}

/**
 * The transcript, repaired (see {@link repairTranscript}): every unanswered
 * tool call gets a synthetic error result, placed right after the results its
 * assistant message did get; orphan and duplicate results are dropped,
 * misplaced ones moved. Use it on a transcript whose run was cut off, or
 * before sending a transcript to another provider.
 */
export function settleTranscript<M extends AgentMessage>(messages: readonly M[], reason = unfinished): (M | ToolResultMessage)[] {
  return [...repairTranscript(messages, reason).messages]
}

/** A transcript that breaks the tool-call invariants, when the caller asked for rejection rather than repair. */
export class InvalidTranscriptError extends Error {
  override readonly name = 'InvalidTranscriptError'
  constructor(readonly repairs: readonly TranscriptRepair[]) {
    super(`the transcript breaks the tool-call invariants:\n${repairs.map((r) => `  - ${describeRepair(r)}`).join('\n')}`)
  }
}

/** The reason of the synthetic results a restored or passed-in transcript gets. */
const NO_RESULT_RECORDED = 'no result was recorded'

/**
 * A transcript from outside the runtime (a checkpoint, the app's storage),
 * made valid: repaired (`repair`, default) or, with `reject`, refused with an
 * {@link InvalidTranscriptError} that lists every problem. A valid transcript
 * is returned as is.
 */
export function validTranscript<M extends AgentMessage>(messages: readonly M[], mode: 'repair' | 'reject' = 'repair'): readonly (M | ToolResultMessage)[] {
  const repaired = repairTranscript(messages, NO_RESULT_RECORDED)
  if (mode === 'reject' && repaired.repairs.length > 0) throw new InvalidTranscriptError(repaired.repairs)
  return repaired.messages
}
