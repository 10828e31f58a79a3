/**
 * Long transcripts that are not copied until someone reads them.
 *
 * A growing transcript (`growing-transcript.ts`) shares one backing array,
 * but each snapshot is still its own frozen array: an exact-size copy of the
 * history. A run appends twice at least (its prompt, its answer), and both
 * the loop's turn state and the Agent's state hold each result, so a run on
 * a long conversation copied the whole history twice. At 60,000 messages a
 * copy is a 480 kB array in V8's large-object space, fresh pages every time:
 * 0.3–0.4 ms each (`slice` after a full GC), as much as a whole short run
 * on a 1,000-message conversation.
 *
 * From {@link LAZY_FROM} messages on, the holders of a transcript (an
 * `AgentContext`, an `AgentState`) keep a {@link Transcript} — a length on a
 * backing — and their `messages` is an own, enumerable accessor that makes
 * the frozen array on first read and hands the same one to every later read
 * (and to every other holder of the same transcript). Reading it is what a
 * plain field read gives: a frozen `readonly AgentMessage[]`, in spreads,
 * `Object.keys`, JSON and deep equality alike. The runtime's own stages read
 * the transcript through {@link transcriptOf} and never make the array.
 *
 * Only long transcripts: defining an accessor costs about 0.5 µs (a plain
 * field a few ns), and copying a short history is cheap (10,000 messages:
 * 0.02 ms, in the young generation); a transcript under {@link LAZY_FROM}
 * is held as an array, exactly as before.
 *
 * Internal: not exported from the package.
 */
import { backingOf, emptyTranscript, grown, snapshotOf, type Backing } from './growing-transcript.js'
import type { AgentMessage } from './message.js'

/**
 * Transcripts from this many messages on are held lazily. Under it a copy
 * stays in V8's young generation (8,192 messages: 64 kB); past ~16,000 it is
 * a large object, several times slower per message (see the module comment).
 */
export const LAZY_FROM = 8192

/** The first `length` messages of a backing, made into a frozen array only when asked ({@link array}). */
export class Transcript {
  #array: readonly AgentMessage[] | undefined
  /** How many lazy snapshots were made of it while streaming (`withStreamMessage`). */
  lazyViews = 0

  constructor(
    readonly backing: Backing,
    readonly length: number,
    array?: readonly AgentMessage[],
  ) {
    this.#array = array
  }

  /** Whether the frozen array exists already (reading {@link array} is then free). */
  get materialized(): boolean {
    return this.#array !== undefined
  }

  /** The frozen array: made once, shared with every holder of this transcript. */
  array(): readonly AgentMessage[] {
    return (this.#array ??= snapshotOf(this.backing, this.length))
  }

  /** Message `i` (`i < length`). */
  at(i: number): AgentMessage {
    return this.backing.items[i]!
  }

  /** The messages from `start` on, as a plain array. */
  from(start: number): AgentMessage[] {
    return this.backing.items.slice(start, this.length)
  }

  /** Whether it holds no custom message (O(1)). */
  get noCustom(): boolean {
    return this.backing.firstCustom >= this.length
  }

  /** This transcript followed by `more`; shared with another holder that appended the same messages. */
  append(more: readonly AgentMessage[]): Transcript {
    if (more.length === 0) return this
    const backing = grown(this.backing, undefined, this.length, more)
    const length = this.length + more.length
    const tip = backing.tip
    if (tip instanceof Transcript && tip.length === length) return tip
    const next = new Transcript(backing, length)
    backing.tip = next
    return next
  }
}

const held = new WeakMap<object, Transcript>()
/** Whether any holder was made lazy in this process: until then the checks below skip the WeakMap (one per streamed delta). */
let anyHeld = false

/** The one getter of every lazy holder: shared, so that holders keep one hidden class. */
const MESSAGES: PropertyDescriptor = {
  get(this: object): readonly AgentMessage[] {
    return held.get(this)!.array()
  },
  enumerable: true,
  configurable: false,
}

/** Gives `holder` an own `messages` that reads as `transcript`'s array (made on first read). */
export function holdLazily(holder: object, transcript: Transcript): void {
  Object.defineProperty(holder, 'messages', MESSAGES)
  held.set(holder, transcript)
  anyHeld = true
}

/** The transcript of a lazy holder, without making its array; `undefined` for any other object. */
export const lazyTranscriptOf = (holder: object): Transcript | undefined => (anyHeld ? held.get(holder) : undefined)

/**
 * The transcript `holder.messages` is, as a {@link Transcript}, without
 * making an array: a lazy holder's own, or one over the backing of a growing
 * transcript array; `undefined` for any other array.
 */
export function transcriptOf(holder: { readonly messages: readonly AgentMessage[] }): Transcript | undefined {
  const lazy = lazyTranscriptOf(holder)
  if (lazy !== undefined) return lazy
  const messages = holder.messages
  const backing = backingOf(messages)
  if (backing === undefined) return undefined
  const tip = backing.tip
  if (tip instanceof Transcript && tip.length === messages.length) return tip
  return new Transcript(backing, messages.length, messages)
}

/**
 * A transcript of `message` alone, built as a run builds one (appended to a
 * growing transcript): what a resident lazy holder (`src/rx/resident.ts`,
 * `resident-states.ts`) is given, so that the hidden classes of a run on a long transcript
 * outlive the run without a long transcript kept for the process.
 */
export const residentTranscript = (message: AgentMessage): Transcript => transcriptOf({ messages: emptyTranscript() })!.append([message])

/** The number of messages of `holder`, without making a lazy holder's array. */
export const transcriptLength = (holder: { readonly messages: readonly AgentMessage[] }): number => lazyTranscriptOf(holder)?.length ?? holder.messages.length

/**
 * `holder`'s transcript followed by `more` as a {@link Transcript} when the
 * result is long enough to be held lazily ({@link LAZY_FROM}); `undefined`
 * when it is not (the caller appends an array as before).
 */
export function lazilyAppended(holder: { readonly messages: readonly AgentMessage[] }, more: readonly AgentMessage[]): Transcript | undefined {
  if (transcriptLength(holder) + more.length < LAZY_FROM) return undefined
  return transcriptOf(holder)?.append(more)
}

/** How a context transform reads a lazy transcript without making its array. */
export type TranscriptTransform = (transcript: Transcript, info: { readonly turnIndex: number; readonly overflow?: boolean; readonly contextWindow?: number }) => readonly AgentMessage[]

const transcriptTransforms = new WeakMap<object, TranscriptTransform>()

/** Notes that `transform` (a sliding window) reads a lazy transcript with `read`: see {@link transcriptTransformOf}. */
export function readsTranscripts(transform: object, read: TranscriptTransform): void {
  transcriptTransforms.set(transform, read)
}

/** How `transform` reads a lazy transcript without making its array, when it can (the default sliding window). */
export const transcriptTransformOf = (transform: object): TranscriptTransform | undefined => transcriptTransforms.get(transform)
