/**
 * Property: an Agent's state is the fold of its log. For random sessions in
 * virtual time — prompts, steering, follow-ups, aborts, approvals (by
 * `resolveApproval` or a callback, whichever answers first), model changes,
 * plan mode, queue clears, system prompt changes, resets — after every entry
 * the live state (but the transient streamed message) equals the fold of the
 * log so far, and `Agent.fromLog` on the log as JSON rebuilds exactly the
 * live agent's final state.
 */
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import * as t from 'io-ts'
import { concat, from, ignoreElements, map, timer, type Observable } from 'rxjs'
import { reply, runAgentMarbles, scriptedModel } from '../marbles/index.js'
import { Agent, AgentBusyError, type AgentState } from '../src/agent/index.js'
import { foldAgentLog } from '../src/agent/agent-reducer.js'
import { Approval } from '../src/policy/approval.js'
import { defineTool } from '../src/tools/define-tool.js'
import type { ProviderChunk } from '../src/types/chunk.js'
import { modelSpec } from '../src/types/model.js'
import type { AgentTool } from '../src/types/tool.js'

type Op =
  | { readonly kind: 'prompt' | 'steer' | 'followUp' | 'system'; readonly text: string }
  | { readonly kind: 'abort' | 'clear' | 'reset' | 'continue' }
  | { readonly kind: 'model'; readonly which: number }
  | { readonly kind: 'approve'; readonly approved: boolean }
  | { readonly kind: 'plan'; readonly on: boolean }

const arbText = fc.string({ minLength: 1, maxLength: 6 })
const arbOp: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constantFrom('prompt' as const, 'steer' as const, 'followUp' as const, 'system' as const), text: arbText }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('approve' as const), approved: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom('abort' as const, 'clear' as const, 'continue' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reset' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('model' as const), which: fc.integer({ min: 0, max: 2 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('plan' as const), on: fc.boolean() }) },
)
const arbSession = fc.record({
  ops: fc.array(fc.record({ after: fc.integer({ min: 0, max: 4 }), op: arbOp }), { maxLength: 24 }),
  /** Frames the approveTool callback takes, or no callback (`resolveApproval` alone). */
  callbackAfter: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
  steeringMode: fc.constantFrom('all' as const, 'oneAtATime' as const),
})

const slow = defineTool({ name: 'slow', description: 'Takes 3 frames.', parameters: t.type({ n: t.number }), execute: ({ n }) => timer(3).pipe(map(() => `slow ${n}`)) })
const rm = defineTool({ name: 'rm', description: 'Deletes.', parameters: t.type({ path: t.string }), needsApproval: true, execute: ({ path }) => `deleted ${path}` })
const tools: readonly AgentTool[] = [slow, rm]
const models = [modelSpec('scripted', 'scripted-1'), modelSpec('other', 'other-1'), modelSpec('third', 'third-1')]
const viaJson = (value: unknown): unknown[] => JSON.parse(JSON.stringify(value)) as unknown[]
const settled = (state: AgentState): AgentState => ({ ...state, streamMessage: undefined })

/** Answers by call number: a call of `rm`, of `slow`, or text; each after 2 frames. */
function answer(call: number): Observable<ProviderChunk> {
  const chunks =
    call % 3 === 0
      ? reply.toolCalls([{ id: `r${call}`, name: 'rm', args: { path: `/p${call}` } }])
      : call % 3 === 1
        ? reply.toolCalls([{ id: `s${call}`, name: 'slow', args: { n: call } }], { text: 'working' })
        : reply.text(`answer ${call}`, { deltas: 3 })
  return concat(timer(2).pipe(ignoreElements()), from(chunks))
}

function apply(agent: Agent, op: Op): void {
  try {
    switch (op.kind) {
      case 'prompt':
        return void agent.prompt(op.text)
      case 'continue':
        return void agent.continue()
      case 'steer':
        return agent.steer(op.text)
      case 'followUp':
        return agent.followUp(op.text)
      case 'system':
        return agent.setSystemPrompt(op.text)
      case 'abort':
        return void agent.abort()
      case 'clear':
        agent.clearSteering()
        return agent.clearFollowUps()
      case 'reset':
        return agent.reset()
      case 'model':
        return agent.setModel(models[op.which]!)
      case 'plan':
        return op.on ? agent.enterPlanMode() : agent.exitPlanMode()
      case 'approve':
        for (const p of agent.state.pendingApprovals) agent.resolveApproval(p.toolCallId, op.approved ? Approval.approve : Approval.reject('no'))
        return
    }
  } catch (error) {
    // A prompt while running, a continue with nothing to continue: refused, nothing logged.
    if (!(error instanceof AgentBusyError) && !/nothing to continue|last message/.test(String(error))) throw error
  }
}

describe('the Agent is the fold of its log', () => {
  it('after every entry, and rebuilt by Agent.fromLog from JSON', () => {
    fc.assert(
      fc.property(arbSession, ({ ops, callbackAfter, steeringMode }) => {
        const model = scriptedModel((_request, call) => () => answer(call))
        const options = {
          streamFn: model.streamFn,
          tools,
          steeringMode,
          transformContext: false as const,
          approveTool: callbackAfter === undefined ? ('resolveApproval' as const) : () => timer(callbackAfter).pipe(map(() => Approval.approve)),
        }
        const live: AgentState[] = []
        const agent = runAgentMarbles(({ scheduler }) => {
          const agent = new Agent({ ...options, id: 'p', systemPrompt: 'sys', model: models[0]!, scheduler })
          agent.log$.subscribe(() => live.push(settled(agent.state)))
          let at = 0
          for (const { after, op } of ops) {
            at += after
            scheduler.schedule(() => apply(agent, op), at)
          }
          // Whatever still waits (an approval no one gives) ends with an abort.
          scheduler.schedule(() => void agent.abort(), at + 5)
          return agent
        })
        expect(agent.isRunning).toBe(false)
        const log = agent.log
        live.forEach((state, i) => expect(settled(foldAgentLog(log.slice(0, i + 2), (names) => names.map((n) => tools.find((x) => x.name === n)!)))).toEqual(state))
        const rebuilt = Agent.fromLog(viaJson(log), { ...options, availableModels: [] })
        expect(rebuilt.state).toEqual(agent.state)
        expect(rebuilt.log).toEqual(viaJson(log))
      }),
      { numRuns: 150 },
    )
  })
})
