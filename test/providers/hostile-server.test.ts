/**
 * The transport against hostile or broken servers and hostile transcripts:
 * a request body too deep to serialize, a server that echoes the API key,
 * one that pings forever or sends one endless line, and a proxy's `200`
 * error page. Each ends in a clear, correctly classified error, with no
 * secret in anything the run emits and no socket left open.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { lastValueFrom, toArray, type Observable } from 'rxjs'
import { agentLoopContinue } from '../../src/loop/agent-loop.js'
import { anthropic, google, openaiChat, openaiResponses } from '../../src/providers/index.js'
import type { ProviderChunk } from '../../src/types/chunk.js'
import type { AgentEvent } from '../../src/types/event.js'
import { assistantMessage, userMessage, type AssistantMessage, type LlmMessage } from '../../src/types/message.js'
import { modelSpec } from '../../src/types/model.js'
import { ProviderError } from '../../src/types/provider-error.js'
import type { LlmRequest, StreamFn } from '../../src/types/request.js'
import { startReplayServer, type ReplayServer, type ScriptedHttpResponse } from './replay-server.js'

const KEY = 'sk-hostile-secret-0123456789abcdef'

let server: ReplayServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

async function serve(responses: readonly ScriptedHttpResponse[]): Promise<ReplayServer> {
  server = await startReplayServer(responses)
  return server
}

const request = (messages: readonly LlmMessage[], provider = 'anthropic'): LlmRequest => ({ model: modelSpec(provider, 'm'), systemPrompt: 'sys', messages, tools: [] })

const failure = (stream: Observable<ProviderChunk>): Promise<unknown> => lastValueFrom(stream.pipe(toArray())).then(
  () => new Error('the stream completed'),
  (e: unknown) => e,
)

const lastAssistant = (events: readonly AgentEvent[]): AssistantMessage =>
  ([...events].reverse().find((e) => e.type === 'messageEnd' && e.message.role === 'assistant') as { message: AssistantMessage }).message

/** `[[[…1…]]]`, `depth` arrays deep, built without recursion. */
function nested(depth: number): unknown {
  let value: unknown = 1
  for (let i = 0; i < depth; i++) value = [value]
  return value
}

const adapters: readonly [string, (baseUrl: string) => StreamFn][] = [
  ['anthropic', (baseUrl) => anthropic({ baseUrl, apiKey: KEY })],
  ['openai', (baseUrl) => openaiChat({ baseUrl, apiKey: KEY })],
  ['openai-responses', (baseUrl) => openaiResponses({ baseUrl, apiKey: KEY })],
  ['google', (baseUrl) => google({ baseUrl, apiKey: KEY })],
]

describe('hostile transcript: a request body that cannot be serialized', () => {
  // Tool-call arguments echoed back from a hostile model; far deeper than any stack.
  const deepTranscript: LlmMessage[] = [
    userMessage('hi'),
    assistantMessage([{ type: 'toolCall', id: 'call_1', name: 'probe', arguments: { a: nested(50_000) } }], { stopReason: 'toolUse' }),
    { role: 'toolResult', toolCallId: 'call_1', toolName: 'probe', content: [{ type: 'text', text: 'ok' }], isError: false, timestamp: 0 },
  ]

  for (const [name, make] of adapters) {
    it(`${name}: nested too deep → invalidRequest, not retryable, nothing sent`, async () => {
      const s = await serve([{ chunks: [] }])
      const error = await failure(make(s.url)(request(deepTranscript, name)))
      expect(error).toBeInstanceOf(ProviderError)
      expect((error as ProviderError).info).toMatchObject({ kind: 'invalidRequest', retryable: false })
      expect((error as ProviderError).message).toMatch(/the request body could not be serialized: .*nested too deep/)
      expect(s.requests).toHaveLength(0)
    })
  }

  it('in a run with retries on: one error answer, no retry, no request', async () => {
    const s = await serve([{ chunks: [] }])
    const streamFn = anthropic({ baseUrl: s.url, apiKey: KEY })
    const events = await lastValueFrom(
      agentLoopContinue({ systemPrompt: 'sys', messages: deepTranscript, tools: [] }, { model: modelSpec('anthropic', 'm'), streamFn, retry: { baseDelayMs: 1 } }).pipe(toArray()),
    )
    expect(lastAssistant(events)).toMatchObject({ stopReason: 'error', errorKind: 'invalidRequest' })
    expect(events.some((e) => e.type === 'streamRetry')).toBe(false)
    expect(s.requests).toHaveLength(0)
  })
})
