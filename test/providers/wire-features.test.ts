/**
 * Wire features seen in real provider streams, each reproduced by a small
 * hand-written fixture (test/fixtures/<provider>/*.sse) and replayed through
 * the adapter over HTTP (the local replay server), then folded into the
 * assistant message the runtime would keep.
 */
import { readFileSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { lastValueFrom, toArray } from 'rxjs'
import { foldChunks } from '../../marbles/fold-chunks.js'
import { anthropic } from '../../src/providers/anthropic.js'
import { google } from '../../src/providers/google.js'
import { openaiChat } from '../../src/providers/openai-chat.js'
import { openaiCompatible } from '../../src/providers/openai-compatible.js'
import { openaiResponses } from '../../src/providers/openai-responses.js'
import type { ProviderChunk } from '../../src/types/chunk.js'
import type { AssistantMessage } from '../../src/types/message.js'
import { userMessage } from '../../src/types/message.js'
import { modelSpec, type ModelSpec } from '../../src/types/model.js'
import type { StreamFn } from '../../src/types/request.js'
import { splitBytes, startReplayServer, type ReplayServer } from './replay-server.js'

const KEY = 'test-key-0123456789'
const fixture = (path: string): string => readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8')

let server: ReplayServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

/** Replays `path` (split into 29-byte network chunks) through the adapter `make` builds; the chunks and the folded message. */
async function replay(path: string, model: ModelSpec, make: (baseUrl: string) => StreamFn): Promise<{ chunks: ProviderChunk[]; message: AssistantMessage }> {
  server = await startReplayServer([{ headers: { 'content-type': 'text/event-stream' }, chunks: splitBytes(fixture(path), 29) }])
  const streamFn = make(server.url)
  const chunks = await lastValueFrom(streamFn({ model, systemPrompt: '', messages: [userMessage('hi')], tools: [] }).pipe(toArray()))
  return { chunks, message: foldChunks(chunks, model) }
}

const gemini = modelSpec('google', 'gemini-3-pro-preview')
const sonnet = modelSpec('anthropic', 'claude-sonnet-4-5')
const gpt = modelSpec('openai', 'gpt-5-mini')

describe('Gemini: finishReason is provisional', () => {
  it('older streams repeat finishReason STOP on every chunk: all the text is kept, one stop at the end', async () => {
    const { chunks, message } = await replay('google/repeated-stop.sse', gemini, (url) => google({ baseUrl: url, apiKey: KEY }))
    expect(message.stopReason).toBe('stop')
    expect(message.content).toEqual([{ type: 'text', text: 'Paris is the capital of France.' }])
    expect(chunks.filter((c) => c.type === 'stop')).toHaveLength(1)
    expect(message.usage).toMatchObject({ input: 12, output: 7, total: 19 })
  })

  it('a server-side tool stream (finish reason, functionResponse part, answer): the part is kept as extension content, the answer follows, the last usage wins', async () => {
    const { message } = await replay('google/server-tool.sse', gemini, (url) => google({ baseUrl: url, apiKey: KEY }))
    expect(message.errorMessage).toBeUndefined()
    expect(message.stopReason).toBe('stop')
    expect(message.content).toEqual([
      { type: 'text', text: 'Checking the forecast. ' },
      {
        type: 'extension',
        typeName: 'google.part.functionResponse',
        data: { functionResponse: { id: 'srv-1', name: 'lookup_weather', response: { temperature_c: -3, sky: 'snow' } } },
      },
      { type: 'text', text: 'It is -3 °C and snowing in Oslo.' },
    ])
    // The last usageMetadata lowered promptTokenCount (420 → 380): it wins, and the totals add up.
    expect(message.usage).toMatchObject({ input: 380, output: 21, cacheRead: 0, total: 401 })
  })
})

describe('OpenAI Responses: rotating ids', () => {
  it('a response id that changes after response.created and item ids that change on every event: items are keyed by output_index', async () => {
    const { message } = await replay('openai-responses/rotating-ids.sse', gpt, (url) => openaiResponses({ baseUrl: url, apiKey: KEY }))
    expect(message.errorMessage).toBeUndefined()
    expect(message.stopReason).toBe('toolUse')
    expect(message.responseId).toBe('resp_rx_a1')
    const texts = message.content.filter((b) => b.type === 'text')
    expect(texts).toEqual([{ type: 'text', text: 'Hello there.' }])
    const calls = message.content.filter((b) => b.type === 'toolCall')
    expect(calls).toEqual([{ type: 'toolCall', id: 'call_rx_1|fc_rx_01', name: 'get_weather', arguments: { city: 'Oslo' } }])
    expect(message.usage).toMatchObject({ input: 50, output: 20, total: 70 })
  })
})

describe('Anthropic: usage revised by message_delta', () => {
  it('a smaller input count in message_delta (context editing) replaces the one of message_start', async () => {
    const { message } = await replay('anthropic/usage-revised.sse', sonnet, (url) => anthropic({ baseUrl: url, apiKey: KEY }))
    expect(message.stopReason).toBe('stop')
    expect(message.usage).toMatchObject({ input: 1800, output: 12, cacheRead: 0, cacheWrite: 0, total: 1812 })
  })
})

describe('OpenAI Chat: an Azure content-filter chunk first', () => {
  it('its empty id and model do not hide the id and routed model of the later chunks', async () => {
    const { chunks, message } = await replay('openai-chat/azure-filter-first.sse', modelSpec('openai', 'gpt-4o'), (url) => openaiChat({ baseUrl: url, apiKey: KEY }))
    expect(chunks[0]).toEqual({ type: 'messageStart', id: 'chatcmpl-rxAzure01', model: 'gpt-4o-2024-11-20' })
    expect(message).toMatchObject({ responseId: 'chatcmpl-rxAzure01', stopReason: 'stop', content: [{ type: 'text', text: 'Bonjour.' }] })
    expect(message.usage).toMatchObject({ input: 9, output: 3, total: 12 })
  })
})

describe('OpenAI-compatible: citations outside the content', () => {
  it("Perplexity's top-level citations and search_results are kept as a citations extension block", async () => {
    const { message } = await replay('openai-compatible/perplexity-citations.sse', modelSpec('perplexity', 'sonar'), (url) =>
      openaiCompatible({ server: 'generic', baseUrl: url, apiKey: KEY }),
    )
    expect(message.stopReason).toBe('stop')
    expect(message.content[0]).toEqual({ type: 'text', text: 'Oslo is cold in winter [1], often below zero [2].' })
    expect(message.content[1]).toEqual({
      type: 'extension',
      typeName: 'openai.citations',
      data: {
        citations: ['https://example.org/oslo-weather', 'https://example.com/norway-climate'],
        search_results: [
          { title: 'Oslo weather', url: 'https://example.org/oslo-weather', date: '2026-11-24' },
          { title: 'Norway climate', url: 'https://example.com/norway-climate' },
        ],
      },
    })
  })
})
