/**
 * `Agent.open` on a store: a new session and a reopened one, the
 * group-commit writer (deltas merged, durableSeq monotone, flush), options
 * the log decides, bad records named by position.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import * as t from 'io-ts'
import { Agent } from '../../src/agent/agent.js'
import type { AgentLogEntry } from '../../src/agent/agent-log.js'
import type { SessionStore, StreamRecord } from '../../src/agent/session-store.js'
import { defineTool } from '../../src/tools/define-tool.js'
import { modelSpec } from '../../src/types/model.js'
import { chunk, reply, scriptedModel } from '../../marbles/index.js'
import { VirtualTimeScheduler } from 'rxjs'
import { STREAM_LINGER_MS } from '../../src/agent/session-writer.js'
import { closeAll, closeStores, handModel, openAgent, storeKinds, until, wrapStore } from './session-kit.js'

const echo = defineTool({ name: 'echo', description: 'Echoes.', parameters: t.type({ text: t.string }), execute: ({ text }) => `echo ${text}` })
const opened: Agent[] = []
afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((a) => a.session?.close()))
  await closeAll()
})
afterAll(closeStores)

async function open(store: SessionStore, sessionId: string, script: Parameters<typeof scriptedModel>[0] = [], extra: Partial<Parameters<typeof Agent.open>[0]> = {}): Promise<Agent> {
  const model = scriptedModel(script)
  const agent = await Agent.open({ store, sessionId, systemPrompt: 'sys', model: model.model, streamFn: model.streamFn, tools: [echo], holder: 'test', ...extra })
  opened.push(agent)
  return agent
}

const bodies = async (store: SessionStore, id: string) => (await store.read(id)).map((r) => r.body)
const entries = async (store: SessionStore, id: string) => (await bodies(store, id)).filter((b): b is AgentLogEntry => b.type !== 'stream')

describe.each(storeKinds)('Agent.open (%s store)', (_kind, make) => {
  it('a new session: the init entry is committed before open resolves', async () => {
    const store = await make()
    const agent = await open(store, 's1', [], { id: 'agent-s1' })
    expect(agent.session?.sessionId).toBe('s1')
    expect(agent.session?.store).toBe(store)
    expect(agent.session?.durableSeq).toBe(1)
    expect(await entries(store, 's1')).toEqual([expect.objectContaining({ type: 'init', seq: 0, agentId: 'agent-s1', systemPrompt: 'sys' })])
    expect(new Agent({ systemPrompt: '', model: modelSpec('a', 'b'), streamFn: scriptedModel([]).streamFn }).session).toBeUndefined()
  })

  it('commits every entry of a run and reopens to the same state; the log decides id, prompt and model', async () => {
    const store = await make()
    const agent = await open(store, 's2', [reply.toolCalls([{ id: 'c1', name: 'echo', args: { text: 'hi' } }]), reply.text('done', { deltas: 4 })])
    await agent.prompt('go')
    await agent.session!.flush()
    expect(agent.session!.durableSeq).toBe(agent.log.length)
    const log = await entries(store, 's2')
    expect(log).toEqual(JSON.parse(JSON.stringify(agent.log)))
    await agent.session!.close()

    const again = await open(store, 's2', [reply.text('more')], { systemPrompt: 'ignored', model: modelSpec('other', 'x') })
    expect(again.id).toBe(agent.id)
    expect(again.state.systemPrompt).toBe('sys')
    expect(again.state.model).toEqual(agent.state.model)
    expect(again.state.messages).toEqual(agent.state.messages)
    expect(again.session!.durableSeq).toBe(agent.log.length)
    await again.prompt('and?')
    await again.session!.flush()
    expect((await entries(store, 's2')).map((e) => e.seq)).toEqual(again.log.map((_, i) => i))
  })

  it('refuses messages for an existing session, another id, a missing tool, bad options', async () => {
    const store = await make()
    const first = await open(store, 's3')
    await first.session!.close()
    await expect(open(store, 's3', [], { messages: [] })).rejects.toThrow(/session 's3' exists \(1 log entries\): its transcript comes from its log/)
    await expect(open(store, 's3', [], { id: 'someone-else' })).rejects.toThrow(/session 's3' belongs to agent '.*', not 'someone-else'/)
    await expect(open(store, 's3', [], { tools: [] })).rejects.toThrow(/the log names a tool 'echo' that options.tools lacks/)
    await expect(open(store, '', [])).rejects.toThrow(/Agent\.open: invalid options.*sessionId/)
    await expect(open({} as SessionStore, 'x', [])).rejects.toThrow(/Agent\.open: invalid options.*store/)
    await expect(open(store, 'x', [], { lease: { ttlMs: 0 } })).rejects.toThrow(/lease\.ttlMs/)
    // A refused open gave its lease back.
    expect((await store.acquireLease('s3', 'someone', 1000)).acquired).toBe(true)
  })

  it('names a record that does not decode by session and position', async () => {
    const store = await make()
    const agent = await open(store, 's4')
    await agent.prompt('hi').result.catch(() => undefined)
    await agent.session!.close()
    const records = await store.read('s4')
    const bad = records.find((r) => r.body.type === 'runStart')!
    const corrupt = wrapStore(store, { read: async () => records.map((r) => (r === bad ? { ...r, body: { ...r.body, prompts: 'nope' } } : r)) as never })
    await expect(open(corrupt, 's4')).rejects.toThrow(new RegExp(`Agent.open: invalid record at position ${bad.position} of session 's4' at prompts: expected ReadonlyArray<AgentMessage>`))
  })

  it('group commit: a streamed message of many deltas that ends in the batch it streamed in goes as its messageEnd alone (the stream records it compacts are not sent); durableSeq only grows', async () => {
    const store = await make()
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const seen: number[] = []
    const held: StreamRecord[] = []
    let appends = 0
    const counting = wrapStore(store, {
      append: async (id, a) => {
        appends++
        // Hold the first run append so that what follows piles up into the next batch.
        if (a.records.some((r) => r.body.type === 'runStart')) await gate
        for (const r of a.records) if (r.body.type === 'stream') held.push(r.body)
        return store.append(id, a)
      },
    })
    const agent = await open(counting, 's5', [reply.thinking('let me think', 'x'.repeat(1000), { deltas: 1000 })])
    agent.session!.durable$.subscribe((n) => seen.push(n))
    const before = appends
    const run = agent.prompt('go')
    release()
    await run
    await agent.session!.flush()
    expect(appends - before).toBeLessThanOrEqual(3)
    // The deltas piled up behind the held append, and the message ended before they were sent.
    // (How deltas merge into a stream record that is sent: the linger test below.)
    expect(held).toEqual([])
    const ended = agent.log.filter((e) => e.type === 'messageEnd' && e.message.role === 'assistant').at(-1)
    expect(ended?.type === 'messageEnd' && ended.message.role === 'assistant' ? ended.message.content.map((c) => (c.type === 'text' ? c.text : '')).join('') : '').toBe('x'.repeat(1000))
    expect(seen).toEqual([...seen].sort((a, b) => a - b))
    expect(seen.at(-1)).toBe(agent.log.length)
    // Compacted: the message's end deleted its stream records.
    expect((await bodies(store, 's5')).filter((b) => b.type === 'stream')).toEqual([])
  })

  it('a slow stream lingers: its deltas wait on the scheduler and go as one stream record, unless an entry or flush sends them first', async () => {
    const store = await make()
    const sent: string[][] = []
    const watching = wrapStore(store, {
      append: (id, a) => {
        sent.push(a.records.map((r) => r.body.type))
        return store.append(id, a)
      },
    })
    const scheduler = new VirtualTimeScheduler()
    const model = handModel(['manual'])
    const agent = await openAgent(watching, 's7', model, { scheduler })
    void agent.prompt('go')
    await until(() => model.live.length === 1, 'the model call')
    await agent.session!.flush()
    sent.length = 0
    model.live[0]!.next(chunk.start())
    for (let i = 0; i < 100; i++) {
      model.live[0]!.next(chunk.text(`${i} `))
      // A macrotask between deltas: every append has long completed.
      await new Promise((resolve) => setImmediate(resolve))
    }
    expect(sent).toEqual([])
    scheduler.maxFrames = scheduler.now() + STREAM_LINGER_MS
    scheduler.flush()
    await until(() => sent.length === 1, 'the linger')
    expect(sent).toEqual([['stream']])
    const [record] = (await store.read('s7')).filter((r) => r.body.type === 'stream')
    expect(record?.body).toMatchObject({ chunks: [{ type: 'messageStart' }, { type: 'textDelta', text: Array.from({ length: 100 }, (_, i) => `${i} `).join('') }] })
    model.live[0]!.next(chunk.text('more'))
    await agent.session!.flush()
    expect(sent).toEqual([['stream'], ['stream']])
    agent.steer('now')
    model.live[0]!.next(chunk.text('after'))
    await agent.session!.flush()
    expect(sent.at(-1)).toEqual(['enqueue', 'stream'])
  })

  it('flush resolves at once when everything is committed, and after the batches in flight otherwise', async () => {
    const store = await make()
    const agent = await open(store, 's6')
    await agent.session!.flush()
    agent.steer('a')
    agent.steer('b')
    expect(agent.session!.durableSeq).toBe(1)
    await agent.session!.flush()
    expect(agent.session!.durableSeq).toBe(3)
    const seen: number[] = []
    let completed = false
    agent.session!.durable$.subscribe({ next: (n) => seen.push(n), complete: () => (completed = true) })
    await agent.session!.close()
    expect(seen).toEqual([3])
    expect(completed).toBe(true)
  })
})
