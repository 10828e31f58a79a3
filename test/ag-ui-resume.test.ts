/**
 * Resuming an AG-UI stream through the session log: an Agent's log and
 * stream records written to the memory SessionStore (as a durable Agent
 * writes them), read back by agUiHandler's `GET ?threadId=` into the run's
 * AG-UI events — with @ag-ui/client's own `connectAgent()`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import * as t from 'io-ts'
import { NEVER, Subject, firstValueFrom } from 'rxjs'
import { HttpAgent, type BaseEvent, type RunAgentInput } from '@ag-ui/client'
import { Agent } from '../src/agent/index.js'
import type { SessionStore } from '../src/agent/session-store.js'
import { memorySessionStore } from '../src/sessions/index.js'
import { defineTool } from '../src/tools/define-tool.js'
import { reply, scriptedModel } from '../marbles/index.js'
import { agUiHandler } from '../src/ag-ui/index.js'

/** Writes `agent`'s log entries and streamed chunks to `store` under its id, in order, as a durable Agent does. */
function writeSession(agent: Agent, store: SessionStore): { readonly flushed: () => Promise<void> } {
  let queue = Promise.resolve()
  let length = 0
  const append = (expectedSeq: number, body: Parameters<SessionStore['append']>[1]['records'][number]['body']) => {
    queue = queue.then(() => store.append(agent.id, { expectedSeq, records: [{ at: Date.now(), body }] })).then(() => undefined)
  }
  for (const entry of agent.log) append(length++, entry)
  agent.log$.subscribe((entry) => append(length++, entry))
  agent.events$.subscribe((e) => {
    if (e.type === 'messageUpdate') append(length, { type: 'stream', afterSeq: length, chunks: [e.chunk] })
  })
  return { flushed: () => queue }
}

/** An HttpAgent whose `connectAgent()` resumes the thread with `GET ?threadId=`. */
class ResumingAgent extends HttpAgent {
  protected override connect(input: RunAgentInput) {
    const resumer = this.clone() as ResumingAgent
    resumer.url = `${this.url}?threadId=${encodeURIComponent(input.threadId)}`
    resumer.requestInit = () => ({ method: 'GET', headers: { Accept: 'text/event-stream' }, signal: this.abortController.signal })
    return resumer.run(input)
  }
}

const add = defineTool({ name: 'add', description: 'Adds.', parameters: t.type({ a: t.number, b: t.number }), execute: ({ a, b }) => String(a + b) })

let store: SessionStore
let server: Server | undefined
let url = ''
beforeAll(async () => {
  store = memorySessionStore()
  server = createServer(agUiHandler(() => NEVER, { sessionStore: store }))
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
})
afterAll(async () => {
  server?.closeAllConnections()
  await new Promise((resolve) => server?.close(resolve))
  await store.close()
})

describe('resuming through the session log', () => {
  it('a finished run: connectAgent() gets the whole run again, messages rebuilt', async () => {
    const model = scriptedModel([reply.toolCalls([{ id: 'c1', name: 'add', args: { a: 2, b: 3 } }], { text: 'Adding.' }), reply.text('It is 5.', { deltas: 3 })])
    const agent = new Agent({ id: 'thread-done', systemPrompt: '', model: model.model, streamFn: model.streamFn, tools: [add] })
    const writer = writeSession(agent, store)
    await agent.prompt('2 + 3?')
    await writer.flushed()
    const client = new ResumingAgent({ url, threadId: 'thread-done' })
    const types: string[] = []
    await client.connectAgent({}, { onEvent: ({ event }) => void types.push(event.type) })
    expect(types[0]).toBe('RUN_STARTED')
    expect(types.at(-1)).toBe('RUN_FINISHED')
    expect(client.messages.map((m) => m.role)).toEqual(['assistant', 'tool', 'assistant'])
    expect(client.messages[0]).toMatchObject({ content: 'Adding.', toolCalls: [{ id: 'c1', function: { name: 'add', arguments: '{"a":2,"b":3}' } }] })
    expect(client.messages[1]).toMatchObject({ toolCallId: 'c1', content: '5' })
    expect(client.messages[2]).toMatchObject({ content: 'It is 5.' })
  })

  it('a live run: the client connects mid-run, gets what happened so far, then the rest live', async () => {
    const gate = new Subject<string>()
    const slow = defineTool({ name: 'slow', description: 'Waits for the gate.', parameters: t.type({}), execute: () => firstValueFrom(gate) })
    const model = scriptedModel([reply.toolCalls([{ id: 's1', name: 'slow', args: {} }]), reply.text('Finished after the wait.')])
    const agent = new Agent({ id: 'thread-live', systemPrompt: '', model: model.model, streamFn: model.streamFn, tools: [slow] })
    const writer = writeSession(agent, store)
    const toolRunning = new Promise<void>((resolve) => agent.subscribe((e) => { if (e.type === 'toolExecutionStart') resolve() }))
    const result = agent.prompt('wait, then answer')
    await toolRunning
    await writer.flushed()
    const client = new ResumingAgent({ url, threadId: 'thread-live' })
    const seen: BaseEvent[] = []
    let releasedAt = -1
    const connected = client.connectAgent({}, {
      onEvent: ({ event }) => {
        seen.push(event)
        // Once the replay has reached the running tool, let the run go on: the rest arrives live.
        if (releasedAt < 0 && event.type === 'STATE_DELTA' && JSON.stringify(event.delta).includes('runningTools/s1')) {
          releasedAt = seen.length
          setTimeout(() => gate.next('done waiting'), 0)
        }
      },
    })
    await connected
    await result
    expect(releasedAt).toBeGreaterThan(0)
    const types = seen.map((e) => e.type)
    expect(types.slice(releasedAt)).toEqual(expect.arrayContaining(['TOOL_CALL_RESULT', 'TEXT_MESSAGE_CONTENT', 'RUN_FINISHED']))
    expect(types.at(-1)).toBe('RUN_FINISHED')
    expect(client.messages.map((m) => m.role)).toEqual(['assistant', 'tool', 'assistant'])
    expect(client.messages[2]).toMatchObject({ content: 'Finished after the wait.' })
  }, 20_000)

  it('Last-Event-ID skips the frames up to it; unknown sessions and a missing threadId are errors', async () => {
    const all = await (await fetch(`${url}?threadId=thread-done`)).text()
    const ids = [...all.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))
    expect(ids.length).toBeGreaterThan(5)
    const cut = ids[Math.floor(ids.length / 2)]!
    const rest = await (await fetch(`${url}?threadId=thread-done`, { headers: { 'Last-Event-ID': String(cut) } })).text()
    const restIds = [...rest.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))
    expect(restIds).toEqual(ids.filter((id) => id > cut))
    expect((await fetch(`${url}?threadId=nope`)).status).toBe(404)
    expect((await fetch(url)).status).toBe(400)
    expect((await fetch(`${url}?threadId=thread-done&from=-1`)).status).toBe(400)
  })
})
