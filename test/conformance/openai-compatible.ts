/**
 * Conformance of the Chat Completions decoder, with each server's compat
 * row, against real recordings of compatible servers
 * (../shared/fixtures/openai-compatible): Groq (usage in `x_groq.usage`),
 * xAI (`reasoning_content`, reasoning outside `completion_tokens`), and an
 * OpenAI-compatible gateway serving Claude (tool call at index 1).
 */
import { basename } from 'node:path'
import { compatFor, type CompatServer } from '../../src/providers/openai-compatible.js'
import { checkStream, wireOfChunks } from './openai-chat.js'
import type { ConformanceSuite } from './types.js'

/** The server a recording comes from, by its file name's first word. */
function serverOf(name: string): CompatServer {
  const first = name.split(/[-.]/)[0] ?? ''
  const known: readonly CompatServer[] = ['ollama', 'vllm', 'llamacpp', 'openrouter', 'groq', 'deepseek', 'xai', 'mistral', 'together', 'fireworks', 'cerebras', 'lmstudio']
  return (known as readonly string[]).includes(first) ? (first as CompatServer) : 'generic'
}

export const suite: ConformanceSuite = (path, contents) => {
  const name = basename(path)
  const server = serverOf(name)
  const provider = server === 'generic' ? 'openai-compatible' : server
  // vercel/ai's recordings of these servers hold no [DONE]: decoded as they are, the finish_reason plus the body's end completes them.
  if (name.endsWith('.chunks.txt')) return checkStream(wireOfChunks(contents, false), provider, compatFor(server))
  if (name.endsWith('.sse') || name.endsWith('.txt')) return checkStream(contents, provider, compatFor(server))
  return undefined
}
