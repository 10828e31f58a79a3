/**
 * The `messageUpdate` events of a message fold (see `message-fold.ts`): each
 * keeps the log segment it belongs to, and its frozen message is produced
 * from that segment when it is first read.
 */
import { produce } from 'immer'
import type { ProviderChunk } from '../types/chunk.js'
import type { MessageUpdateEvent } from '../types/event.js'
import type { AssistantMessage } from '../types/message.js'
import { applyChunks } from './chunk-apply.js'
import type { Head } from './message-head.js'

/** Chunks logged since the last materialized snapshot. Immutable once a newer segment exists. */
export interface Segment {
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
 * observes keeps a bounded log instead of every chunk it ever saw. Each
 * rebase freezes a snapshot of the message (its changed block, its content
 * array, the message) for the new segment's base: after 64 chunks that was
 * about 40 instructions per delta of a stream nobody reads. TEXT 10k, async
 * source, full GC before each run, 15 warm-up + 5 runs under callgrind (node
 * --single-threaded): 2,873 → 2,790 instructions per delta with 256 (1,024:
 * 2,755). An unread log holds at most 256 updates,
 * about 8 KB.
 */
export const MAX_UNREAD = 256

/**
 * A segment some of whose updates were read is rebased after this many
 * chunks: its memo keeps every snapshot read, and a reader of every update
 * (an Agent's `state$`) would otherwise keep up to {@link MAX_UNREAD} of
 * them alive, for the young generation's collector to copy (AGENT TEXT 10k,
 * 20 warm-up + 8 runs under callgrind: about 330 instructions of scavenging
 * per delta more than with 64).
 */
export const MAX_READ = 64

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
