/**
 * rxagent/ag-ui against `@ag-ui/client`'s own HttpAgent over a local
 * node:http server — with the duplicate rxjs copy `@ag-ui/client` pins
 * present, as in this repository.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createServer, type Server } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import * as t from 'io-ts'
import { NEVER, concat, finalize, lastValueFrom, of, toArray } from 'rxjs'
import { AbstractAgent, HttpAgent, type AgentSubscriber, type BaseEvent, type Message, type RunAgentInput } from '@ag-ui/client'
import { defineTool } from '../src/tools/define-tool.js'
import { ProviderError } from '../src/types/provider-error.js'
import { chunk, reply, scriptedModel } from '../marbles/index.js'
import { agUiHandler, agentRunner, decodeRunAgentInput, loopRunner, runAgUi, type AgUiRunFactory } from '../src/ag-ui/index.js'

const add = defineTool({ name: 'add', description: 'Adds two integers.', parameters: t.type({ a: t.number, b: t.number }), execute: ({ a, b }) => String(a + b) })

let server: Server | undefined
let url = ''
let factory: AgUiRunFactory = () => NEVER

beforeAll(async () => {
  server = createServer(agUiHandler((run) => factory(run)))
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
})
afterAll(async () => {
  server?.closeAllConnections()
  await new Promise((resolve) => server?.close(resolve))
})
afterEach(() => {
  factory = () => NEVER
})

/** Runs `agent` once, collecting every event type the client saw (after its own verification). */
async function runCollecting(agent: AbstractAgent, parameters: Parameters<AbstractAgent['runAgent']>[0] = {}, extra: AgentSubscriber = {}) {
  const events: BaseEvent[] = []
  const result = await agent.runAgent(parameters, { onEvent: ({ event }) => void events.push(event), ...extra })
  return { events, types: events.map((e) => e.type), result }
}

const user = (id: string, content: string): Message => ({ id, role: 'user', content })

describe('the duplicate rxjs copy', () => {
  it('is present: @ag-ui/client resolves another rxjs than rxagent', () => {
    const fromClient = createRequire(createRequire(import.meta.url).resolve('@ag-ui/client')).resolve('rxjs')
    expect(fromClient).not.toBe(createRequire(import.meta.url).resolve('rxjs'))
  })
})

describe('agUiHandler with HttpAgent', () => {
  it('a tool-using conversation: events in order, messages reconstructed on the client, state in sync', async () => {
    const model = scriptedModel([reply.toolCalls([{ id: 'c1', name: 'add', args: { a: 2, b: 3 } }], { text: 'Let me add.', usage: { input: 10, output: 5 } }), reply.text('2 + 3 = 5', { usage: { input: 20, output: 4 } })])
    factory = loopRunner({ systemPrompt: 'Use tools.', model: model.model, streamFn: model.streamFn, tools: [add] })
    const agent = new HttpAgent({ url, threadId: 'thread-1', initialMessages: [user('u1', 'What is 2 + 3?')], initialState: { theme: 'dark' } })
    const { types, result } = await runCollecting(agent, { runId: 'run-1' })
    expect(types).toEqual([
      'RUN_STARTED', 'STATE_SNAPSHOT',
      'STEP_STARTED', 'STATE_DELTA',
      'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END',
      'TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END',
      'STATE_DELTA', 'STATE_DELTA', 'TOOL_CALL_RESULT',
      'STATE_DELTA', 'STEP_FINISHED',
      'STEP_STARTED', 'STATE_DELTA',
      'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END',
      'STATE_DELTA', 'STEP_FINISHED',
      'STATE_DELTA', 'RUN_FINISHED',
    ])
    expect(agent.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant'])
    const [, first, tool, last] = agent.messages
    expect(first).toMatchObject({ role: 'assistant', content: 'Let me add.', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'add', arguments: '{"a":2,"b":3}' } }] })
    expect(tool).toMatchObject({ role: 'tool', toolCallId: 'c1', content: '5' })
    expect(last).toMatchObject({ role: 'assistant', content: '2 + 3 = 5' })
    expect(result.result).toMatchObject({ stopReason: 'stop', usage: { input: 30, output: 9 } })
    // The client's copy of the state, patched by every delta, equals the run's final progress.
    expect(agent.state).toEqual({ theme: 'dark', rxagent: { status: 'stop', turn: 1, runningTools: {}, usage: { inputTokens: 30, outputTokens: 9, cost: 0 } } })
    // The model saw the client's transcript and the server's system prompt.
    expect(model.requests[0]!.systemPrompt).toBe('Use tools.')
    expect(model.requests[0]!.messages).toMatchObject([{ role: 'user', content: [{ type: 'text', text: 'What is 2 + 3?' }] }])
  })

  it('a client-side tool: the run ends with the call pending; the client answers it in the next run', async () => {
    const model = scriptedModel([
      reply.toolCalls([{ id: 'k1', name: 'confirm', args: { question: 'Delete it?' } }, { id: 'c1', name: 'add', args: { a: 1, b: 1 } }]),
      reply.text('Deleted.'),
    ])
    factory = agentRunner({ systemPrompt: '', model: model.model, streamFn: model.streamFn, tools: [add] })
    const confirm = { name: 'confirm', description: 'Asks the user.', parameters: { type: 'object', properties: { question: { type: 'string' } } } }
    const agent = new HttpAgent({ url, initialMessages: [user('u1', 'Delete the file')] })
    let pending: string[] = []
    const first = await runCollecting(agent, { tools: [confirm] }, { onRunFinishedEvent: (p) => { if (p.outcome === 'success') pending = p.pendingToolCallIds } })
    expect(pending).toEqual(['k1'])
    expect(first.types.filter((type) => type === 'TOOL_CALL_RESULT')).toHaveLength(1) // the server's tool only
    expect(model.requests[0]!.tools?.map((tool) => tool.name)).toEqual(['add', 'confirm'])
    agent.addMessage({ id: 'r1', role: 'tool', toolCallId: 'k1', content: 'yes' })
    const second = await runCollecting(agent, { tools: [confirm] })
    expect(second.types.at(-1)).toBe('RUN_FINISHED')
    expect(model.requests[1]!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'toolResult'])
    expect(model.requests[1]!.messages.slice(2)).toMatchObject([
      { role: 'toolResult', toolCallId: 'c1', content: [{ type: 'text', text: '2' }] },
      { role: 'toolResult', toolCallId: 'k1', toolName: 'confirm', content: [{ type: 'text', text: 'yes' }] },
    ])
    expect(agent.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Deleted.' })
  })

  it('an error: RUN_ERROR with the message', async () => {
    const model = scriptedModel([ProviderError.of('auth', 'scripted', 'invalid x-api-key', { status: 401 })])
    factory = loopRunner({ model: model.model, streamFn: model.streamFn })
    const agent = new HttpAgent({ url, initialMessages: [user('u1', 'hi')] })
    let error: BaseEvent | undefined
    await runCollecting(agent, {}, { onRunErrorEvent: ({ event }) => void (error = event) }).catch(() => undefined)
    expect(error).toMatchObject({ type: 'RUN_ERROR', code: 'error', message: expect.stringContaining('invalid x-api-key') })
  })

  it.each([
    ['loopRunner', loopRunner],
    ['agentRunner', (o: Parameters<typeof loopRunner>[0]) => agentRunner({ systemPrompt: '', ...o } as never)],
  ] as const)('an abort from the client (%s): the server run is unsubscribed and the running tool sees the abort', async (_name, runner) => {
    let aborted!: () => void
    const toolAborted = new Promise<void>((resolve) => (aborted = resolve))
    const hang = defineTool({ name: 'hang', description: 'Waits.', parameters: t.type({}), execute: (_args, { signal }) => { signal.addEventListener('abort', () => aborted()); return NEVER } })
    const model = scriptedModel([reply.toolCalls([{ id: 'h1', name: 'hang', args: {} }])])
    factory = runner({ model: model.model, streamFn: model.streamFn, tools: [hang] })
    const agent = new HttpAgent({ url, initialMessages: [user('u1', 'wait')] })
    // The client aborts once the server reports the tool running (its STATE_DELTA adding it).
    const run = runCollecting(agent, {}, { onStateDeltaEvent: ({ event }) => { if (JSON.stringify(event.delta).includes('runningTools/h1')) agent.abortRun() } })
    await toolAborted
    await run.catch(() => undefined)
  }, 20_000)

  it('an abort from the client while the model streams: the model stream is unsubscribed', async () => {
    let unsubscribed!: () => void
    const modelAborted = new Promise<void>((resolve) => (unsubscribed = resolve))
    const streaming = scriptedModel([reply.text('unused')])
    const streamFn: typeof streaming.streamFn = () => concat(of(chunk.start(), chunk.text('Once upon')), NEVER).pipe(finalize(() => unsubscribed()))
    factory = loopRunner({ model: streaming.model, streamFn })
    const agent = new HttpAgent({ url, initialMessages: [user('u1', 'tell a story')] })
    const run = runCollecting(agent, {}, { onTextMessageContentEvent: () => agent.abortRun() })
    await modelAborted
    await run.catch(() => undefined)
  }, 20_000)

  it('bad input is a 400 naming the path; another method a 405', async () => {
    const bad = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ threadId: 't', runId: 'r', messages: [{ id: 'm', role: 'human', content: 'x' }], tools: [], context: [] }) })
    expect(bad.status).toBe(400)
    const body = (await bad.json()) as { error: string; errors: { path: string }[] }
    expect(body.error).toMatch(/^agUiHandler: invalid input at messages\[0\]/)
    const notJson = await fetch(url, { method: 'POST', body: '{' })
    expect(notJson.status).toBe(400)
    expect(((await notJson.json()) as { error: string }).error).toMatch(/not JSON/)
    const get = await fetch(url)
    expect(get.status).toBe(405)
    expect(get.headers.get('allow')).toBe('POST')
  })
})

describe('runAgUi in process', () => {
  it('an AbstractAgent (its own rxjs copy) runs an rxagent run returned as it is', async () => {
    const model = scriptedModel([reply.thinking('Two and two.', 'Four.')])
    class LocalAgent extends AbstractAgent {
      run(input: RunAgentInput) {
        return runAgUi(input, loopRunner({ model: model.model, streamFn: model.streamFn })) as never
      }
    }
    const agent = new LocalAgent({ initialMessages: [user('u1', '2 + 2?')] })
    const { types } = await runCollecting(agent)
    expect(types).toEqual(expect.arrayContaining(['REASONING_START', 'REASONING_MESSAGE_START', 'REASONING_MESSAGE_CONTENT', 'REASONING_MESSAGE_END', 'REASONING_END', 'TEXT_MESSAGE_CONTENT']))
    expect(types.indexOf('REASONING_END' as never)).toBeLessThan(types.indexOf('TEXT_MESSAGE_START' as never))
    expect(agent.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Four.' })
  })

  it('an error of the run factory becomes RUN_STARTED, RUN_ERROR', async () => {
    const events = await lastValueFrom(runAgUi({ threadId: 't', runId: 'r', messages: [user('u', 'x')], tools: [], context: [] }, () => { throw new Error('no model configured') }).pipe(toArray()))
    expect(events.map((e) => e.type)).toEqual(['RUN_STARTED', 'RUN_ERROR'])
    expect(events[1]).toMatchObject({ message: 'no model configured', code: 'Error' })
  })
})

describe('decodeRunAgentInput', () => {
  it('maps every role and names the path of what is wrong', () => {
    const decoded = decodeRunAgentInput({
      threadId: 't', runId: 'r', tools: [], context: [{ description: 'User locale', value: 'fr-FR' }], state: { a: 1 },
      messages: [
        { id: 's', role: 'system', content: 'Be brief.' },
        { id: 'u', role: 'user', content: [{ type: 'text', text: 'Look' }, { type: 'image', source: { type: 'url', value: 'https://x/y.png' } }] },
        { id: 'a', role: 'assistant', toolCalls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"q":1}' } }] },
        { id: 't', role: 'tool', toolCallId: 'c', content: 'failed', error: 'boom' },
        { id: 'r', role: 'reasoning', content: 'hidden' },
      ],
    }, 'test', 5)
    expect(decoded.system).toBe('Be brief.\n\nUser locale: fr-FR')
    expect(decoded.messages).toMatchObject([
      { role: 'user', content: [{ type: 'text', text: 'Look' }, { type: 'image', source: { type: 'url', url: 'https://x/y.png' } }], timestamp: 5 },
      { role: 'assistant', content: [{ type: 'toolCall', id: 'c', name: 'f', arguments: { q: 1 } }], stopReason: 'toolUse' },
      { role: 'toolResult', toolCallId: 'c', toolName: 'f', isError: true, content: [{ type: 'text', text: 'failed' }, { type: 'text', text: 'boom' }] },
    ])
    const base = { threadId: 't', runId: 'r', tools: [], context: [] }
    expect(() => decodeRunAgentInput({ ...base, messages: [{ id: 'x', role: 'tool', toolCallId: 'nope', content: '' }] }, 'test')).toThrow('test: invalid input at messages[0].toolCallId')
    expect(() => decodeRunAgentInput({ ...base, messages: [{ id: 'a', role: 'assistant', toolCalls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{' } }] }] }, 'test')).toThrow('test: invalid input at messages[0].toolCalls[0].function.arguments')
    expect(() => decodeRunAgentInput({ ...base, messages: 'hi' }, 'test')).toThrow(/test: invalid input at messages/)
  })
})

describe('toAgUi details', () => {
  it('frames are what @ag-ui/encoder writes for SSE', async () => {
    const hello = scriptedModel([reply.thinking('hmm', 'hello')])
    // @ag-ui/encoder is @ag-ui/client's dependency (not ours): resolved from there.
    const encoderPath = createRequire(createRequire(import.meta.url).resolve('@ag-ui/client')).resolve('@ag-ui/encoder')
    const { EventEncoder } = (await import(encoderPath)) as typeof import('@ag-ui/encoder')
    const { sseFrame } = await import('../src/ag-ui/index.js')
    const encoder = new EventEncoder()
    const events = await lastValueFrom(runAgUi({ threadId: 't', runId: 'r', messages: [user('u', 'x')], tools: [], context: [] }, loopRunner({ model: hello.model, streamFn: hello.streamFn })).pipe(toArray()))
    expect(events.length).toBeGreaterThan(5)
    for (const event of events) expect(sseFrame(event)).toBe(encoder.encodeSSE(event as BaseEvent))
  })

  it('a retry after partial text: the partial message is closed, a CUSTOM event names it, the answer is a new message', async () => {
    const overloaded = ProviderError.of('overloaded', 'scripted', 'overloaded', { status: 529 })
    const model = scriptedModel([
      { marbles: '(st#)', values: { s: chunk.start(), t: chunk.text('Partial ans') }, error: overloaded },
      reply.text('Whole answer.'),
    ])
    class LocalAgent extends AbstractAgent {
      run(input: RunAgentInput) {
        return runAgUi(input, loopRunner({ model: model.model, streamFn: model.streamFn, retry: { baseDelayMs: 1, jitter: 0 } })) as never
      }
    }
    const agent = new LocalAgent({ initialMessages: [user('u1', 'answer')] })
    const { events } = await runCollecting(agent)
    const retry = events.find((e) => e.type === 'CUSTOM') as (BaseEvent & { name: string; value: { discardedMessageId: string; attempt: number } }) | undefined
    expect(retry).toMatchObject({ name: 'rxagent.streamRetry', value: { attempt: 1 } })
    const starts = events.filter((e) => e.type === 'TEXT_MESSAGE_START').map((e) => (e as BaseEvent & { messageId: string }).messageId)
    expect(starts).toHaveLength(2)
    expect(starts[0]).toBe(retry!.value.discardedMessageId)
    expect(agent.messages.find((m) => m.id === starts[1])).toMatchObject({ role: 'assistant', content: 'Whole answer.' })
  })
})
