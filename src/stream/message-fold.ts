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
import type { ProviderChunk } from '../types/chunk.js'
import type { AssistantMessage } from '../types/message.js'
import type { ModelSpec } from '../types/model.js'
import type { StopReason } from '../types/stop-reason.js'
import type { ProviderErrorKind } from '../types/provider-error.js'
import { costOf, emptyCost, emptyUsage } from '../types/usage.js'
import { deepFreeze, MAX_ARGUMENT_DEPTH } from '../types/deep-freeze.js'
import { MAX_READ, MAX_UNREAD, MessageUpdate, type Segment } from './message-update.js'
import { cutOff, frozenCost, hasStreamingCall, Head } from './message-head.js'
import { describeType, stopReasonOf, type ChunkOf } from './chunk-apply.js'
import type { Writable } from '../types/writable.js'

export { MessageUpdate } from './message-update.js'

interface ToolTrack {
  readonly id: string
  readonly contentIndex: number
  ended: boolean
}

/** How a fold ended, when not by a clean `stop`. */
export type FoldFailure = { readonly reason: 'error' | 'aborted'; readonly message: string; readonly kind?: ProviderErrorKind }

/**
 * The base of a fold's segment before `messageStart`. No update is made before it (`push` answers
 * every other chunk with a violation), so nothing reads it; a snapshot of the head there (an empty
 * content array and a message, both frozen) was thrown away at `messageStart` in every answer.
 * TOOLS 200, callgrind (node --single-threaded, full GC before each of 6 runs): 332.4 -> 330.1 M instructions.
 */
const notStarted: AssistantMessage = Object.freeze({
  role: 'assistant',
  provider: '',
  model: '',
  cost: emptyCost,
  stopReason: 'stop',
  timestamp: 0,
  content: Object.freeze([]),
  usage: emptyUsage,
})

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
  /**
   * The call of the last tool chunk, whose deltas come in a run (each found its call by a Map lookup). With the head's
   * shared empty content: TOOLS 200, callgrind (40 warm-up, 4 runs after two full GCs): 52.74 -> 52.34 M instructions a run.
   */
  private lastTool: ToolTrack | undefined = undefined
  private usageSeen = false
  private totalSeen = false
  private readonly head: Head

  /**
   * @param retryOf a discarded attempt (see the `retry` chunk): its usage was billed, so this fold starts from it; its content is dropped.
   * @param maxArgumentDepth how deep parsed tool-call arguments may nest; deeper ones are the call's `parseError`.
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
    // Not a snapshot of the head: `messageStart` sets the model and id and starts the first real segment (see `push`).
    this.segment = this.newSegment(notStarted)
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
    const { memo, log } = this.segment
    let message = memo?.get(log.length)
    if (message === undefined) {
      message = this.head.snapshot()
      // Kept for the update that ends the segment (the MAX_READ-th chunk of a read segment: it is read after the segment lost the
      // head), when its updates are being read (`memo` made): it went through immer's `produce` for one chunk.
      // AGENT TEXT 100k, CPU per delta (8 alternating runs each in one process after a full GC, a timing script
      // over bench/runtimes/rxagent.mjs): Agent 2.25 -> 1.54 µs, agentLoop + reader 1.77 -> 1.34 µs.
      if (log.length > 0) memo?.set(log.length, message)
    }
    if (log.length > 0) this.segment = this.newSegment(message)
    return message
  }

  /**
   * Checks `chunk` against the contract and logs it. Returns the update event
   * to emit, `undefined` for a chunk that emits none (start, stop, usage after
   * stop), or a string naming the violation.
   */
  push(chunk: ProviderChunk, type: ProviderChunk['type'] = chunk.type): MessageUpdate | undefined | string {
    // `type` is read once, here or by the caller that read it already (`accumulateMessage`), and handed on to the head:
    // chunks come in a dozen layouts, so each read of `type` is a megamorphic lookup (see `log`).
    // The commonest chunk by far, a text delta into the text block already streaming, has a path of its own: the same
    // checks, update and log as below, without the walk through every chunk type. TEXT 10k, async source, full GC before
    // each run, 15 warm-up + 5 runs under callgrind (node --single-threaded): 2,800 -> 2,746 instructions per delta.
    if (type === 'textDelta' && this.lastKind === 'text' && this.stopReason === undefined) {
      const text = (chunk as ChunkOf<'textDelta'>).text
      if (typeof text === 'string') {
        const index = this.contentLength - 1
        const update = new MessageUpdate(chunk, index, this.segment, this.segment.log.length + 1)
        this.head.extend(index, text)
        this.append(update)
        return update
      }
    }
    // So has the next argument fragment of the call streaming (TOOLS 200 turns, 30 a turn, callgrind, 40 warm-up runs,
    // then 4 after two full GCs each: 49.40 -> 48.75 M instructions a run).
    if (type === 'toolUseArgsDelta' && this.stopReason === undefined) {
      const { id, fragment } = chunk as ChunkOf<'toolUseArgsDelta'>
      const track = this.lastTool
      if (track !== undefined && track.id === id && !track.ended && typeof fragment === 'string') {
        const update = new MessageUpdate(chunk, track.contentIndex, this.segment, this.segment.log.length + 1)
        this.head.extendArguments(track.contentIndex, fragment)
        this.append(update)
        return update
      }
    }
    if (!this.started) {
      if (type !== 'messageStart') return `the first chunk must be 'messageStart', got '${describeType(chunk)}'`
      this.started = true
      const start = chunk as ChunkOf<'messageStart'>
      const model = start.model === '' ? this.model.modelId : start.model
      this.head.setMeta(model, start.id === '' ? undefined : start.id)
      this.segment = this.newSegment(this.head.snapshot())
      return undefined
    }
    if (this.stopReason !== undefined && type !== 'usage') {
      return `'${describeType(chunk)}' arrived after 'stop' (only 'usage' may follow it)`
    }
    let index: number
    switch (type) {
      case 'messageStart':
        return `a second 'messageStart' arrived`
      case 'textDelta':
      case 'thinkingDelta': {
        const kind = type === 'textDelta' ? 'text' : 'thinking'
        if (typeof (chunk as ChunkOf<'textDelta' | 'thinkingDelta'>).text !== 'string') return `'${type}' has no text`
        index = this.lastKind === kind ? this.contentLength - 1 : this.contentLength++
        this.lastKind = kind
        break
      }
      case 'thinkingSignature':
        if (typeof (chunk as ChunkOf<'thinkingSignature'>).signature !== 'string') return `'thinkingSignature' has no signature`
        index = this.lastKind === 'thinking' ? this.contentLength - 1 : this.contentLength++
        // A signed thinking block is complete: the next thinking delta starts a new block.
        this.lastKind = 'closed'
        break
      case 'extension':
        // Server data of any depth: frozen without recursion before immer (which would recurse) sees it.
        deepFreeze((chunk as ChunkOf<'extension'>).data)
        index = this.contentLength++
        this.lastKind = 'closed'
        break
      case 'thinkingRedacted':
        index = this.contentLength++
        this.lastKind = 'closed'
        break
      case 'toolUseStart': {
        const id = (chunk as ChunkOf<'toolUseStart'>).id
        const tools = (this.tools ??= new Map<string, ToolTrack>())
        if (tools.has(id)) return `tool use '${id}' started twice`
        index = this.contentLength++
        tools.set(id, (this.lastTool = { id, contentIndex: index, ended: false }))
        this.lastKind = 'closed'
        break
      }
      case 'toolUseArgsDelta':
      case 'toolUseEnd': {
        const { id } = chunk as ChunkOf<'toolUseArgsDelta' | 'toolUseEnd'>
        const last = this.lastTool
        const track = last !== undefined && last.id === id ? last : this.tools?.get(id)
        if (track === undefined) return `'${type}' for tool use '${id}', which never started`
        this.lastTool = track
        if (track.ended) return `'${type}' for tool use '${id}' after its end`
        if (type === 'toolUseEnd') track.ended = true
        else if (typeof (chunk as ChunkOf<'toolUseArgsDelta'>).fragment !== 'string') return `'toolUseArgsDelta' for '${id}' has no fragment`
        index = track.contentIndex
        break
      }
      case 'retry':
        return `'retry' must be handled before the fold (accumulateMessage starts a new attempt)`
      case 'stop': {
        const reason = (chunk as ChunkOf<'stop'>).reason
        if (!Object.hasOwn(stopReasonOf, reason)) return `'stop' has an unknown reason '${String(reason)}'`
        this.stopReason = stopReasonOf[reason]
        return undefined
      }
      case 'usage':
        this.usageSeen = true
        if ((chunk as ChunkOf<'usage'>).total !== undefined) this.totalSeen = true
        index = 0
        if (this.stopReason !== undefined) {
          // After stop there is no update event; the usage still counts.
          this.log(new MessageUpdate(chunk, index, this.segment, this.segment.log.length + 1), type)
          return undefined
        }
        break
      default:
        return `unknown chunk type '${describeType(chunk)}'`
    }
    const update = new MessageUpdate(chunk, index, this.segment, this.segment.log.length + 1)
    this.log(update, type)
    return update
  }

  /**
   * Applies and logs an update whose chunk's `type` is `type`. Handed on rather than read again by the head and by
   * `applyChunk`: with the read `accumulateMessage` shares with `push`, three megamorphic lookups fewer per tool-call
   * chunk and one per text delta. TOOLS 200 turns, callgrind, node --single-threaded, full GC before each of 6 runs:
   * megamorphic loads 26.2 -> 20.4 M for the 6 runs; JIT code and builtins 309.1 -> 300.9 M (1.4 M a run fewer).
   */
  private log(update: MessageUpdate, type: ProviderChunk['type']): void {
    this.head.apply(update.chunk, update.contentIndex, type)
    this.append(update)
  }

  /** Adds an update the head has applied to the current segment's log. */
  private append(update: MessageUpdate): void {
    const { log, memo } = this.segment
    log.push(update)
    if (log.length >= (memo === undefined ? MAX_UNREAD : MAX_READ)) this.current()
  }

  /** Whether a clean `stop` was seen. */
  get stopped(): boolean {
    return this.stopReason !== undefined
  }

  /**
   * The final message: the stop reason the stream gave, or `failure`'s. Tool calls that never ended keep their
   * `partialJson`, with no arguments (`{}`: only complete, strictly parsed arguments are final); cost is priced
   * from the model's rates.
   */
  finish(failure?: FoldFailure): AssistantMessage {
    const stopReason: StopReason = failure?.reason ?? this.stopReason ?? 'error'
    const missingStop = failure === undefined && this.stopReason === undefined
    const errorMessage = failure?.message ?? (missingStop ? `the stream ended without a 'stop' chunk` : undefined)
    const current = this.current()
    const u = current.usage
    const usage = this.usageSeen && !this.totalSeen ? Object.freeze({ ...u, total: u.input + u.output + u.cacheRead + u.cacheWrite }) : u
    // Written out, in the keys' order of a spread of the snapshot, rather than `{ ...current, … }`: a spread of a frozen
    // object takes V8's slow clone, one property at a time. TOOLS 200 turns (one final message a turn), callgrind, two
    // full GCs before each of 6 runs: 88.5 -> 88.3 M instructions a run.
    const { provider, model, timestamp, responseId } = current
    const content = hasStreamingCall(current.content) ? Object.freeze(current.content.map(cutOff)) : current.content
    const cost = frozenCost(costOf(usage, this.model.cost))
    const message: Writable<AssistantMessage> =
      responseId === undefined
        ? { role: 'assistant', provider, model, cost, stopReason, timestamp, content, usage }
        : { role: 'assistant', provider, model, cost, stopReason, timestamp, responseId, content, usage }
    if (errorMessage !== undefined) message.errorMessage = errorMessage
    if (failure?.kind !== undefined) message.errorKind = failure.kind
    return Object.freeze(message)
  }
}
