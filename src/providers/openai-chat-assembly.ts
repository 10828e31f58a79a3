/**
 * The Chat Completions transcript from its messages' parts (see
 * `openaiWirePart`): the placement rules that look across messages, part by
 * part, so that an assembly can go on from where an earlier one stopped.
 */
import type { Compat } from './openai-chat-compat.js'
import type { OpenAIWirePart } from './openai-chat-request.js'

/** Where an assembly stands after some parts: what the next part's placement depends on. */
export interface OpenAIAssemblyState<T> {
  /** The messages so far. */
  readonly out: readonly T[]
  readonly lastRole: OpenAIWirePart<T>['role'] | undefined
  /** Images of the current run of tool results, sent once it ends. */
  readonly pending: readonly T[]
}

/**
 * The transcript from its parts, part by part (see {@link openaiAssemble}):
 * it can start from the state an earlier assembly reached (a transcript that
 * extends one assembled before), and give its own state before the end.
 */
export class OpenAIAssembly<T> {
  private readonly out: T[]
  private lastRole: OpenAIWirePart<T>['role'] | undefined
  private pending: T[]

  constructor(
    private readonly compat: Compat,
    private readonly filler: T,
    private readonly imagesMessage: (images: readonly T[]) => T,
    from?: OpenAIAssemblyState<T>,
  ) {
    this.out = from === undefined ? [] : from.out.slice()
    this.lastRole = from?.lastRole
    this.pending = from === undefined ? [] : from.pending.slice()
  }

  /** Places the next part. */
  add(part: OpenAIWirePart<T>): void {
    if (part.role === 'tool') {
      if (part.message !== undefined) this.push('tool', part.message)
      for (const image of part.images) this.pending.push(image)
      return
    }
    this.flushImages()
    if (part.message !== undefined) {
      if (part.role === 'user') this.pushUser(part.message)
      else this.push('assistant', part.message)
    }
  }

  /** Where the assembly stands (copies: adding more parts does not change it). */
  state(): OpenAIAssemblyState<T> {
    return { out: this.out.slice(), lastRole: this.lastRole, pending: this.pending.slice() }
  }

  /** The messages, with the images still pending sent; the assembly ends here. */
  finish(): T[] {
    this.flushImages()
    return this.out
  }

  private push(role: OpenAIWirePart<T>['role'], wire: T): void {
    this.out.push(wire)
    this.lastRole = role
  }

  private pushUser(wire: T): void {
    if (this.compat.requiresAssistantAfterToolResult && this.lastRole === 'tool') this.push('assistant', this.filler)
    this.push('user', wire)
  }

  private flushImages(): void {
    if (this.pending.length === 0) return
    this.pushUser(this.imagesMessage(this.pending))
    this.pending = []
  }
}

/**
 * The transcript from its parts: tool results' images sent in a user message
 * once their run ends, and, where the server wants one, an assistant message
 * between tool results and a user message. `filler` is
 * {@link toolResultsAcknowledged} and `imagesMessage` builds the images'
 * user message, in representation `T`.
 */
export function openaiAssemble<T>(parts: Iterable<OpenAIWirePart<T>>, compat: Compat, filler: T, imagesMessage: (images: readonly T[]) => T): T[] {
  const assembly = new OpenAIAssembly(compat, filler, imagesMessage)
  for (const part of parts) assembly.add(part)
  return assembly.finish()
}
