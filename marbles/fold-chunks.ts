/** The final message a chunk sequence folds into: for testing a provider adapter's output without running a loop. */
import { concat, from, throwError } from 'rxjs'
import { accumulateMessage } from '../operators/accumulate-message.js'
import type { ProviderChunk } from '../src/types/chunk.js'
import type { AssistantMessage } from '../src/types/message.js'
import { modelSpec, type ModelSpec } from '../src/types/model.js'

/**
 * Folds `chunks` (then `failure`, if given, as the stream's error) exactly as
 * the loop does, synchronously, and returns the assistant message.
 *
 * ```ts
 * const message = foldChunks(decodeWire(new MyDecoder(), [recordedBody]), model)
 * expect(message.stopReason).toBe('toolUse')
 * ```
 */
export function foldChunks(chunks: readonly ProviderChunk[], model: ModelSpec = modelSpec('test', 'test-1'), failure?: unknown): AssistantMessage {
  let message: AssistantMessage | undefined
  const source = failure === undefined ? from(chunks) : concat(from(chunks), throwError(() => failure))
  source.pipe(accumulateMessage({ model, now: () => 0 })).subscribe((e) => {
    if (e.type === 'messageEnd') message = e.message
  })
  if (message === undefined) throw new Error('foldChunks: the chunks did not fold synchronously')
  return message
}

/** `text` as UTF-8 network chunks of `size` bytes, cut anywhere (inside multi-byte characters too), as a network may. */
export function splitBytes(text: string, size: number): Uint8Array[] {
  const bytes = new TextEncoder().encode(text)
  const out: Uint8Array[] = []
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size))
  return out
}
