/** providers(): one StreamFn that routes each request to its model's adapter; switching provider mid-conversation. */
import { afterEach, describe, expect, it } from 'vitest'
import { readFileSync } from 'node:fs'
import { firstValueFrom, lastValueFrom, toArray } from 'rxjs'
import { Agent } from '../../src/agent/index.js'
import { providers } from '../../src/providers/route.js'
import { model } from '../../src/providers/models.js'
import { modelSpec } from '../../src/types/model.js'
import { ProviderError } from '../../src/types/provider-error.js'
import { startReplayServer, type ReplayServer } from './replay-server.js'

const fixture = (path: string): string => readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8')

let server: ReplayServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

describe('providers()', () => {
  it('sends each request to its provider: Anthropic, then an Ollama server, in one conversation', async () => {
    server = await startReplayServer((request) => ({ chunks: [request.url.endsWith('/v1/messages') ? fixture('anthropic/text.sse') : fixture('openai-chat/text.sse')] }))
    const streamFn = providers({
      anthropic: { baseUrl: server.url, apiKey: 'k-anthropic' },
      compatible: { ollama: { baseUrl: `${server.url}/v1` } },
    })
    const agent = new Agent({ systemPrompt: 'sys', model: model('anthropic/claude-sonnet-4-5'), streamFn, retry: false })
    const first = await agent.prompt('hello')
    expect(first.stopReason).toBe('stop')
    agent.setModel(modelSpec('ollama', 'qwen3:8b'))
    const second = await agent.prompt('and now?')
    expect(second.stopReason).toBe('stop')
    expect(server.requests.map((r) => r.url)).toEqual(['/v1/messages', '/v1/chat/completions'])
    expect(server.requests[1]!.body).toMatchObject({ model: 'qwen3:8b' })
    // The Anthropic answer went to the Ollama server as plain history.
    expect(JSON.stringify(server.requests[1]!.body)).toContain('"role":"assistant"')
    expect(server.requests[1]!.headers.authorization).toBeUndefined()
  })

  it('an unknown provider fails with a clear, classified error', async () => {
    const error = await firstValueFrom(providers()({ model: modelSpec('acme', 'm1'), systemPrompt: '', messages: [], tools: [] })).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ProviderError)
    expect(String((error as Error).message)).toContain("no adapter for provider 'acme'")
  })

  it('a provider of your own, with its base URL', async () => {
    server = await startReplayServer([{ chunks: [fixture('openai-chat/text.sse')] }])
    const streamFn = providers({ compatible: { acme: { baseUrl: `${server.url}/v1`, apiKey: 'k' } } })
    const chunks = await lastValueFrom(streamFn({ model: modelSpec('acme', 'm1'), systemPrompt: '', messages: [], tools: [] }).pipe(toArray()))
    expect(chunks[0]).toMatchObject({ type: 'messageStart' })
    expect(server.requests[0]!.headers.authorization).toBe('Bearer k')
  })
})
