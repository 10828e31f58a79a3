/**
 * The transport against hostile or broken servers and hostile transcripts:
 * a request body too deep to serialize, a server that echoes the API key,
 * one that pings forever or sends one endless line, and a proxy's `200`
 * error page. Each ends in a clear, correctly classified error, with no
 * secret in anything the run emits and no socket left open.
 */
import { describe, expect, it } from 'vitest'
import { lastValueFrom, toArray, VirtualTimeScheduler, type Observable } from 'rxjs'
import { agentLoop, agentLoopContinue } from '../../src/loop/agent-loop.js'
import { anthropicProtocol } from '../../src/providers/anthropic.js'
import { anthropic, google, openaiChat, openaiCompatible, openaiResponses, type AnthropicSettings } from '../../src/providers/index.js'
import { streamFnOf, type WireProtocol } from '../../src/providers/protocol.js'
import type { ProviderChunk } from '../../src/types/chunk.js'
import type { AgentEvent } from '../../src/types/event.js'
import { assistantMessage, userMessage, type AssistantMessage, type LlmMessage } from '../../src/types/message.js'
import { modelSpec } from '../../src/types/model.js'
import { ProviderError } from '../../src/types/provider-error.js'
import type { LlmRequest, StreamFn } from '../../src/types/request.js'
import { redactText, secretsOf } from '../../src/providers/redact.js'
import { sseBody, replayServerPerTest, type ReplayServer, type ScriptedHttpResponse } from './replay-server.js'

const KEY = 'sk-hostile-secret-0123456789abcdef'

const replay = replayServerPerTest()
const serve = replay.serve

const request = (messages: readonly LlmMessage[], provider = 'anthropic'): LlmRequest => ({ model: modelSpec(provider, 'm'), systemPrompt: 'sys', messages, tools: [] })

const failure = (stream: Observable<ProviderChunk>): Promise<unknown> => lastValueFrom(stream.pipe(toArray())).then(
  () => new Error('the stream completed'),
  (e: unknown) => e,
)

/** Waits (real time, polling) until `ready()`; fails the test after ~10 s. */
async function until(ready: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !ready(); i++) await new Promise((r) => setTimeout(r, 10))
  expect(ready()).toBe(true)
}

async function noOpenResponses(s: ReplayServer): Promise<void> {
  await until(() => s.inFlight() === 0)
}

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

  // A BigInt: JSON.stringify throws a TypeError, whether the builder or the body serializes it.
  const bigintTranscript: LlmMessage[] = [
    userMessage('hi'),
    assistantMessage([{ type: 'toolCall', id: 'call_1', name: 'probe', arguments: { n: 1n } }], { stopReason: 'toolUse' }),
    { role: 'toolResult', toolCallId: 'call_1', toolName: 'probe', content: [{ type: 'text', text: 'ok' }], isError: false, timestamp: 0 },
  ]

  for (const [name, make] of adapters) {
    it(`${name}: a BigInt → invalidRequest, not retryable, nothing sent`, async () => {
      const s = await serve([{ chunks: [] }])
      const error = await failure(make(s.url)(request(bigintTranscript, name)))
      expect(error).toBeInstanceOf(ProviderError)
      expect((error as ProviderError).info).toMatchObject({ kind: 'invalidRequest', retryable: false })
      expect((error as ProviderError).message).toMatch(/the request body could not be serialized: .*BigInt/)
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

describe('hostile server: a key echoed back is redacted', () => {
  /** Anthropic's protocol behind a gateway that takes its own key as a query parameter. */
  const queryKeyProtocol: WireProtocol<AnthropicSettings> = {
    ...anthropicProtocol,
    requiresApiKey: false,
    buildRequest: (r, settings, apiKey) => ({ ...anthropicProtocol.buildRequest(r, settings, apiKey), url: `${settings.baseUrl}/v1/messages?key=${KEY}&beta=true` }),
  }
  const echo = (status: number, body: unknown): ScriptedHttpResponse => ({
    status,
    headers: { 'content-type': 'application/json' },
    chunks: [typeof body === 'string' ? body : JSON.stringify(body)],
  })
  const anthropicError = { type: 'error', error: { type: 'authentication_error', message: `invalid x-api-key: ${KEY}` } }
  const openaiError = { error: { type: 'invalid_request_error', code: 'invalid_api_key', message: `Incorrect API key provided: ${KEY}.` } }
  const googleError = { error: { code: 400, status: 'INVALID_ARGUMENT', message: `API key not valid: ${KEY}` } }

  const cases: readonly [string, (baseUrl: string) => StreamFn, ScriptedHttpResponse, string][] = [
    ['anthropic x-api-key, in an HTTP error body', (baseUrl) => anthropic({ baseUrl, apiKey: KEY }), echo(401, anthropicError), 'anthropic'],
    ['openai Bearer, in an HTTP error body', (baseUrl) => openaiChat({ baseUrl, apiKey: KEY }), echo(401, openaiError), 'openai'],
    ['google x-goog-api-key, in an HTTP error body', (baseUrl) => google({ baseUrl, apiKey: KEY }), echo(400, googleError), 'google'],
    [
      'an api-key header (Azure style), in a non-JSON body',
      (baseUrl) => openaiCompatible({ baseUrl, headers: { 'api-key': KEY } }),
      echo(500, `upstream rejected api-key=${KEY}`),
      'openai-compatible',
    ],
    [
      'a key= query parameter (a gateway that wants it in the URL), in an HTTP error body',
      (baseUrl) => streamFnOf(queryKeyProtocol, { baseUrl }),
      echo(403, { type: 'error', error: { type: 'permission_error', message: `forbidden for /v1/messages?key=${KEY} (key not allowed)` } }),
      'anthropic',
    ],
    [
      'anthropic, in an in-stream error event',
      (baseUrl) => anthropic({ baseUrl, apiKey: KEY }),
      {
        chunks: [
          sseBody([
            { event: 'message_start', data: { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], usage: { input_tokens: 1, output_tokens: 0 } } } },
            { event: 'error', data: { type: 'error', error: { type: 'api_error', message: `key ${KEY} is suspended` } } },
          ]),
        ],
      },
      'anthropic',
    ],
    [
      'a key cut in half by a quoted excerpt',
      (baseUrl) => anthropic({ baseUrl, apiKey: KEY }),
      echo(502, `<html>${'x'.repeat(280)} ${KEY}</html>`),
      'anthropic',
    ],
  ]

  for (const [name, make, response, provider] of cases) {
    it(name, async () => {
      const s = await serve([response])
      const streamFn = make(s.url)
      const events = await lastValueFrom(agentLoop(userMessage('hi'), { systemPrompt: 'sys', messages: [], tools: [] }, { model: modelSpec(provider, 'm'), streamFn, retry: false }).pipe(toArray()))
      const message = lastAssistant(events)
      expect(message.stopReason).toBe('error')
      expect(message.errorMessage).toContain('[redacted]')
      // Not the key, nor a recognizable piece of it, anywhere in what the run emitted.
      const all = JSON.stringify(events)
      expect(all).not.toContain(KEY)
      expect(all).not.toContain(KEY.slice(0, 12))
      const error = await failure(streamFn(request([userMessage('hi')], provider)))
      expect(JSON.stringify((error as ProviderError).info)).not.toContain(KEY.slice(0, 12))
      expect((error as Error).message).not.toContain(KEY.slice(0, 12))
      expect((error as Error).stack ?? '').not.toContain(KEY.slice(0, 12))
    })
  }
})

describe('hostile server: streams that never end', () => {
  const messageStart = sseBody([
    { event: 'message_start', data: { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], usage: { input_tokens: 1, output_tokens: 0 } } } },
  ])

  it('keep-alive pings forever: the total timeout ends the call (timeout, not retried)', async () => {
    const s = await serve([{ chunks: [messageStart], endless: 'event: ping\ndata: {"type": "ping"}\n\n', gapMs: 5 }])
    // Virtual time: the pings arrive in real time, the clock moves only when flushed.
    const scheduler = new VirtualTimeScheduler()
    const streamFn = anthropic({ baseUrl: s.url, apiKey: KEY, scheduler, idleTimeoutMs: 3_600_000, totalTimeoutMs: 600_000 })
    const chunks: ProviderChunk[] = []
    let error: unknown
    const sub = streamFn(request([userMessage('hi')])).subscribe({ next: (c) => chunks.push(c), error: (e: unknown) => (error = e) })
    await until(() => chunks.length > 0 && s.writes() > 10)
    expect(error).toBeUndefined()
    scheduler.flush()
    await until(() => error !== undefined)
    expect(error).toBeInstanceOf(ProviderError)
    expect((error as ProviderError).info).toMatchObject({ kind: 'timeout', retryable: false })
    expect((error as ProviderError).message).toContain('did not finish within 600000 ms')
    sub.unsubscribe()
    await noOpenResponses(s)
    expect(s.clientAborts).toBe(1)
  })

  it('one endless line: the maximum event size ends the call (protocol, not retried) and the client stops reading', async () => {
    const line = 'x'.repeat(64 * 1024)
    // 1 MB without a newline after a valid first event, then the server holds the connection open.
    const s = await serve([{ chunks: [messageStart, 'data: ', ...Array.from({ length: 16 }, () => line)], stallAfter: 18 }])
    const streamFn = anthropic({ baseUrl: s.url, apiKey: KEY, maxEventSize: 64 * 1024, idleTimeoutMs: 10_000 })
    const events = await lastValueFrom(
      agentLoop(userMessage('hi'), { systemPrompt: 'sys', messages: [], tools: [] }, { model: modelSpec('anthropic', 'm'), streamFn, retry: { baseDelayMs: 1 } }).pipe(toArray()),
    )
    const message = lastAssistant(events)
    expect(message).toMatchObject({ stopReason: 'error', errorKind: 'protocol' })
    expect(message.errorMessage).toContain('an event exceeds the maximum size of 65536 characters')
    expect(events.some((e) => e.type === 'streamRetry')).toBe(false)
    await noOpenResponses(s)
    expect(s.clientAborts).toBe(1)
  })
})

describe('hostile server: a 200 that is not an event stream', () => {
  const page = `<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1><p>The proxy could not reach the upstream for key ${KEY}.</p>${'<p>padding</p>'.repeat(50)}</body></html>`

  it('an HTML page: a non-retryable error quoting the start of the body, redacted', async () => {
    const s = await serve([{ headers: { 'content-type': 'text/html; charset=utf-8' }, chunks: [page] }])
    const streamFn = anthropic({ baseUrl: s.url, apiKey: KEY })
    const events = await lastValueFrom(
      agentLoop(userMessage('hi'), { systemPrompt: 'sys', messages: [], tools: [] }, { model: modelSpec('anthropic', 'm'), streamFn, retry: { baseDelayMs: 1 } }).pipe(toArray()),
    )
    const message = lastAssistant(events)
    expect(message).toMatchObject({ stopReason: 'error', errorKind: 'protocol' })
    expect(message.errorMessage).toContain('expected an event stream (text/event-stream), got HTTP 200 text/html; charset=utf-8')
    expect(message.errorMessage).toContain('<!DOCTYPE html><html><head><title>502 Bad Gateway</title>')
    expect(message.errorMessage).not.toContain('padding</p><p>padding</p><p>padding</p><p>padding</p><p>padding</p><p>padding</p><p>padding</p><p>padding</p><p>padding</p><p>padding</p><p>padding')
    expect(JSON.stringify(events)).not.toContain(KEY.slice(0, 12))
    expect(events.some((e) => e.type === 'streamRetry')).toBe(false)
    expect(s.requests).toHaveLength(1)
    await noOpenResponses(s)
  })

  it('a JSON body: the same, for every adapter', async () => {
    const body = JSON.stringify({ error: { message: 'gateway: upstream quota exhausted' } })
    for (const [name, make] of adapters) {
      const s = await serve([{ headers: { 'content-type': 'application/json' }, chunks: [body] }])
      const error = await failure(make(s.url)(request([userMessage('hi')], name)))
      expect((error as ProviderError).info).toMatchObject({ kind: 'protocol', retryable: false, status: 200 })
      expect((error as ProviderError).message).toContain('got HTTP 200 application/json: {"error":{"message":"gateway: upstream quota exhausted"}}')
      await replay.close()
    }
  })
})

describe('hostile server: an endless error body', () => {
  it('is read only up to a bound; the error still classifies by status', async () => {
    const s = await serve([{ status: 500, headers: { 'content-type': 'text/plain' }, chunks: ['upstream failed '], endless: 'y'.repeat(64 * 1024), gapMs: 20 }])
    const error = await failure(anthropic({ baseUrl: s.url, apiKey: KEY, connectTimeoutMs: 10_000 })(request([userMessage('hi')])))
    expect((error as ProviderError).info).toMatchObject({ kind: 'server', status: 500 })
    expect((error as ProviderError).message).toContain('upstream failed')
    await noOpenResponses(s)
    expect(s.clientAborts).toBe(1)
  })
})

describe('secrets of a request', () => {
  it('the key, credential headers (the token after a scheme too), key-like query parameters; short placeholders are left alone', () => {
    const secrets = secretsOf('sk-resolved-key-0001', {
      url: 'https://gw.example/v1?key=query-key-0002&alt=sse',
      headers: { Authorization: 'Bearer bearer-token-0003', 'X-Api-Key': 'header-key-0004', 'api-key': 'EMPTY', accept: 'text/event-stream-0005' },
      body: {},
    })
    expect([...secrets].sort()).toEqual(['Bearer bearer-token-0003', 'Bearer%20bearer-token-0003', 'bearer-token-0003', 'header-key-0004', 'query-key-0002', 'sk-resolved-key-0001'])
    expect(redactText('bad key sk-resolved-key-0001; token bearer-token-0003; EMPTY; cut: sk-resolved-k…', secrets)).toBe(
      'bad key [redacted]; token [redacted]; EMPTY; cut: [redacted]…',
    )
  })
})
