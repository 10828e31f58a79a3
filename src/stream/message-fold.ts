/**
 * Folds provider chunks into one assistant message, enforcing the stream
 * contract (see `ProviderChunk`).
 *
 * Why it is built this way: an immer `produce` per token costs microseconds,
 * more than the rest of the runtime together. So each chunk is only checked
 * and logged here (O(1), no copy); the frozen message snapshot is produced by
 * immer when somebody reads it — once per read, over every chunk since the
 * previous read — and every untouched block is shared with that previous
 * snapshot. A snapshot read late (after later chunks) is still the snapshot
 * as of its own event, because events keep the log segment they belong to.
 *
 * A tool call still streaming has its arguments so far in a snapshot, parsed
 * from its JSON text only when a snapshot's `arguments` are read (see
 * `partial-arguments.ts`); its final arguments are parsed strictly at its end.
 */
import { produce, type Draft } from 'immer'
import type { ProviderChunk, ChunkStopReason, UsageChunk } from '../types/chunk.js'
import type { MessageUpdateEvent } from '../types/event.js'
import type { AssistantMessage } from '../types/message.js'
import type { AssistantContent, ToolCallContent } from '../types/content.js'
import type { Usage } from '../types/usage.js'
import type { ModelSpec } from '../types/model.js'
import type { StopReason } from '../types/stop-reason.js'
import type { ProviderErrorKind } from '../types/provider-error.js'
import { costOf, emptyCost, emptyUsage, sumRecords, type Cost } from '../types/usage.js'
import { addToRecord } from '../types/codec.js'
import { deepFreeze, MAX_ARGUMENT_DEPTH } from '../types/deep-freeze.js'
import { resident } from '../rx/resident.js'
import { streamingToolCall } from './partial-arguments.js'

/** The reason a chunk-level stop maps to. `stopSequence` is a normal stop. */
const stopReasonOf: Record<ChunkStopReason, StopReason> = {
  endTurn: 'stop',
  stopSequence: 'stop',
  maxTokens: 'length',
  toolUse: 'toolUse',
  refusal: 'refusal',
}

/** Chunks logged since the last materialized snapshot. Immutable once a newer segment exists. */
interface Segment {
  readonly base: AssistantMessage
  readonly log: MessageUpdate[]
  /**
   * Snapshots already produced, by log length: a second read is free and
   * returns the same object. Made at the first read: a stream whose updates
   * nobody reads (a consumer of the deltas) makes none. (With the tool map
   * made at the first call too, 1,000 live FANOUT runs of `agentLoop` held
   * 8.8 → 8.3 KB each, heap after a full GC.)
   */
  memo: Map<number, AssistantMessage> | undefined
  /** How deep parsed tool-call arguments may nest. */
  readonly maxDepth: number
  /**
   * The fold's working copy, while this is the fold's current segment: the
   * latest update's snapshot is then the head's (a copy of the changed block,
   * no immer), so a consumer reading every update in order pays no `produce`.
   */
  head: Head | undefined
}

/**
 * Unread segments are rebased after this many chunks, so a stream nobody
 * observes keeps a bounded log instead of every chunk it ever saw.
 */
const MAX_UNREAD = 64

/** A `messageUpdate` event whose `message` is materialized on first read. */
export class MessageUpdate implements MessageUpdateEvent {
  readonly type = 'messageUpdate' as const
  constructor(
    readonly chunk: ProviderChunk,
    readonly contentIndex: number,
    private readonly segment: Segment,
    private readonly count: number,
  ) {}

  /** The frozen message after this chunk. */
  get message(): AssistantMessage {
    return materialize(this.segment, this.count)
  }

  /** Serializes like a plain event, snapshot included. */
  toJSON(): MessageUpdateEvent {
    return { type: this.type, message: this.message, chunk: this.chunk, contentIndex: this.contentIndex }
  }
}

function materialize(segment: Segment, count: number): AssistantMessage {
  if (count === 0) return segment.base
  const memo = (segment.memo ??= new Map<number, AssistantMessage>())
  const known = memo.get(count)
  if (known !== undefined) return known
  if (segment.head !== undefined && count === segment.log.length) {
    const latest = segment.head.snapshot()
    memo.set(count, latest)
    return latest
  }
  // Start from the nearest earlier snapshot, so reading in order applies one chunk per read.
  let from = 0
  for (const k of memo.keys()) if (k < count && k > from) from = k
  const message = produce(memo.get(from) ?? segment.base, (draft) => applyChunks(draft, segment.log, from, count, segment.maxDepth))
  memo.set(count, message)
  return message
}

/** A usage chunk added to the draft's counts. A negative field is a revision down (see `UsageChunk`); no sum goes below 0. */
function addUsageChunk(draft: Working, chunk: UsageChunk): void {
  const u = draft.usage
  u.input = Math.max(0, u.input + (chunk.input ?? 0))
  u.output = Math.max(0, u.output + (chunk.output ?? 0))
  u.reasoning = Math.max(0, u.reasoning + (chunk.reasoning ?? 0))
  u.cacheRead = Math.max(0, u.cacheRead + (chunk.cacheRead ?? 0))
  u.cacheWrite = Math.max(0, u.cacheWrite + (chunk.cacheWrite ?? 0))
  u.total = Math.max(0, u.total + (chunk.total ?? 0))
  // A fresh object rather than edits of the draft: extra keys are data, and
  // defining a key such as `__proto__` safely is not possible on an immer draft.
  if (chunk.extra !== undefined) {
    const extra = sumRecords(u.extra, chunk.extra)
    for (const key of Object.keys(chunk.extra)) if ((extra[key] ?? 0) < 0) addToRecord(extra, key, -(extra[key] ?? 0))
    u.extra = extra
  }
}

/** What chunks change: an immer draft of a snapshot, or the fold's own working copy. */
type Working = Pick<Draft<AssistantMessage>, 'content' | 'usage'>

/** The text a delta chunk appends, for the delta kinds that append. */
function appendedText(chunk: ProviderChunk): string | undefined {
  switch (chunk.type) {
    case 'textDelta':
    case 'thinkingDelta':
      return chunk.text
    case 'toolUseArgsDelta':
      return chunk.fragment
    default:
      return undefined
  }
}

/**
 * Applies `log[from..to)` to a draft. Runs of deltas into the same block are
 * joined first and written once: every write through an immer draft costs a
 * proxy trap, and a streamed block is mostly such runs.
 */
function applyChunks(draft: Working, log: readonly MessageUpdate[], from: number, to: number, maxDepth: number): void {
  let i = from
  while (i < to) {
    const update = log[i]!
    const first = appendedText(update.chunk)
    if (first === undefined) {
      applyChunk(draft, update.chunk, update.contentIndex, maxDepth, true)
      i++
      continue
    }
    let joined = first
    let j = i + 1
    for (; j < to; j++) {
      const next = log[j]!
      if (next.chunk.type !== update.chunk.type || next.contentIndex !== update.contentIndex) break
      joined += appendedText(next.chunk)!
    }
    applyChunk(draft, j === i + 1 ? update.chunk : withText(update.chunk, joined), update.contentIndex, maxDepth, true)
    i = j
  }
}

function withText(chunk: ProviderChunk, text: string): ProviderChunk {
  return chunk.type === 'toolUseArgsDelta' ? { ...chunk, fragment: text } : { ...(chunk as { type: 'textDelta' | 'thinkingDelta' }), text }
}

/**
 * Applies one logged chunk to a draft; the log holds only chunks that passed
 * the contract. `drafted`: `draft` is an immer draft of a snapshot, whose
 * streaming tool calls are frozen blocks with a lazy `arguments` getter; such
 * a block is replaced, never edited (immer would copy it, reading the getter).
 * Otherwise it is the fold's own working copy, edited in place.
 */
function applyChunk(draft: Working, chunk: ProviderChunk, i: number, maxDepth: number, drafted: boolean): void {
  const content = draft.content
  switch (chunk.type) {
    case 'textDelta': {
      const block = content[i]
      if (block?.type === 'text') block.text += chunk.text
      else content[i] = { type: 'text', text: chunk.text }
      return
    }
    case 'thinkingDelta': {
      const block = content[i]
      if (block?.type === 'thinking') block.thinking += chunk.text
      else content[i] = { type: 'thinking', thinking: chunk.text }
      return
    }
    case 'thinkingSignature': {
      const block = content[i]
      if (block?.type === 'thinking') block.signature = (block.signature ?? '') + chunk.signature
      else content[i] = { type: 'thinking', thinking: '', signature: chunk.signature }
      return
    }
    case 'thinkingRedacted':
      content[i] = { type: 'thinking', thinking: '', signature: chunk.data, redacted: true }
      return
    case 'extension':
      content[i] = { type: 'extension', typeName: chunk.typeName, data: chunk.data }
      return
    case 'toolUseStart':
      content[i] = { type: 'toolCall', id: chunk.id, name: chunk.name, arguments: noArguments, partialJson: '' }
      return
    case 'toolUseArgsDelta': {
      const block = content[i]
      if (block?.type !== 'toolCall') return
      const partialJson = (block.partialJson ?? '') + chunk.fragment
      if (drafted) content[i] = streamingToolCall(block.id, block.name, partialJson, maxDepth)
      else block.partialJson = partialJson
      return
    }
    case 'toolUseEnd': {
      const block = content[i]
      if (block?.type !== 'toolCall') return
      const raw = block.partialJson ?? ''
      const parsed = parseArguments(raw, maxDepth)
      // A new block rather than `delete block.partialJson`: deleting a property turns the
      // object into a slow dictionary in V8, and every later reader of the call pays for it.
      // A failed call is a new block too: a snapshot's streaming block is not edited (see `drafted`).
      content[i] = parsed.ok
        ? { type: 'toolCall', id: block.id, name: block.name, arguments: parsed.value }
        : { type: 'toolCall', id: block.id, name: block.name, arguments: noArguments, partialJson: raw, parseError: parsed.error }
      return
    }
    case 'usage':
      addUsageChunk(draft, chunk)
      return
    case 'messageStart':
    case 'stop':
      return
  }
}

/** The arguments of a call before its JSON is parsed, or of one streamed as `""`: shared, so frozen once. */
const noArguments: Record<string, unknown> = Object.freeze({})

/**
 * Empty arguments mean "no arguments": several providers stream `""` for a
 * zero-argument call. The parsed value is frozen here, in the same walk that
 * checks it nests at most `maxDepth` levels (default {@link MAX_ARGUMENT_DEPTH}): model output is
 * untrusted, and a deeper value would overflow the stack of every recursive
 * walk after this one (immer's freeze, `JSON.stringify`, a tool's own code).
 * `JSON.parse` itself is not recursive in V8. Once per call, never per delta.
 */
function parseArguments(raw: string, maxDepth: number): { ok: true; value: Record<string, unknown> } | { ok: false; error: string } {
  if (raw.trim() === '') return { ok: true, value: noArguments }
  let value: unknown
  try {
    value = JSON.parse(raw)
  } catch (e) {
    return { ok: false, error: `arguments are not valid JSON (${(e as Error).message})` }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, error: `arguments must be a JSON object, got ${Array.isArray(value) ? 'an array' : JSON.stringify(value)}` }
  }
  if (!deepFreeze(value, maxDepth)) return { ok: false, error: `arguments are nested deeper than ${maxDepth} levels` }
  return { ok: true, value: value as Record<string, unknown> }
}

/**
 * What a streaming message has besides content and usage: fixed when the fold
 * starts, the model and the response id from `messageStart`. Its cost and stop
 * reason are known only at the end (see `MessageFold.finish`).
 */
interface HeadMeta {
  readonly provider: string
  readonly model: string
  readonly timestamp: number
  readonly responseId: string | undefined
}

/**
 * The message as of the latest chunk, kept as plain mutable objects, with the
 * frozen copies already handed out. A snapshot copies only the blocks that
 * changed since the previous one: no proxies, no walk of untouched blocks.
 */
class Head {
  private readonly work: Working = { content: [], usage: { ...emptyUsage, extra: {} } }
  private readonly changed = new Set<number>()
  /** The index added to `changed` last (-1: none since the last snapshot). */
  private lastChanged = -1
  /** The text of each text or thinking block, by content index. */
  private readonly growing: (GrowingText | undefined)[] = []
  private usageChanged = false
  private readonly frozen: AssistantContent[] = []
  private frozenUsage: Usage = emptyUsage
  private last: AssistantMessage | undefined

  constructor(
    private meta: HeadMeta,
    private readonly maxDepth: number,
    carried?: Usage,
  ) {
    if (carried !== undefined) {
      this.work.usage = { ...carried, extra: { ...carried.extra } }
      this.frozenUsage = carried
    }
  }

  /** What `messageStart` says: the model that answers and the response's id. */
  setMeta(model: string, responseId: string | undefined): void {
    this.meta = { provider: this.meta.provider, model, timestamp: this.meta.timestamp, responseId }
    this.last = undefined
  }

  apply(chunk: ProviderChunk, index: number): void {
    const growing = this.growing[index]
    if (growing !== undefined && (chunk.type === 'textDelta' || chunk.type === 'thinkingDelta')) growing.append(chunk.text)
    else {
      applyChunk(this.work, chunk, index, this.maxDepth, false)
      if (chunk.type === 'textDelta' || chunk.type === 'thinkingDelta') this.growing[index] = new GrowingText(chunk.text)
    }
    if (chunk.type === 'usage') this.usageChanged = true
    else if (index !== this.lastChanged) {
      // A run of deltas into one block adds its index once, not a Set insertion per token.
      this.changed.add(index)
      this.lastChanged = index
    }
    this.last = undefined
  }

  snapshot(): AssistantMessage {
    if (this.last !== undefined) return this.last
    for (const i of this.changed) {
      const block = this.work.content[i]!
      const growing = this.growing[i]
      if (growing !== undefined) {
        if (block.type === 'text') block.text = growing.value
        else if (block.type === 'thinking') block.thinking = growing.value
      }
      this.frozen[i] = frozenBlock(block, this.maxDepth)
    }
    this.changed.clear()
    this.lastChanged = -1
    if (this.usageChanged) {
      this.frozenUsage = Object.freeze({ ...this.work.usage, extra: Object.freeze({ ...this.work.usage.extra }) })
      this.usageChanged = false
    }
    // Written out rather than spread: this runs at every read of a streaming message.
    const { provider, model, timestamp, responseId } = this.meta
    const content = Object.freeze(this.frozen.slice())
    const usage = this.frozenUsage
    this.last = Object.freeze(
      responseId === undefined
        ? { role: 'assistant', provider, model, cost: emptyCost, stopReason: 'stop', timestamp, content, usage }
        : { role: 'assistant', provider, model, cost: emptyCost, stopReason: 'stop', timestamp, responseId, content, usage },
    )
    return this.last
  }
}

/** Characters of small deltas gathered before they are flattened into one piece. */
const FLATTEN_AT = 4096

/**
 * The first flattening, after this many characters; then after as many as the
 * text has, up to {@link FLATTEN_AT}. A short answer then holds a few flat
 * pieces rather than a rope node per token: with a thousand answers streaming
 * at once (FANOUT, 50 deltas each) that is about 1.5 KB less per run.
 */
const FLATTEN_FIRST = 64

/**
 * A block's text as it grows by one delta per token. `text += delta` keeps
 * one rope node (32 bytes in V8) per token alive until the stream ends, and
 * on a long answer copying those nodes is most of what the young-generation
 * GC does. Here the per-token nodes live only until the next
 * {@link FLATTEN_AT} characters are flattened into one string, so a long
 * answer retains about a byte per character, and reading the text is still
 * O(1) (one rope node over the flattened prefix and the tail).
 */
class GrowingText {
  private done: string
  private tail = ''
  /** When the tail is flattened: as long as the text so far, between {@link FLATTEN_FIRST} and {@link FLATTEN_AT}. */
  private flattenAt = FLATTEN_FIRST

  constructor(first: string) {
    this.done = first
  }

  append(delta: string): void {
    this.tail += delta
    if (this.tail.length >= this.flattenAt) {
      this.done += flattened(this.tail)
      this.tail = ''
      this.flattenAt = Math.min(FLATTEN_AT, Math.max(FLATTEN_FIRST, this.done.length))
    }
  }

  get value(): string {
    return this.tail === '' ? this.done : this.done + this.tail
  }
}

/**
 * `s` as one flat string rather than a rope of its deltas: V8 flattens a rope
 * before taking a substring of it, and the substring refers to the flat copy.
 * (An engine that does not flatten here only keeps more memory: the text is
 * the same.)
 */
function flattened(s: string): string {
  return (' ' + s).slice(1)
}

/**
 * A frozen copy of a working block. A shallow freeze is a deep one: tool-call
 * arguments are frozen already (the shared {@link noArguments} until they are
 * parsed, then by `freezeWithin` at parse time; a call still streaming parses
 * and freezes its partial arguments when they are read), extension data when
 * its chunk was accepted, and every other field is a string or a boolean.
 */
function frozenBlock(block: Draft<AssistantContent>, maxDepth: number): AssistantContent {
  if (isStreamingCall(block)) return streamingToolCall(block.id, block.name, block.partialJson, maxDepth)
  // `Object.assign` rather than a spread: in optimized code a spread's copy has a hidden class
  // with no transitions, and freezing it made a new hidden class for every block — one per
  // delta, garbage in the old generation until a full GC (agent-text 200k: the heap at the
  // run's end 37 -> 14 MB; reader-text 44 -> 7 MB). The block's keys are the fold's own
  // (never `__proto__`), so assigning them is defining them.
  return Object.freeze(Object.assign({}, block) as AssistantContent)
}

/** A tool call whose arguments are still arriving: some JSON text, not yet ended. */
const isStreamingCall = (block: Draft<AssistantContent> | AssistantContent): block is Draft<ToolCallContent> & { partialJson: string } =>
  block.type === 'toolCall' && block.partialJson !== undefined && block.partialJson !== '' && block.parseError === undefined

/** A call cut off before its end, as the final message holds it: its text, no arguments. */
const cutOff = (block: AssistantContent): AssistantContent =>
  isStreamingCall(block) ? Object.freeze({ type: 'toolCall', id: block.id, name: block.name, arguments: noArguments, partialJson: block.partialJson }) : block

/** Whether a call was cut off: a loop, not `some`, at the end of every answer. */
function hasStreamingCall(content: readonly AssistantContent[]): boolean {
  for (let i = 0; i < content.length; i++) if (isStreamingCall(content[i]!)) return true
  return false
}

const frozenCost = (cost: Cost): Cost => Object.freeze({ ...cost, extra: Object.freeze(cost.extra) })

interface ToolTrack {
  readonly contentIndex: number
  ended: boolean
}

/** How a fold ended, when not by a clean `stop`. */
export type FoldFailure = { readonly reason: 'error' | 'aborted'; readonly message: string; readonly kind?: ProviderErrorKind }

/**
 * The mutable accumulator behind `accumulateMessage`. Not exported from the
 * package: everything it hands out (events, messages) is frozen.
 */
export class MessageFold {
  private segment: Segment
  private started = false
  private stopReason: StopReason | undefined
  private contentLength = 0
  /** What the last content block is and whether a delta of each kind may extend it. */
  private lastKind: 'text' | 'thinking' | 'closed' = 'closed'
  /** The tool calls, by id (made at the first: most answers have none). */
  private tools: Map<string, ToolTrack> | undefined
  private usageSeen = false
  private totalSeen = false
  private readonly head: Head

  /**
   * @param retryOf a discarded attempt (see the `retry` chunk): its usage was
   * billed, so this fold starts from it; its content is dropped.
   * @param maxArgumentDepth how deep parsed tool-call arguments may nest;
   * deeper ones are the call's `parseError`.
   */
  constructor(
    private readonly model: ModelSpec,
    timestamp: number,
    retryOf?: MessageFold,
    private readonly maxArgumentDepth: number = retryOf?.maxArgumentDepth ?? MAX_ARGUMENT_DEPTH,
  ) {
    const carried = retryOf?.current().usage
    this.head = new Head({ provider: model.provider, model: model.modelId, timestamp, responseId: undefined }, maxArgumentDepth, carried)
    if (retryOf !== undefined) {
      this.usageSeen = retryOf.usageSeen
      this.totalSeen = retryOf.totalSeen
    }
    this.segment = this.newSegment(this.head.snapshot())
  }

  /** A fresh current segment; the one it replaces no longer reads the head. */
  private newSegment(base: AssistantMessage): Segment {
    if (this.segment !== undefined) this.segment.head = undefined
    return { base, log: [], memo: undefined, head: this.head, maxDepth: this.maxArgumentDepth }
  }

  /** Whether `messageStart` has been accepted. */
  get isStarted(): boolean {
    return this.started
  }

  /** The snapshot as of the last accepted chunk. Later events build on it. */
  current(): AssistantMessage {
    const message = this.segment.memo?.get(this.segment.log.length) ?? this.head.snapshot()
    if (this.segment.log.length > 0) this.segment = this.newSegment(message)
    return message
  }

  /**
   * Checks `chunk` against the contract and logs it. Returns the update event
   * to emit, `undefined` for a chunk that emits none (start, stop, usage after
   * stop), or a string naming the violation.
   */
  push(chunk: ProviderChunk): MessageUpdate | undefined | string {
    if (!this.started) {
      if (chunk.type !== 'messageStart') return `the first chunk must be 'messageStart', got '${describeType(chunk)}'`
      this.started = true
      const model = chunk.model === '' ? this.model.modelId : chunk.model
      this.head.setMeta(model, chunk.id === '' ? undefined : chunk.id)
      this.segment = this.newSegment(this.head.snapshot())
      return undefined
    }
    if (this.stopReason !== undefined && chunk.type !== 'usage') {
      return `'${describeType(chunk)}' arrived after 'stop' (only 'usage' may follow it)`
    }
    let index: number
    switch (chunk.type) {
      case 'messageStart':
        return `a second 'messageStart' arrived`
      case 'textDelta':
      case 'thinkingDelta': {
        const kind = chunk.type === 'textDelta' ? 'text' : 'thinking'
        if (typeof chunk.text !== 'string') return `'${chunk.type}' has no text`
        index = this.lastKind === kind ? this.contentLength - 1 : this.contentLength++
        this.lastKind = kind
        break
      }
      case 'thinkingSignature':
        if (typeof chunk.signature !== 'string') return `'thinkingSignature' has no signature`
        index = this.lastKind === 'thinking' ? this.contentLength - 1 : this.contentLength++
        // A signed thinking block is complete: the next thinking delta starts a new block.
        this.lastKind = 'closed'
        break
      case 'extension':
        // Server data of any depth: frozen without recursion before immer (which would recurse) sees it.
        deepFreeze(chunk.data)
        index = this.contentLength++
        this.lastKind = 'closed'
        break
      case 'thinkingRedacted':
        index = this.contentLength++
        this.lastKind = 'closed'
        break
      case 'toolUseStart': {
        const tools = (this.tools ??= new Map<string, ToolTrack>())
        if (tools.has(chunk.id)) return `tool use '${chunk.id}' started twice`
        index = this.contentLength++
        tools.set(chunk.id, { contentIndex: index, ended: false })
        this.lastKind = 'closed'
        break
      }
      case 'toolUseArgsDelta':
      case 'toolUseEnd': {
        const track = this.tools?.get(chunk.id)
        if (track === undefined) return `'${chunk.type}' for tool use '${chunk.id}', which never started`
        if (track.ended) return `'${chunk.type}' for tool use '${chunk.id}' after its end`
        if (chunk.type === 'toolUseEnd') track.ended = true
        else if (typeof chunk.fragment !== 'string') return `'toolUseArgsDelta' for '${chunk.id}' has no fragment`
        index = track.contentIndex
        break
      }
      case 'retry':
        return `'retry' must be handled before the fold (accumulateMessage starts a new attempt)`
      case 'stop':
        if (!Object.hasOwn(stopReasonOf, chunk.reason)) return `'stop' has an unknown reason '${String(chunk.reason)}'`
        this.stopReason = stopReasonOf[chunk.reason]
        return undefined
      case 'usage':
        this.usageSeen = true
        if (chunk.total !== undefined) this.totalSeen = true
        index = 0
        if (this.stopReason !== undefined) {
          // After stop there is no update event; the usage still counts.
          this.log(new MessageUpdate(chunk, index, this.segment, this.segment.log.length + 1))
          return undefined
        }
        break
      default:
        return `unknown chunk type '${describeType(chunk)}'`
    }
    const update = new MessageUpdate(chunk, index, this.segment, this.segment.log.length + 1)
    this.log(update)
    return update
  }

  private log(update: MessageUpdate): void {
    this.head.apply(update.chunk, update.contentIndex)
    this.segment.log.push(update)
    if (this.segment.log.length >= MAX_UNREAD) this.current()
  }

  /** Whether a clean `stop` was seen. */
  get stopped(): boolean {
    return this.stopReason !== undefined
  }

  /**
   * The final message: the stop reason the stream gave, or `failure`'s.
   * Tool calls that never ended keep their `partialJson`, with no arguments
   * (`{}`: only complete, strictly parsed arguments are final); cost is priced
   * from the model's rates.
   */
  finish(failure?: FoldFailure): AssistantMessage {
    const stopReason: StopReason = failure?.reason ?? this.stopReason ?? 'error'
    const missingStop = failure === undefined && this.stopReason === undefined
    const errorMessage = failure?.message ?? (missingStop ? `the stream ended without a 'stop' chunk` : undefined)
    const current = this.current()
    const u = current.usage
    const usage = this.usageSeen && !this.totalSeen ? Object.freeze({ ...u, total: u.input + u.output + u.cacheRead + u.cacheWrite }) : u
    return Object.freeze({
      ...current,
      content: hasStreamingCall(current.content) ? Object.freeze(current.content.map(cutOff)) : current.content,
      stopReason,
      ...(errorMessage === undefined ? {} : { errorMessage }),
      ...(failure?.kind === undefined ? {} : { errorKind: failure.kind }),
      usage,
      cost: frozenCost(costOf(usage, this.model.cost)),
    })
  }
}

function describeType(chunk: unknown): string {
  const type = typeof chunk === 'object' && chunk !== null ? (chunk as { type?: unknown }).type : undefined
  return typeof type === 'string' ? type : String(type)
}

/**
 * A two-delta answer folded to its end: the fold, its head and segment, its
 * update events and growing text, a frozen snapshot and the final message.
 * Kept, so that their hidden classes outlive a run (see `resident`): the
 * per-token code and the code that reads the final message embed them.
 */
function residentAnswer(): readonly unknown[] {
  const fold = new MessageFold({ provider: 'resident', modelId: 'resident', thinkingLevel: 'off' }, 0)
  const updates = [fold.push({ type: 'messageStart', id: 'resident', model: '' }), fold.push({ type: 'textDelta', text: 'a' }), fold.push({ type: 'textDelta', text: 'b' })]
  const snapshot = fold.current()
  fold.push({ type: 'stop', reason: 'endTurn' })
  return [fold, updates, snapshot, fold.finish()]
}
resident(residentAnswer())
