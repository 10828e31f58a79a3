/**
 * The start of a `fetch` response's body, for an error to quote (the
 * `node:http` counterpart is `readNodeStart` in node-http.ts).
 *
 * Internal: not exported from the package.
 */

/**
 * Up to `max` characters of a body, then stops reading (the rest may never
 * end). A read that fails ends it with what was read so far: the caller only
 * quotes the body, and its status already says what went wrong.
 */
export async function readStart(body: ReadableStream<Uint8Array>, max: number): Promise<string> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let text = ''
  try {
    while (text.length < max) {
      const { done, value } = await reader.read()
      if (done) return text + decoder.decode()
      text += decoder.decode(value, { stream: true })
    }
    return text.slice(0, max)
  } catch {
    return text.slice(0, max)
  } finally {
    void reader.cancel().catch(() => undefined)
  }
}
