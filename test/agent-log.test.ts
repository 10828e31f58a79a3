/**
 * Agent as a fold of one log: the entries a run and the commands append,
 * `Agent.fromLog` (replay = resume, readable decode errors), pending
 * approvals as state (`resolveApproval`), and the bounded run replay.
 */
import { describe, expect, it } from 'vitest'
import * as t from 'io-ts'
import { Observable, Subject, lastValueFrom, toArray } from 'rxjs'
import { Agent, type AgentRunEvent } from '../src/agent/index.js'
import { AgentLogEntry } from '../src/agent/agent-log.js'
import { retainedEventCount } from '../src/agent/run-replay.js'
import { defineTool } from '../src/tools/define-tool.js'
import type { ProviderChunk } from '../src/types/chunk.js'
import { modelSpec } from '../src/types/model.js'
import { chunk, reply, scriptedModel } from '../marbles/index.js'

const echo = defineTool({ name: 'echo', description: 'Echoes.', parameters: t.type({ text: t.string }), execute: ({ text }) => text })
const rm = defineTool({ name: 'rm', description: 'Deletes.', parameters: t.type({ path: t.string }), needsApproval: true, execute: ({ path }) => `deleted ${path}` })
const viaJson = <T>(value: T): unknown => JSON.parse(JSON.stringify(value)) as unknown
const thrown = (f: () => unknown): Error => {
  try {
    f()
  } catch (error) {
    return error as Error
  }
  throw new Error('did not throw')
}

describe('the log', () => {
  it('records a run by its final messages, not its deltas, and every command; each entry decodes and sits at its position', async () => {
    const model = scriptedModel([reply.toolCalls([{ id: 'c1', name: 'echo', args: { text: 'hi' } }]), reply.text('a streamed answer', { deltas: 5 })])
    const agent = new Agent({ id: 'L', systemPrompt: 'sys', model: model.model, streamFn: model.streamFn, tools: [echo] })
    agent.steer('later')
    agent.clearSteering()
    agent.enterPlanMode()
    agent.exitPlanMode()
    await agent.prompt('go')
    agent.setSystemPrompt('other')
    agent.setModel(modelSpec('other', 'o-1'))
    agent.setTools([])
    agent.followUp('next')
    const types = agent.log.map((e) => e.type)
    expect(types.slice(0, 6)).toEqual(['init', 'enqueue', 'clearQueue', 'planMode', 'planMode', 'runStart'])
    expect(types).not.toContain('messageUpdate')
    expect(types.filter((x) => x === 'messageEnd')).toHaveLength(4)
    expect(types.slice(-5)).toEqual(['agentEnd', 'systemPrompt', 'model', 'tools', 'enqueue'])
    agent.log.forEach((e, i) => {
      expect(e.seq).toBe(i)
      expect(AgentLogEntry.is(viaJson(e))).toBe(true)
    })
    expect(agent.state).toMatchObject({ systemPrompt: 'other', tools: [], followUpQueue: [{ role: 'user' }], planMode: false })
  })

  it('log$ tells every entry as it is appended', () => {
    const model = scriptedModel([reply.text('ok')])
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn })
    const seen: number[] = []
    agent.log$.subscribe((e) => seen.push(e.seq))
    agent.steer('a')
    agent.followUp('b')
    expect(seen).toEqual([1, 2])
  })

  it('a streaming snapshot shares the history; the log gets the message once it ends', () => {
    const gate = new Subject<void>()
    const stream = (): Observable<ProviderChunk> =>
      new Observable((subscriber) => {
        subscriber.next(chunk.start())
        subscriber.next(chunk.text('par'))
        subscriber.next(chunk.text('tial'))
        return gate.subscribe(() => {
          subscriber.next(chunk.stop())
          subscriber.complete()
        })
      })
    const model = scriptedModel([stream])
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn })
    void agent.prompt('q')
    expect(agent.state.streamMessage?.content).toEqual([{ type: 'text', text: 'partial' }])
    expect(agent.log.map((e) => e.type)).not.toContain('messageUpdate')
    const length = agent.log.length
    gate.next()
    expect(agent.log.length).toBeGreaterThan(length)
    expect(agent.state.streamMessage).toBeUndefined()
  })
})

describe('Agent.fromLog', () => {
  it('rebuilds an identical agent from the log as JSON, which then goes on', async () => {
    const model = scriptedModel([reply.toolCalls([{ id: 'c1', name: 'echo', args: { text: 'hi' } }]), reply.text('done'), reply.text('again')])
    const agent = new Agent({ systemPrompt: 'sys', model: model.model, streamFn: model.streamFn, tools: [echo] })
    await agent.prompt('one')
    agent.steer('queued')
    agent.enterPlanMode()
    const replayed = Agent.fromLog(viaJson(agent.log) as unknown[], { streamFn: model.streamFn, tools: [echo] })
    expect(replayed.id).toBe(agent.id)
    expect(replayed.state).toEqual(agent.state)
    expect(replayed.log).toEqual(viaJson(agent.log))
    const run = replayed.continue()
    expect(run.runId).toBe(`${agent.id}/run-2`)
    await run
    expect(replayed.state.messages.at(-1)).toMatchObject({ role: 'assistant', content: [{ type: 'text', text: 'again' }] })
  })

  it('a log that ends in the middle of a run is closed (interrupted) with every tool call answered', () => {
    const model = scriptedModel([reply.toolCalls([{ id: 'c1', name: 'rm', args: { path: '/x' } }])])
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, tools: [rm], approveTool: 'resolveApproval' })
    void agent.prompt('go')
    expect(agent.state.pendingApprovals).toEqual([{ toolCallId: 'c1', toolName: 'rm', args: { path: '/x' } }])
    const replayed = Agent.fromLog(viaJson(agent.log) as unknown[], { streamFn: model.streamFn, tools: [rm] })
    expect(replayed.state).toMatchObject({ isRunning: false, pendingApprovals: [], error: 'interrupted: the log ends in the middle of a run' })
    expect(replayed.state.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult'])
    expect(replayed.log.at(-1)?.type).toBe('runFailed')
  })

  it('says what does not decode, with its path, and which tool is missing', async () => {
    const model = scriptedModel([reply.text('ok')])
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, tools: [echo] })
    await agent.prompt('hi')
    const log = viaJson(agent.log) as Record<string, unknown>[]
    const message = (e: Record<string, unknown>) => e.message as Record<string, unknown>
    const at = log.findIndex((e) => e.type === 'messageEnd')
    const broken = log.map((e, i) => (i === at ? { ...e, message: { ...message(e), role: 'human' } } : e))
    expect(thrown(() => Agent.fromLog(broken, { streamFn: model.streamFn, tools: [echo] })).message).toContain(`at [${at}].message: 'role' must be one of`)
    expect(thrown(() => Agent.fromLog(log, { streamFn: model.streamFn })).message).toBe(
      `Agent.fromLog: invalid log at [0].tools[0]: the log names a tool 'echo' that options.tools lacks`,
    )
    expect(thrown(() => Agent.fromLog([{ ...log[0], version: 9 }], { streamFn: model.streamFn })).message).toContain('log format 9 is newer than this rxagent understands (1)')
    expect(thrown(() => Agent.fromLog([log[0], { ...log[1], seq: 5 }], { streamFn: model.streamFn, tools: [echo] })).message).toContain('[1].seq')
    expect(thrown(() => Agent.fromLog([], { streamFn: model.streamFn })).message).toContain('expected a non-empty array')
  })
})

describe('pending approvals are state', () => {
  const calls = () => scriptedModel([reply.toolCalls([{ id: 'c1', name: 'rm', args: { path: '/tmp/x' } }]), reply.text('done')])

  it('a call waits in state.pendingApprovals until resolveApproval decides it; the run then goes on', async () => {
    const model = calls()
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, tools: [rm], approveTool: 'resolveApproval' })
    const run = agent.prompt('clean up')
    await Promise.resolve()
    expect(agent.isRunning).toBe(true)
    expect(agent.state.pendingApprovals).toEqual([{ toolCallId: 'c1', toolName: 'rm', args: { path: '/tmp/x' } }])
    expect(agent.resolveApproval('nope', { approved: true })).toBe(false)
    expect(agent.resolveApproval('c1', { approved: true })).toBe(true)
    expect(agent.resolveApproval('c1', { approved: false })).toBe(false)
    const result = await run
    expect(result.stopReason).toBe('stop')
    expect(agent.state.pendingApprovals).toEqual([])
    expect(agent.state.messages.find((m) => m.role === 'toolResult')).toMatchObject({ isError: false, content: [{ type: 'text', text: 'deleted /tmp/x' }] })
    expect(agent.log.find((e) => e.type === 'approvalDecided')).toMatchObject({ toolCallId: 'c1', decision: { approved: true }, by: 'resolveApproval' })
  })

  it('the first answer wins: resolveApproval before the approveTool callback, whose later answer is ignored', async () => {
    const model = calls()
    let answer!: (approved: boolean) => void
    const approveTool = () => new Promise<{ approved: boolean }>((resolve) => (answer = (approved) => resolve({ approved }))).then((d) => (d.approved ? { approved: true as const } : { approved: false as const }))
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, tools: [rm], approveTool })
    const run = agent.prompt('clean up')
    await Promise.resolve()
    expect(agent.resolveApproval('c1', { approved: false, reason: 'not now' })).toBe(true)
    answer(true)
    await run
    expect(JSON.stringify(agent.state.messages.find((m) => m.role === 'toolResult'))).toContain('not now')
    expect(agent.log.filter((e) => e.type === 'approvalDecided')).toHaveLength(1)
  })

  it('the approveTool callback decides when it answers first', async () => {
    const model = calls()
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, tools: [rm], approveTool: () => ({ approved: true }) })
    await agent.prompt('clean up')
    expect(agent.resolveApproval('c1', { approved: false })).toBe(false)
    expect(agent.log.find((e) => e.type === 'approvalDecided')).toMatchObject({ by: 'approveTool', decision: { approved: true } })
  })

  it('an abort while a call is pending ends the run with the call rejected, and nothing left pending', async () => {
    const model = calls()
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, tools: [rm], approveTool: 'resolveApproval' })
    const run = agent.prompt('clean up')
    await Promise.resolve()
    expect(agent.state.pendingApprovals).toHaveLength(1)
    await agent.abort()
    const result = await run
    expect(result.stopReason).toBe('aborted')
    expect(agent.state.pendingApprovals).toEqual([])
    expect(agent.state.messages.find((m) => m.role === 'toolResult')).toMatchObject({ isError: true })
    expect(agent.resolveApproval('c1', { approved: true })).toBe(false)
    expect(Agent.fromLog(viaJson(agent.log) as unknown[], { streamFn: model.streamFn, tools: [rm] }).state).toEqual(agent.state)
  })
})

describe('the run replay is bounded', () => {
  it('after 200,000 deltas a late subscriber gets the boundaries and the partial message, from a replay of a handful of events', async () => {
    const gate = new Subject<void>()
    const deltas = 200_000
    const stream = (): Observable<ProviderChunk> =>
      new Observable((subscriber) => {
        subscriber.next(chunk.start())
        for (let i = 0; i < deltas; i++) subscriber.next(chunk.text('x'))
        return gate.subscribe(() => {
          subscriber.next(chunk.stop())
          subscriber.complete()
        })
      })
    const model = scriptedModel([stream])
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, transformContext: false })
    let live = 0
    agent.subscribe((e) => e.type === 'messageUpdate' && live++)
    const run = agent.prompt('q')
    expect(live).toBe(deltas)
    expect(retainedEventCount(run.events$)).toBeLessThan(10)
    const late: AgentRunEvent[] = []
    run.events$.subscribe((e) => late.push(e))
    const update = late.filter((e) => e.type === 'messageUpdate')
    expect(update).toHaveLength(1)
    expect(update[0]?.type === 'messageUpdate' && update[0].message.content).toEqual([{ type: 'text', text: 'x'.repeat(deltas) }])
    gate.next()
    await run
    expect(retainedEventCount(run.events$)).toBeLessThan(12)
    const replayed = await lastValueFrom(run.events$.pipe(toArray()))
    expect(replayed.map((e) => e.type)).toEqual(['agentStart', 'turnStart', 'messageStart', 'messageEnd', 'messageStart', 'messageEnd', 'turnEnd', 'turnMetrics', 'agentEnd'])
    // The late subscriber: the replay up to the partial message, then the rest live.
    expect(late.map((e) => e.type)).toEqual(['agentStart', 'turnStart', 'messageStart', 'messageEnd', 'messageStart', 'messageUpdate', 'messageEnd', 'turnEnd', 'turnMetrics', 'agentEnd'])
  })
})
