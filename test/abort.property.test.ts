/**
 * Property: an abort at any virtual moment of a run that waits at every
 * waiting point (pre-turn policy, context transform, retry backoff, fallback
 * switch, pre-dispatch policy, approver, tools, post-turn and post-loop
 * policies, steering and follow-up sources that never answer) ends the run at
 * that very frame with stopReason `aborted` and a valid transcript: every
 * tool call has exactly one result, every started turn ends, every approval
 * request is closed, every tool start has its end, and nothing that was
 * pending is still subscribed. For the Agent: `abort()` resolves, the agent
 * is idle, and the next prompt works.
 */
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import * as t from 'io-ts'
import { concat, from, ignoreElements, map, NEVER, Observable, timer } from 'rxjs'
import { chunk, reply, runAgentMarbles, scriptedModel } from '../marbles/index.js'
import { Agent } from '../src/agent/agent.js'
import { agentLoop, type AgentLoopConfig } from '../src/loop/agent-loop.js'
import { transcriptFromEvents } from '../src/loop/transcript.js'
import { Approval } from '../src/policy/approval.js'
import { Verdict } from '../src/policy/policy.js'
import { defineTool } from '../src/tools/define-tool.js'
import type { AgentEvent } from '../src/types/event.js'
import { toolCallsOf, type AgentMessage } from '../src/types/message.js'
import { modelSpec } from '../src/types/model.js'
import { ProviderError } from '../src/types/provider-error.js'
import type { AgentResult } from '../src/types/result.js'
import type { AgentTool } from '../src/types/tool.js'
import { context, hello } from './helpers.js'

/** How long each waiting point waits, in frames. */
interface Waits {
  readonly preTurn: number
  readonly transform: number
  readonly preDispatch: number
  readonly approve: number
  readonly toolA: number
  readonly toolB: number
  readonly postTurn: number
  readonly postLoop: number
}

const arbWaits: fc.Arbitrary<Waits> = fc.record({
  preTurn: fc.integer({ min: 1, max: 4 }),
  transform: fc.integer({ min: 1, max: 4 }),
  preDispatch: fc.integer({ min: 1, max: 4 }),
  approve: fc.integer({ min: 1, max: 4 }),
  toolA: fc.integer({ min: 1, max: 6 }),
  toolB: fc.integer({ min: 1, max: 6 }),
  postTurn: fc.integer({ min: 1, max: 4 }),
  postLoop: fc.integer({ min: 1, max: 4 }),
})

const overloaded = ProviderError.of('overloaded', 'scripted', 'overloaded', { status: 529 })
const backupModel = modelSpec('backup', 'backup-1')

/** Counts live subscriptions to everything a run waits on. */
class Pending {
  live = 0
  track<T>(source: Observable<T>): Observable<T> {
    return new Observable<T>((subscriber) => {
      this.live++
      const subscription = source.subscribe(subscriber)
      return () => {
        this.live--
        subscription.unsubscribe()
      }
    })
  }
  /** `value` after `frames`, tracked. */
  after<T>(frames: number, value: T): Observable<T> {
    return this.track(timer(frames).pipe(map(() => value)))
  }
}

/**
 * Two turns: turn 0 fails once (retry backoff), then calls tools a and b
 * (each through a pre-dispatch policy and the approver); turn 1 fails twice
 * and switches to the fallback model, which answers. Every policy slot and
 * the context transform wait; steering and follow-up never answer.
 */
function scenario(waits: Waits, pending: Pending, active: () => boolean = () => true): Omit<AgentLoopConfig, 'model' | 'streamFn'> & {
  readonly model: AgentLoopConfig['model']
  readonly streamFn: AgentLoopConfig['streamFn']
  readonly tools: readonly AgentTool[]
} {
  const tool = (name: string, frames: number): AgentTool =>
    defineTool({ name, description: name, parameters: t.type({}), execute: () => (active() ? pending.after(frames, `${name} done`) : `${name} done`) })
  const primary = scriptedModel(
    (_request, call) => {
      if (!active()) return reply.text('second')
      if (call === 0 || call === 2 || call === 3) return { marbles: '-#', error: overloaded }
      const calls = reply.toolCalls([
        { id: 'ca', name: 'a', args: {} },
        { id: 'cb', name: 'b', args: {} },
      ])
      return () => concat(timer(2).pipe(ignoreElements()), from(calls))
    },
  )
  const backup = scriptedModel([{ marbles: '-s-t-(p|)', values: { s: chunk.start(), t: chunk.text('done'), p: chunk.stop() } }], { model: backupModel })
  const wait = <T>(frames: number, value: T): T | Observable<T> => (active() ? pending.after(frames, value) : value)
  return {
    model: primary.model,
    streamFn: (request) => pending.track(primary.streamFn(request)),
    tools: [tool('a', waits.toolA), tool('b', waits.toolB)],
    retry: { maxAttempts: 2, baseDelayMs: 3, jitter: 0 },
    fallback: [{ model: backupModel, streamFn: (request) => pending.track(backup.streamFn(request)) }],
    transformContext: (messages) => wait(waits.transform, messages),
    policies: {
      preTurn: [{ name: 'preTurn', evaluate: () => wait(waits.preTurn, Verdict.continue) }],
      preDispatch: [{ name: 'preDispatch', evaluate: () => wait(waits.preDispatch, Verdict.continue) }],
      postTurn: [{ name: 'postTurn', evaluate: () => wait(waits.postTurn, Verdict.continue) }],
      postLoop: [{ name: 'postLoop', evaluate: () => wait(waits.postLoop, Verdict.continue) }],
    },
    approveTool: () => wait(waits.approve, Approval.approve),
  }
}

/** The transcript and event invariants every run keeps, aborted or not. */
function expectValidRun(events: readonly AgentEvent[], result: AgentResult): void {
  const calls = result.messages.flatMap((m) => (m.role === 'assistant' ? toolCallsOf(m).map((c) => c.id) : []))
  const results = result.messages.flatMap((m) => (m.role === 'toolResult' ? [m.toolCallId] : []))
  expect([...results].sort()).toEqual([...calls].sort())
  expect(transcriptFromEvents(events)).toEqual(result.messages)
  const count = (type: AgentEvent['type']): number => events.filter((e) => e.type === type).length
  expect(count('turnEnd')).toBe(count('turnStart'))
  expect(count('toolApprovalEnd')).toBe(count('toolApprovalRequest'))
  const ids = (type: 'toolExecutionStart' | 'toolExecutionEnd'): string[] =>
    events.flatMap((e) => (e.type === type ? [e.toolCallId] : [])).sort()
  expect(ids('toolExecutionEnd')).toEqual(ids('toolExecutionStart'))
  expect(ids('toolExecutionStart')).toEqual([...calls].sort())
  expect(events.filter((e) => e.type === 'agentEnd')).toHaveLength(1)
  expect(events.at(-1)?.type).toBe('agentEnd')
}

interface Observed {
  readonly events: AgentEvent[]
  endFrame: number
  completed: boolean
  /** Live subscriptions to what the run waited on, right after the abort (or the end). */
  liveAfterEnd: number
}

/** Runs the scenario in virtual time, aborting at `abortAt` (or never). */
function runLoop(waits: Waits, abortAt: number | undefined): Observed {
  const pending = new Pending()
  const observed: Observed = { events: [], endFrame: -1, completed: false, liveAfterEnd: -1 }
  const controller = new AbortController()
  runAgentMarbles(({ scheduler }) => {
    const { tools, ...config } = scenario(waits, pending)
    const run$ = agentLoop(hello, context(tools), { ...config, signal: controller.signal, steering: NEVER, followUp: pending.track(NEVER as Observable<AgentMessage>) })
    if (abortAt !== undefined) scheduler.schedule(() => controller.abort(), abortAt)
    run$.subscribe({
      next: (e) => {
        observed.events.push(e)
        if (e.type === 'agentEnd') observed.endFrame = scheduler.now()
      },
      complete: () => {
        observed.completed = true
        // After the teardown that follows completion, at the same frame.
        scheduler.schedule(() => (observed.liveAfterEnd = pending.live))
      },
    })
  })
  return observed
}

const natural = (waits: Waits): number => runLoop(waits, undefined).endFrame

describe('abort at a random virtual time (property)', () => {
  it('agentLoop: the run ends at the abort frame, aborted, with a valid transcript and nothing left pending', () => {
    fc.assert(
      fc.property(arbWaits, fc.integer({ min: 0, max: 120 }), (waits, abortAt) => {
        const end = natural(waits)
        const run = runLoop(waits, abortAt)
        expect(run.completed).toBe(true)
        const result = (run.events.at(-1) as Extract<AgentEvent, { type: 'agentEnd' }>).result
        expectValidRun(run.events, result)
        expect(run.liveAfterEnd).toBe(0)
        // An abort at the frame the run would end is scheduled first, so it wins.
        if (abortAt <= end) {
          expect(result.stopReason).toBe('aborted')
          expect(run.endFrame).toBe(abortAt)
        } else {
          expect(result.stopReason).toBe('stop')
          expect(run.endFrame).toBe(end)
        }
      }),
      { numRuns: 150 },
    )
  })

  it('the scenario reaches every waiting point when not aborted, and ends within the frames the abort is drawn from', () => {
    expect(natural({ preTurn: 4, transform: 4, preDispatch: 4, approve: 4, toolA: 6, toolB: 6, postTurn: 4, postLoop: 4 })).toBeLessThan(120)
    const run = runLoop({ preTurn: 1, transform: 1, preDispatch: 1, approve: 1, toolA: 2, toolB: 3, postTurn: 1, postLoop: 1 }, undefined)
    const types = new Set(run.events.map((e) => e.type))
    for (const type of ['streamRetry', 'modelFallback', 'toolApprovalRequest', 'toolExecutionEnd'] as const) expect(types.has(type)).toBe(true)
    expect(run.events.filter((e) => e.type === 'turnStart')).toHaveLength(2)
  })

  it('Agent: abort() resolves, the agent is idle with a valid transcript, and the next prompt works', async () => {
    await fc.assert(
      fc.asyncProperty(arbWaits, fc.integer({ min: 0, max: 120 }), async (waits, abortAt) => {
        const pending = new Pending()
        let first = true
        const { tools, model, streamFn, ...rest } = scenario(waits, pending, () => first)
        let agent!: Agent
        let aborted: Promise<void> | undefined
        let run!: PromiseLike<AgentResult>
        runAgentMarbles(({ scheduler }) => {
          agent = new Agent({
            systemPrompt: '',
            model,
            streamFn,
            tools,
            scheduler,
            approvalMode: 'enabled',
            approveTool: rest.approveTool!,
            transformContext: rest.transformContext!,
            policies: rest.policies!,
            retry: rest.retry!,
            fallback: rest.fallback!,
          })
          run = agent.prompt('go')
          scheduler.schedule(() => (aborted = agent.abort()), abortAt)
        })
        expect(agent.isRunning).toBe(false)
        expect(agent.state.isRunning).toBe(false)
        expect(pending.live).toBe(0)
        await aborted
        const result = await run
        expect(result.stopReason).toBe(abortAt <= natural(waits) ? 'aborted' : 'stop')
        const calls = agent.state.messages.flatMap((m) => (m.role === 'assistant' ? toolCallsOf(m).map((c) => c.id) : []))
        const answered = agent.state.messages.flatMap((m) => (m.role === 'toolResult' ? [m.toolCallId] : []))
        expect([...answered].sort()).toEqual([...calls].sort())
        first = false
        const next = await agent.prompt('again')
        expect(next.stopReason).toBe('stop')
        expect(agent.isRunning).toBe(false)
      }),
      { numRuns: 60 },
    )
  })
})
