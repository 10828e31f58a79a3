/**
 * The shared transport under faults, through a minimal wire protocol whose
 * SSE data are ProviderChunks: statuses and their classes, Retry-After,
 * resets, stalls, aborts, truncation, malformed events — each ends with the
 * right error, a valid transcript, and no socket left open.
 */
import { describe, expect, it, vi } from 'vitest'
import { firstValueFrom, lastValueFrom, take, toArray } from 'rxjs'
import { agentLoop } from '../../src/loop/agent-loop.js'
import { transcriptFromEvents } from '../../src/loop/transcript.js'
import { ProviderChunk } from '../../src/types/chunk.js'
import { userMessage, type AssistantMessage } from '../../src/types/message.js'
import { modelSpec } from '../../src/types/model.js'
import type { AgentEvent } from '../../src/types/event.js'
import { ProviderError } from '../../src/types/provider-error.js'
import { httpError, parseEventJson, protocolError, truncatedError } from '../../src/providers/errors.js'
import { decodeWire, streamFnOf, WireReader, type ProviderSettings, type WireProtocol } from '../../src/providers/protocol.js'
import { AppendingDecoder } from '../../src/providers/appending-decoder.js'
import { GoogleDecoder } from '../../src/providers/google-decoder.js'
import type { SseEvent } from '../../src/providers/sse.js'
import { sseBody, replayServerPerTest, type ReplayServer } from './replay-server.js'

const KEY = 'sk-test-secret-key-123456'

/** A protocol whose events are ProviderChunks as JSON; `stop` ends a complete response. */
const testProtocol: WireProtocol<ProviderSettings & { baseUrl: string }> = {
  provider: 'test',
  apiKeyEnv: ['TEST_API_KEY'],
  requiresApiKey: true,
  buildRequest: (request, settings, apiKey) => ({
    url: `${settings.baseUrl}/stream`,
    headers: { authorization: `Bearer ${apiKey ?? ''}` },
    body: { model: request.model.modelId, messages: request.messages.length },
  }),
  decoder: () => {
    let stopped = false
    return {
      event: (e) => {
        const json = parseEventJson('test', e.data)
        if (!ProviderChunk.is(json)) throw protocolError('test', `not a chunk: ${e.data}`)
        if (json.type === 'stop') stopped = true
        return [json]
      },
      end: () => {
        if (!stopped) throw truncatedError('test')
        return []
      },
    }
  },
  httpError: (status, headers, body) => {
    const json = (() => {
      try {
        return JSON.parse(body) as { error?: { type?: string; message?: string } }
      } catch {
        return undefined
      }
    })()
    return httpError({ provider: 'test', status, headers, message: json?.error?.message ?? body, ...(json?.error?.type === undefined ? {} : { code: json.error.type }) })
  },
}

const okBody = sseBody([
  { data: { type: 'messageStart', id: 'r1', model: 'm' } },
  { data: { type: 'textDelta', text: 'Hel' } },
  { data: { type: 'textDelta', text: 'lo' } },
  { data: { type: 'stop', reason: 'endTurn' } },
  { data: { type: 'usage', input: 3, output: 2 } },
])
const okChunks = okBody.split(/(?<=\n\n)/)

const replay = replayServerPerTest()
const serve = replay.serve

const model = modelSpec('test', 'm')
const context = { systemPrompt: 'sys', messages: [], tools: [] }

async function run(settings: Partial<ProviderSettings>, retry: Parameters<typeof agentLoop>[2]['retry'] = false): Promise<{ events: AgentEvent[]; message: AssistantMessage }> {
  const streamFn = streamFnOf(testProtocol, { baseUrl: replay.current!.url, apiKey: KEY, ...settings })
  const events = await lastValueFrom(agentLoop(userMessage('hi'), context, { model, streamFn, retry }).pipe(toArray()))
  const end = [...events].reverse().find((e) => e.type === 'messageEnd' && e.message.role === 'assistant') as { message: AssistantMessage }
  return { events, message: end.message }
}

/** Waits until the server has no response left open: nothing hangs (idle keep-alive sockets are the client's pool, not a hang). */
async function noOpenSockets(s: ReplayServer): Promise<void> {
  for (let i = 0; i < 200 && s.inFlight() > 0; i++) await new Promise((r) => setTimeout(r, 10))
  expect(s.inFlight()).toBe(0)
}

/**
 * Both transports (transport.ts): `node:http` by default, `fetch` when the settings pass one (here
 * Node's own, through a wrapper: the same `fetch` as before the `node:http` path existed).
 */
const transports: readonly (readonly [string, Partial<ProviderSettings>])[] = [
  ['node:http', {}],
  ['fetch', { fetch: (input, init) => globalThis.fetch(input, init) }],
]

for (const [via, extra] of transports) describe(`transport over ${via}`, () => {
  const runVia = (settings: Partial<ProviderSettings>, retry: Parameters<typeof agentLoop>[2]['retry'] = false): ReturnType<typeof run> => run({ ...extra, ...settings }, retry)

  it('streams a response; the key goes only into the header', async () => {
    const s = await serve([{ chunks: okChunks }])
    const { message } = await runVia({})
    expect(message).toMatchObject({ stopReason: 'stop', content: [{ type: 'text', text: 'Hello' }], usage: { input: 3, output: 2, total: 5 } })
    expect(s.requests[0]).toMatchObject({ method: 'POST', url: '/stream', body: { model: 'm', messages: 1 } })
    expect(s.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`)
    await noOpenSockets(s)
  })

  it('fails at once, without a request, when no key is set', async () => {
    const s = await serve([{ chunks: okChunks }])
    const streamFn = streamFnOf(testProtocol, { ...extra, baseUrl: s.url, env: {} })
    const error = await firstValueFrom(streamFn({ model, systemPrompt: '', messages: [], tools: [] })).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ProviderError)
    expect((error as ProviderError).info).toMatchObject({ kind: 'auth', retryable: false })
    expect((error as ProviderError).message).toContain('TEST_API_KEY')
    expect(s.requests).toHaveLength(0)
  })

  it('reads the key from the environment', async () => {
    const s = await serve([{ chunks: okChunks }])
    await runVia({ apiKey: undefined, env: { TEST_API_KEY: 'from-env' } } as Partial<ProviderSettings>)
    expect(s.requests[0]!.headers.authorization).toBe('Bearer from-env')
  })

  const statuses: [number, Record<string, string>, string, boolean, number | undefined][] = [
    [401, {}, 'auth', false, undefined],
    [403, {}, 'auth', false, undefined],
    [404, {}, 'modelNotFound', false, undefined],
    [429, {}, 'rateLimit', true, undefined],
    [429, { 'retry-after': '7' }, 'rateLimit', true, 7000],
    [429, { 'retry-after-ms': '250' }, 'rateLimit', true, 250],
    [500, {}, 'server', true, undefined],
    [503, { 'retry-after': '2' }, 'overloaded', true, 2000],
    [529, {}, 'overloaded', true, undefined],
    [400, {}, 'invalidRequest', false, undefined],
  ]
  for (const [status, headers, kind, retryable, retryAfterMs] of statuses) {
    it(`HTTP ${status}${Object.keys(headers).length > 0 ? ` with ${Object.keys(headers)[0]}` : ''} → ${kind}`, async () => {
      const s = await serve([{ status, headers: { 'content-type': 'application/json', ...headers }, chunks: [JSON.stringify({ error: { type: `e${status}`, message: `failure ${status}` } })] }])
      const { message, events } = await runVia({})
      expect(message).toMatchObject({ stopReason: 'error', errorKind: kind })
      expect(message.errorMessage).toContain(`failure ${status}`)
      expect(message.errorMessage).not.toContain(KEY)
      const error = await firstValueFrom(streamFnOf(testProtocol, { ...extra, baseUrl: s.url, apiKey: KEY })({ model, systemPrompt: '', messages: [], tools: [] })).catch((e: unknown) => e)
      expect((error as ProviderError).info).toMatchObject({ kind, retryable, status, code: `e${status}`, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) })
      expect(events.at(-1)).toMatchObject({ type: 'agentEnd', result: { stopReason: 'error' } })
      await noOpenSockets(s)
    })
  }

  it('an HTTP-date Retry-After becomes a delay', async () => {
    const now = Date.parse('2026-01-01T00:00:00Z')
    const e = httpError({ provider: 'p', status: 429, headers: new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:30 GMT' }), message: 'slow down' }, now)
    expect(e.info.retryAfterMs).toBe(30_000)
  })

  it('context overflow is recognized by phrasing whatever the status', () => {
    const e = httpError({ provider: 'p', status: 400, headers: new Headers(), message: 'prompt is too long: 210000 tokens > 200000 maximum' })
    expect(e.info).toMatchObject({ kind: 'contextOverflow', retryable: false })
  })

  it('a 429 with retry-after-ms is retried after that delay, then succeeds', async () => {
    const s = await serve([{ status: 429, headers: { 'retry-after-ms': '30' }, chunks: ['{"error":{"message":"slow down"}}'] }, { chunks: okChunks }])
    const { message, events } = await runVia({}, { baseDelayMs: 5 })
    expect(message).toMatchObject({ stopReason: 'stop', content: [{ type: 'text', text: 'Hello' }] })
    expect(events.filter((e) => e.type === 'streamRetry')).toMatchObject([{ attempt: 1, delayMs: 30, error: { kind: 'rateLimit' } }])
    expect(s.requests).toHaveLength(2)
  })

  it('a connection reset mid-stream is a network error; a retry discards the partial text', async () => {
    const s = await serve([{ chunks: okChunks, resetAfter: 2 }, { chunks: okChunks }])
    const failed = await runVia({})
    expect(failed.message).toMatchObject({ stopReason: 'error', errorKind: 'network', content: [{ type: 'text', text: 'Hel' }] })
    const s2 = s
    s2.requests.length = 0
    await serve([{ chunks: okChunks, resetAfter: 2 }, { chunks: okChunks }])
    const retried = await runVia({}, { baseDelayMs: 5 })
    expect(retried.message).toMatchObject({ stopReason: 'stop', content: [{ type: 'text', text: 'Hello' }] })
    const labels = retried.events.map((e) => e.type)
    expect(labels.filter((t) => t === 'messageStart')).toHaveLength(2) // user + assistant, once
    expect(labels).toContain('streamRetry')
    await noOpenSockets(replay.current!)
  })

  it('a stalled stream hits the idle timeout: timeout error, partial kept, socket closed', async () => {
    const s = await serve([{ chunks: okChunks, stallAfter: 2 }])
    const { message, events } = await runVia({ idleTimeoutMs: 150 })
    expect(message).toMatchObject({ stopReason: 'error', errorKind: 'timeout', content: [{ type: 'text', text: 'Hel' }] })
    expect(message.errorMessage).toContain('no data arrived within 150 ms')
    expect(transcriptFromEvents(events).map((m) => m.role)).toEqual(['user', 'assistant'])
    await noOpenSockets(s)
  })

  it('no response headers within the connect timeout: timeout error', async () => {
    const s = await serve([{ chunks: okChunks, headerDelayMs: 2000 }])
    const { message } = await runVia({ connectTimeoutMs: 100 })
    expect(message).toMatchObject({ stopReason: 'error', errorKind: 'timeout' })
    await noOpenSockets(s)
  })

  it('unsubscribing mid-body aborts the request', async () => {
    const s = await serve([{ chunks: okChunks, gapMs: 50 }])
    const streamFn = streamFnOf(testProtocol, { ...extra, baseUrl: s.url, apiKey: KEY })
    const events = await lastValueFrom(agentLoop(userMessage('hi'), context, { model, streamFn }).pipe(take(6), toArray()))
    expect(events.at(-1)).toMatchObject({ type: 'messageUpdate', chunk: { type: 'textDelta', text: 'Hel' } })
    await noOpenSockets(s)
    expect(s.clientAborts).toBe(1)
    const transcript = transcriptFromEvents(events)
    expect(transcript.at(-1)).toMatchObject({ role: 'assistant', stopReason: 'aborted', content: [{ type: 'text', text: 'Hel' }] })
  })

  it('a truncated stream is a network error that keeps the partial answer', async () => {
    const s = await serve([{ chunks: okChunks.slice(0, 3) }])
    const { message } = await runVia({})
    expect(message).toMatchObject({ stopReason: 'error', errorKind: 'network', content: [{ type: 'text', text: 'Hello' }] })
    expect(message.errorMessage).toContain('ended before the response was complete')
    await noOpenSockets(s)
  })

  it('a malformed JSON event is a protocol error, not retried', async () => {
    const s = await serve([{ chunks: [okChunks[0]!, 'data: {"type":"textDelta","text":\n\n', ...okChunks.slice(1)] }])
    const { message, events } = await runVia({}, { baseDelayMs: 1 })
    expect(message).toMatchObject({ stopReason: 'error', errorKind: 'protocol' })
    expect(message.errorMessage).toContain('not valid JSON')
    expect(events.some((e) => e.type === 'streamRetry')).toBe(false)
    await noOpenSockets(s)
  })

  it('a refused connection is a network error', async () => {
    const s = await serve([{ chunks: okChunks }])
    const url = s.url
    await replay.close()
    const streamFn = streamFnOf(testProtocol, { ...extra, baseUrl: url, apiKey: KEY })
    const error = await firstValueFrom(streamFn({ model, systemPrompt: '', messages: [], tools: [] })).catch((e: unknown) => e)
    expect((error as ProviderError).info).toMatchObject({ kind: 'network', retryable: true, code: 'ECONNREFUSED' })
    expect((error as ProviderError).message).toBe('test: the connection failed before the response (ECONNREFUSED)')
  })

  it('a connection reset mid-body: the same words on both transports (the socket error code in parentheses)', async () => {
    await serve([{ chunks: okChunks, resetAfter: 2 }])
    const { message } = await runVia({})
    expect(message.errorMessage).toMatch(/^test: the connection failed while the response was streaming \((ECONNRESET|UND_ERR_SOCKET)\)$/)
  })

  it('a 200 that is not an event stream: a protocol error quoting the body, not retried', async () => {
    const s = await serve([{ headers: { 'content-type': 'text/html' }, chunks: ['<html>', 'oops</html>'] }])
    const { message } = await runVia({}, { baseDelayMs: 1 })
    expect(message).toMatchObject({ stopReason: 'error', errorKind: 'protocol' })
    expect(message.errorMessage).toBe('test: expected an event stream (text/event-stream), got HTTP 200 text/html: <html>oops</html>')
    expect(s.requests).toHaveLength(1)
    await noOpenSockets(s)
  })
})

describe('which transport', () => {
  it('by default node:http: no compression asked for, a 3xx is an HTTP error (no redirect followed), an abort closes the socket', async () => {
    const s = await serve([{ status: 302, headers: { location: '/elsewhere', 'content-type': 'text/plain' }, chunks: ['moved'] }])
    const { message } = await run({})
    expect(message).toMatchObject({ stopReason: 'error', errorKind: 'unknown' })
    expect(message.errorMessage).toBe('test 302: moved')
    expect(s.requests).toHaveLength(1)
    expect(s.requests[0]!.headers['accept-encoding']).toBeUndefined()
    const s2 = await serve([{ chunks: okChunks, gapMs: 50 }])
    const streamFn = streamFnOf(testProtocol, { baseUrl: s2.url, apiKey: KEY })
    await lastValueFrom(streamFn({ model, systemPrompt: '', messages: [], tools: [] }).pipe(take(2), toArray()))
    await noOpenSockets(s2)
    expect(s2.clientAborts).toBe(1)
    for (let i = 0; i < 100 && s2.openSockets() > 0; i++) await new Promise((r) => setTimeout(r, 10))
    expect(s2.openSockets()).toBe(0)
  })

  it('a fetch option is used (and follows a redirect, as fetch does)', async () => {
    const s = await serve((request) => (request.url === '/stream' ? { status: 307, headers: { location: '/moved' }, chunks: [] } : { chunks: okChunks }))
    const fetch = vi.fn((input: string | URL | Request, init?: RequestInit) => globalThis.fetch(input, init))
    const { message } = await run({ fetch })
    expect(message).toMatchObject({ stopReason: 'stop', content: [{ type: 'text', text: 'Hello' }] })
    expect(fetch).toHaveBeenCalledTimes(1)
    expect(s.requests.map((r) => r.url)).toEqual(['/stream', '/moved'])
    expect(s.requests[0]!.headers['accept-encoding']).toBeDefined()
  })

  it('a patched globalThis.fetch is honoured from its next request; restored, node:http again', async () => {
    const s = await serve([{ chunks: okChunks }])
    const original = globalThis.fetch
    const patched = vi.fn((input: string | URL | Request, init?: RequestInit) => original(input, init))
    vi.stubGlobal('fetch', patched)
    try {
      expect((await run({})).message).toMatchObject({ stopReason: 'stop' })
      expect(patched).toHaveBeenCalledTimes(1)
      expect(s.requests[0]!.headers['accept-encoding']).toBeDefined()
    } finally {
      vi.unstubAllGlobals()
    }
    expect(globalThis.fetch).toBe(original)
    expect((await run({})).message).toMatchObject({ stopReason: 'stop' })
    expect(patched).toHaveBeenCalledTimes(1)
    expect(s.requests[1]!.headers['accept-encoding']).toBeUndefined()
  })

  it('a fetch patched before the transport module loaded is honoured too (it is not Node\'s own)', async () => {
    const original = globalThis.fetch
    const patched = (input: string | URL | Request, init?: RequestInit): Promise<Response> => original(input, init)
    vi.stubGlobal('fetch', patched)
    try {
      vi.resetModules()
      const { fetchFor } = await import('../../src/providers/transport.js')
      expect(fetchFor(undefined)).toBe(patched)
    } finally {
      vi.unstubAllGlobals()
    }
    const fresh = await import('../../src/providers/transport.js')
    expect(fresh.fetchFor(undefined)).toBe(original) // that module instance keeps to fetch: it never saw Node's own
    vi.resetModules()
    const again = await import('../../src/providers/transport.js')
    expect(again.fetchFor(undefined)).toBeUndefined()
    expect(again.fetchFor(patched)).toBe(patched)
  })
})

describe('WireReader', () => {
  it('a decoder error keeps the chunks decoded before it in the same network chunk', async () => {
    const s = await serve([{ chunks: [okChunks[0]! + okChunks[1]! + 'data: {"type":"textDelta","text":\n\n'] }])
    const { message } = await run({})
    expect(message).toMatchObject({ stopReason: 'error', errorKind: 'protocol', content: [{ type: 'text', text: 'Hel' }] })
    void s
  })

  it('a decoder that throws: the events before it in the network chunk are kept; an event counts whole or not at all', () => {
    class Failing extends AppendingDecoder {
      eventInto(e: SseEvent, out: ProviderChunk[]): void {
        if (e.data === 'bad') throw protocolError('test', 'bad')
        out.push({ type: 'textDelta', text: `${e.data}1` }, { type: 'textDelta', text: `${e.data}2` })
      }
      end(): readonly ProviderChunk[] {
        return [{ type: 'stop', reason: 'endTurn' }]
      }
    }
    const reader = new WireReader(new Failing())
    expect(reader.push('data: a\n\ndata: bad\n\ndata: c\n\n')).toEqual([
      { type: 'textDelta', text: 'a1' },
      { type: 'textDelta', text: 'a2' },
    ])
    expect(reader.failure).toBeInstanceOf(ProviderError)
    expect(new Failing().event({ data: 'x' })).toEqual([{ type: 'textDelta', text: 'x1' }, { type: 'textDelta', text: 'x2' }])
    expect(decodeWire(new Failing(), ['data: a\n\n'])).toHaveLength(3)
    // Google's decoder appends as it goes: a JSON-array event whose second response is an error takes back the first's chunks.
    const google = new GoogleDecoder('gemini-2.5-flash')
    const out: ProviderChunk[] = [{ type: 'textDelta', text: 'before' }]
    const event = { data: '[{"responseId":"r","candidates":[{"content":{"parts":[{"text":"hi"}]}}]},{"error":{"code":500,"message":"boom","status":"INTERNAL"}}]' }
    expect(() => google.eventInto(event, out)).toThrow(ProviderError)
    expect(out).toEqual([{ type: 'textDelta', text: 'before' }])
  })

  it("a custom adapter's decoder (the public `event` shape) is read the same", () => {
    const decoder = { event: (e: SseEvent) => [{ type: 'textDelta' as const, text: e.data }], end: () => [] }
    expect(decodeWire(decoder, ['data: a\n\nda', 'ta: b\n\n'])).toEqual([
      { type: 'textDelta', text: 'a' },
      { type: 'textDelta', text: 'b' },
    ])
  })
})
