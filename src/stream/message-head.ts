/**
 * The streaming message's working copy (`Head`) and the frozen copies made
 * from it: a snapshot copies only the blocks changed since the previous one.
 * Also the frozen blocks of the final message (a call cut off, the cost).
 */
import type { Draft } from 'immer'
import type { ProviderChunk } from '../types/chunk.js'
import type { AssistantMessage } from '../types/message.js'
import type { AssistantContent, ToolCallContent } from '../types/content.js'
import type { Usage } from '../types/usage.js'
import { emptyCost, emptyUsage, type Cost } from '../types/usage.js'
import { applyChunk, noArguments, type ChunkOf, type Working } from './chunk-apply.js'
import { streamingToolCall } from './partial-arguments.js'

/**
 * What a streaming message has besides content and usage: fixed when the fold
 * starts, the model and the response id from `messageStart`. Its cost and stop
 * reason are known only at the end (see `MessageFold.finish`).
 */
export interface HeadMeta {
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
export class Head {
  /**
   * The usage is `emptyUsage`'s fields written out, not `{ ...emptyUsage, extra: {} }`: a spread of
   * a frozen object takes V8's slow clone, one property at a time (TOOLS 200 turns, one head a turn,
   * callgrind, two full GCs before each of 6 runs: with the final message's cost below, 88.3 -> 86.5 M
   * instructions a run).
   */
  private readonly work: Working = { content: [], usage: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0, total: 0, extra: {} } }
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

  /** What `apply` does with a text or thinking delta into block `index`, whose text is growing already. */
  extend(index: number, text: string): void {
    this.growing[index]!.append(text)
    this.mark(index)
    this.last = undefined
  }

  /** What `apply` does with a tool call's argument fragment into block `index`. */
  extendArguments(index: number, fragment: string): void {
    const block = this.work.content[index]
    if (block?.type === 'toolCall') block.partialJson = (block.partialJson ?? '') + fragment
    this.mark(index)
    this.last = undefined
  }

  /**
   * Applies `chunk`, whose `type` is `type` (read once by the fold: chunks come in a dozen layouts,
   * so each read of `type` is a megamorphic lookup; TOOLS 200: 86.5 -> 85.5 M instructions a run,
   * callgrind, with the same in MessageFold.push), to block `index`.
   */
  apply(chunk: ProviderChunk, index: number, type: ProviderChunk['type'] = chunk.type): void {
    if (type === 'textDelta' || type === 'thinkingDelta') {
      const { text } = chunk as ChunkOf<'textDelta' | 'thinkingDelta'>
      if (this.growing[index] !== undefined) return this.extend(index, text)
      applyChunk(this.work, chunk, index, this.maxDepth, false, type)
      this.growing[index] = new GrowingText(text)
    } else applyChunk(this.work, chunk, index, this.maxDepth, false, type)
    if (type === 'usage') this.usageChanged = true
    else this.mark(index)
    this.last = undefined
  }

  /** Notes that block `index` changed: a run of deltas into one block adds its index once, not a Set insertion per token. */
  private mark(index: number): void {
    if (index !== this.lastChanged) {
      this.changed.add(index)
      this.lastChanged = index
    }
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
    // An empty content (the snapshot at `messageStart`) is one frozen array for all: no copy, no freeze.
    const content = this.frozen.length === 0 ? noContent : Object.freeze(this.frozen.slice())
    const usage = this.frozenUsage
    this.last = Object.freeze(
      responseId === undefined
        ? { role: 'assistant', provider, model, cost: emptyCost, stopReason: 'stop', timestamp, content, usage }
        : { role: 'assistant', provider, model, cost: emptyCost, stopReason: 'stop', timestamp, responseId, content, usage },
    )
    return this.last
  }
}

/** The content of every snapshot before the first block (TOOLS 200: see `MessageFold.lastTool`). */
const noContent: readonly AssistantContent[] = Object.freeze([])

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
  // The two commonest blocks as literals of the working copy's own keys (`applyChunk` makes a text
  // block `{ type, text }` and an ended call `{ type, id, name, arguments }`, nothing else):
  // `Object.assign` took about 890 instructions a block. TOOLS 200 turns (4 blocks an answer),
  // callgrind, node --single-threaded, full GC before each of 6 runs: Object.assign 8.1 -> 3.9 M for
  // the 6 runs, JIT code + builtins 292.8 -> 286.7 M (about 1 M instructions a run).
  if (block.type === 'text') return Object.freeze({ type: 'text', text: block.text })
  if (block.type === 'toolCall' && block.partialJson === undefined) {
    return Object.freeze({ type: 'toolCall', id: block.id, name: block.name, arguments: block.arguments as Record<string, unknown> })
  }
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
export const cutOff = (block: AssistantContent): AssistantContent =>
  isStreamingCall(block) ? Object.freeze({ type: 'toolCall', id: block.id, name: block.name, arguments: noArguments, partialJson: block.partialJson }) : block

/** Whether a call was cut off: a loop, not `some`, at the end of every answer. */
export function hasStreamingCall(content: readonly AssistantContent[]): boolean {
  for (let i = 0; i < content.length; i++) if (isStreamingCall(content[i]!)) return true
  return false
}

/** `cost`, frozen: a copy, or the shared `emptyCost` itself (no rates: most models a run names), frozen already. */
export const frozenCost = (cost: Cost): Cost => (cost === emptyCost ? cost : Object.freeze({ ...cost, extra: Object.freeze(cost.extra) }))
