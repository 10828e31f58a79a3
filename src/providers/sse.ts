/**
 * Server-sent events from a byte stream, however the network split it.
 * Parsing is eventsource-parser's (maintained, spec-complete, no
 * dependencies); this file only turns bytes into text without breaking a
 * multi-byte character across network chunks.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser'

/** One SSE event: `event` is the `event:` field when the server sent one. */
export interface SseEvent {
  readonly event?: string
  readonly data: string
}

/** An incremental SSE decoder: bytes in, complete events out. */
export class SseDecoder {
  private readonly text = new TextDecoder('utf-8')
  private pending: SseEvent[] = []
  private readonly parser = createParser({
    onEvent: (message: EventSourceMessage) => {
      this.pending.push(message.event === undefined ? { data: message.data } : { event: message.event, data: message.data })
    },
  })

  private lastChar = '\n'

  /** Feeds one network chunk; returns the events it completed. */
  push(bytes: Uint8Array | string): SseEvent[] {
    this.feed(typeof bytes === 'string' ? bytes : this.text.decode(bytes, { stream: true }))
    return this.take()
  }

  /**
   * The body ended. An event whose lines are complete but that lacks the
   * closing blank line is dispatched (several servers omit it); a line cut
   * off mid-way is dropped, as the SSE spec says: it is a truncated event.
   */
  end(): SseEvent[] {
    this.feed(this.text.decode())
    if (this.lastChar === '\n' || this.lastChar === '\r') this.parser.feed('\n\n')
    return this.take()
  }

  private feed(text: string): void {
    if (text === '') return
    this.lastChar = text[text.length - 1]!
    this.parser.feed(text)
  }

  private take(): SseEvent[] {
    const out = this.pending
    this.pending = []
    return out
  }
}
