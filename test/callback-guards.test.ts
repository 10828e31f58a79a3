/**
 * Every user callback × every failure shape its type admits (a synchronous
 * throw, a rejected Promise, an Observable that errors) ends up where the
 * README says — a run error naming the callback, an error tool result, a
 * `listenerError` event, a policy stop — and never as an uncaught exception
 * or a run that never ends.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import * as t from 'io-ts'
import { config, Observable, throwError } from 'rxjs'
import { Agent, type AgentOptions, type AgentRunEvent } from '../src/agent/index.js'
import { agentLoop, type AgentLoopConfig } from '../src/loop/agent-loop.js'
import { Approval } from '../src/policy/approval.js'
import type { PolicyVerdict, PreDispatchVerdict } from '../src/policy/policy.js'
import { defineTool } from '../src/tools/define-tool.js'
import type { AgentEvent } from '../src/types/event.js'
import { toolCallsOf } from '../src/types/message.js'
import { ProviderError } from '../src/types/provider-error.js'
import type { AgentResult } from '../src/types/result.js'
import type { AgentTool } from '../src/types/tool.js'
import { reply, scriptedModel, type ScriptedResponse } from '../marbles/index.js'
import { addTool, context, hello, textOf, toolResultsOf } from './helpers.js'

type Shape = 'sync throw' | 'rejected Promise' | 'erroring Observable'
const allShapes: readonly Shape[] = ['sync throw', 'rejected Promise', 'erroring Observable']
const syncOnly: readonly Shape[] = ['sync throw']
const syncOrPromise: readonly Shape[] = ['sync throw', 'rejected Promise']

/** A callback that fails in `shape` (whatever it is called with). */
function failing(shape: Shape): () => never {
  return () => {
    if (shape === 'sync throw') throw new Error('boom')
    return (shape === 'rejected Promise' ? Promise.reject(new Error('boom')) : throwError(() => new Error('boom'))) as never
  }
}

// --- where a failure may end up -------------------------------------------

/** Every tool call of the run has exactly one result. */
function expectValidTranscript(result: AgentResult): void {
  const calls = result.messages.flatMap((m) => (m.role === 'assistant' ? toolCallsOf(m).map((c) => c.id) : []))
  const answered = result.messages.flatMap((m) => (m.role === 'toolResult' ? [m.toolCallId] : []))
  expect([...answered].sort()).toEqual([...calls].sort())
}

function endOf(events: readonly (AgentEvent | AgentRunEvent)[]): AgentResult {
  const ends = events.filter((e) => e.type === 'agentEnd')
  expect(ends, 'exactly one agentEnd').toHaveLength(1)
  // The agent's own reports (a listener failing on agentEnd itself) may follow it.
  expect(events.filter((e) => e.type !== 'listenerError').at(-1)?.type).toBe('agentEnd')
  return (ends[0] as Extract<AgentEvent, { type: 'agentEnd' }>).result
}

type Where =
  | { readonly runError: RegExp }
  | { readonly policyStop: string; readonly error: RegExp }
  | { readonly toolResult: RegExp }
  | { readonly listenerError: string }

function expectOutcome(events: readonly (AgentEvent | AgentRunEvent)[], where: Where): void {
  const result = endOf(events)
  expectValidTranscript(result)
  if ('runError' in where) {
    expect(result.stopReason).toBe('error')
    expect(result.error).toMatch(where.runError)
  } else if ('policyStop' in where) {
    expect(result).toMatchObject({ stopReason: 'policyStop', stoppedBy: where.policyStop })
    expect(result.error).toMatch(where.error)
  } else if ('toolResult' in where) {
    expect(result.stopReason).toBe('stop')
    const results = toolResultsOf(events as AgentEvent[])
    expect(results).toHaveLength(1)
    expect(results[0]!.isError).toBe(true)
    expect(textOf(results[0]!)).toMatch(where.toolResult)
  } else {
    expect(result.stopReason).toBe('stop')
    const reported = events.filter((e) => e.type === 'listenerError')
    expect(reported.length).toBeGreaterThan(0)
    expect(reported[0]).toMatchObject({ listener: where.listenerError, error: 'boom' })
  }
}

// --- how a case runs ------------------------------------------------------

/** Runs `agentLoop` to its end, whenever that is. */
function runLoop(script: readonly ScriptedResponse[], tools: readonly AgentTool[], extra: Partial<AgentLoopConfig>): Promise<AgentEvent[]> {
  const model = scriptedModel(script)
  const events: AgentEvent[] = []
  return new Promise((resolve, reject) => {
    agentLoop(hello, context(tools), { model: model.model, streamFn: model.streamFn, ...extra }).subscribe({
      next: (e) => events.push(e),
      error: reject,
      complete: () => resolve(events),
    })
  })
}

/** Runs one `Agent.prompt` to its end; returns every event the agent emitted. */
async function runAgent(script: readonly ScriptedResponse[], options: Partial<AgentOptions>, setup?: (agent: Agent) => void): Promise<AgentRunEvent[]> {
  const model = scriptedModel(script)
  const agent = new Agent({ systemPrompt: 'test', model: model.model, streamFn: model.streamFn, tools: [addTool], ...options })
  const events: AgentRunEvent[] = []
  agent.events$.subscribe((e) => events.push(e))
  setup?.(agent)
  await agent.prompt('hello')
  // A rejected Promise reports itself a few microtasks after the run.
  await new Promise((resolve) => setTimeout(resolve, 0))
  return events
}

const add = { id: 'c1', name: 'add', args: { a: 1, b: 2 } }
const toolThenText = [reply.toolCalls([add]), reply.text('done')]
const overflow = (): ProviderError => ProviderError.of('contextOverflow', 'scripted', 'prompt is too long')
const overloaded = (): ProviderError => ProviderError.of('overloaded', 'scripted', 'overloaded')
/** An error a few milliseconds into the call: the handler then runs on a timer, not inside `subscribe`. */
const later = (error: () => Error) => () => new Observable<never>((s) => {
  const id = setTimeout(() => s.error(error()), 1)
  return () => clearTimeout(id)
})

interface Row {
  readonly callback: string
  readonly shapes: readonly Shape[]
  readonly where: Where
  readonly run: (shape: Shape) => Promise<readonly (AgentEvent | AgentRunEvent)[]>
}

const rows: readonly Row[] = [
  // A run error naming the callback.
  {
    callback: 'streamFn',
    shapes: ['sync throw'],
    where: { runError: /^streamFn threw: boom$/ },
    run: (shape) => runLoop([], [], { streamFn: failing(shape) }),
  },
  {
    callback: 'streamFn',
    shapes: ['erroring Observable'],
    where: { runError: /^boom$/ }, // the provider's own error, as the README says
    run: (shape) => runLoop([], [], { streamFn: failing(shape) }),
  },
  {
    callback: 'getApiKey',
    shapes: syncOrPromise,
    where: { runError: /^getApiKey (threw|failed): boom$/ },
    run: (shape) => runAgent([reply.text('never')], { getApiKey: failing(shape) }),
  },
  {
    callback: 'convertToLlm',
    shapes: syncOnly,
    where: { runError: /^convertToLlm failed: boom$/ },
    run: (shape) => runLoop([reply.text('never')], [], { convertToLlm: failing(shape) }),
  },
  {
    callback: 'transformContext',
    shapes: allShapes,
    where: { runError: /^transformContext failed: boom$/ },
    run: (shape) => runLoop([reply.text('never')], [], { transformContext: failing(shape) }),
  },
  {
    callback: 'recoverOverflow (overflow error at subscribe)',
    shapes: syncOnly,
    where: { runError: /^recoverOverflow threw: boom$/ },
    run: (shape) => runLoop([overflow()], [], { recoverOverflow: failing(shape) }),
  },
  {
    callback: 'recoverOverflow (overflow error later)',
    shapes: syncOnly,
    where: { runError: /^recoverOverflow threw: boom$/ },
    run: (shape) => runLoop([later(overflow)], [], { recoverOverflow: failing(shape) }),
  },
  {
    callback: 'retry.shouldRetry (provider error at subscribe)',
    shapes: syncOnly,
    where: { runError: /^retry\.shouldRetry threw: boom/ },
    run: (shape) => runLoop([overloaded()], [], { retry: { shouldRetry: failing(shape) } }),
  },
  {
    callback: 'retry.shouldRetry (provider error later)',
    shapes: syncOnly,
    where: { runError: /^retry\.shouldRetry threw: boom/ },
    run: (shape) => runLoop([later(overloaded)], [], { retry: { shouldRetry: failing(shape) } }),
  },
  {
    callback: 'steering source',
    shapes: syncOnly,
    where: { runError: /^steering source threw: boom$/ },
    run: (shape) => runLoop(toolThenText, [addTool], { steering: failing(shape) }),
  },
  {
    callback: 'steering source (interrupt delivery)',
    shapes: syncOnly,
    where: { runError: /^steering source threw: boom$/ },
    run: (shape) => runLoop(toolThenText, [addTool], { steering: failing(shape), steeringDelivery: 'interrupt' }),
  },
  {
    callback: 'steering source',
    shapes: ['erroring Observable'],
    where: { runError: /^steering source failed: boom$/ },
    run: () => runLoop(toolThenText, [addTool], { steering: throwError(() => new Error('boom')) }),
  },
  {
    callback: 'follow-up source',
    shapes: syncOnly,
    where: { runError: /^follow-up source threw: boom$/ },
    run: (shape) => runLoop([reply.text('hi')], [], { followUp: failing(shape) }),
  },
  {
    callback: 'follow-up source',
    shapes: ['erroring Observable'],
    where: { runError: /^follow-up source failed: boom$/ },
    run: () => runLoop([reply.text('hi')], [], { followUp: throwError(() => new Error('boom')) }),
  },
  // Policies stop the run (a guard must not fail open), naming the policy.
  ...(['preTurn', 'preDispatch', 'postTurn', 'postLoop'] as const).map(
    (slot): Row => ({
      callback: `${slot} policy`,
      shapes: allShapes,
      where: { policyStop: 'broken', error: /^policy 'broken' failed: boom$/ },
      run: (shape) =>
        runLoop(slot === 'postLoop' ? [reply.text('hi')] : toolThenText, [addTool], {
          policies: { [slot]: [{ name: 'broken', evaluate: failing(shape) as () => PolicyVerdict & PreDispatchVerdict }] },
        }),
    }),
  ),
  // An error result for the call; the loop goes on.
  {
    callback: 'approveTool',
    shapes: allShapes,
    where: { toolResult: /^Tool call rejected by the approver: the approver failed: boom$/ },
    run: (shape) => runLoop(toolThenText, [addTool], { approveTool: failing(shape) }),
  },
  {
    callback: 'approvalRequired',
    shapes: syncOnly,
    where: { toolResult: /approvalRequired threw: boom/ },
    run: (shape) => runLoop(toolThenText, [addTool], { approveTool: () => Approval.approve, approvalRequired: failing(shape) }),
  },
  {
    callback: 'approvalRequired (with a pre-dispatch policy)',
    shapes: syncOnly,
    where: { toolResult: /approvalRequired threw: boom/ },
    run: (shape) =>
      runLoop(toolThenText, [addTool], {
        approveTool: () => Approval.approve,
        approvalRequired: failing(shape),
        policies: { preDispatch: [{ name: 'ok', evaluate: () => ({ action: 'continue' }) }] },
      }),
  },
  {
    callback: 'tool execute',
    shapes: allShapes,
    where: { toolResult: /^Tool 'add' failed: boom$/ },
    run: (shape) => runLoop(toolThenText, [defineTool({ name: 'add', description: '', parameters: t.type({}), execute: failing(shape) })], {}),
  },
  {
    callback: 'tool decodeArguments',
    shapes: syncOrPromise,
    where: { toolResult: /decodeArguments (threw|failed): boom/ },
    run: (shape) => runLoop(toolThenText, [{ ...addTool, decodeArguments: failing(shape) }], {}),
  },
  // A listenerError event; the run goes on.
  {
    callback: 'Agent listener',
    shapes: syncOrPromise,
    where: { listenerError: 'fragile' },
    run: (shape) => runAgent([reply.text('hi')], {}, (agent) => agent.subscribe(failing(shape), 'fragile')),
  },
  {
    callback: 'forwarder',
    shapes: syncOrPromise,
    where: { listenerError: 'forwarder 1' },
    run: (shape) => runAgent([reply.text('hi')], { forwarders: [failing(shape)] }),
  },
  {
    callback: 'metrics collector',
    shapes: syncOrPromise,
    where: { listenerError: 'metrics collector' },
    run: (shape) => runAgent([reply.text('hi')], { metrics: { onTurn: failing(shape) } }),
  },
  {
    callback: 'onListenerError',
    shapes: syncOrPromise,
    where: { listenerError: 'fragile' },
    run: (shape) =>
      runAgent([reply.text('hi')], { onListenerError: failing(shape) }, (agent) =>
        agent.subscribe(() => {
          throw new Error('boom')
        }, 'fragile'),
      ),
  },
  {
    callback: 'Agent.feed source',
    shapes: ['erroring Observable'],
    where: { listenerError: 'steering feed' },
    run: () => runAgent([reply.text('hi')], {}, (agent) => agent.feed('steering', throwError(() => new Error('boom')))),
  },
]

const endsIn = (where: Where): string =>
  'runError' in where ? 'run error' : 'policyStop' in where ? 'policy stop' : 'toolResult' in where ? 'error tool result' : 'listenerError'
const cases = rows.flatMap((row) => row.shapes.map((shape) => ({ ...row, shape, name: `${row.callback} × ${shape}`, ends: endsIn(row.where) })))

// Anything that escapes: an uncaught exception, an unhandled rejection, an error RxJS could not deliver.
const escaped: unknown[] = []
const record = (error: unknown): void => void escaped.push(error)
let previousOnUnhandled: typeof config.onUnhandledError
beforeAll(() => {
  previousOnUnhandled = config.onUnhandledError
  config.onUnhandledError = record
  process.on('uncaughtException', record)
  process.on('unhandledRejection', record)
})
afterAll(() => {
  config.onUnhandledError = previousOnUnhandled
  process.off('uncaughtException', record)
  process.off('unhandledRejection', record)
})
afterEach(async () => {
  // An error reported on a later task (RxJS's reportUnhandledError, a timer) shows up by then.
  await new Promise((resolve) => setTimeout(resolve, 5))
  const found = escaped.splice(0)
  expect(found.map(String), 'nothing escapes').toEqual([])
})

describe('a callback that fails never crashes the process or hangs the run', () => {
  it.each(cases)('$name → $ends', async ({ run, shape, where }) => {
    expectOutcome(await run(shape), where)
  }, 10_000)

  it('covers every callback the README lists', () => {
    const covered = new Set(rows.map((r) => r.callback.replace(/ \(.*\)$/, '')))
    for (const name of ['streamFn', 'getApiKey', 'convertToLlm', 'transformContext', 'recoverOverflow', 'retry.shouldRetry', 'steering source', 'follow-up source', 'preTurn policy', 'preDispatch policy', 'postTurn policy', 'postLoop policy', 'approveTool', 'approvalRequired', 'tool execute', 'Agent listener', 'forwarder', 'metrics collector']) {
      expect(covered).toContain(name)
    }
  })
})

describe('an Agent whose callback fails settles', () => {
  it.each([
    ['recoverOverflow', { recoverOverflow: failing('sync throw') }, [overflow(), reply.text('again')]],
    ['retry.shouldRetry', { retry: { shouldRetry: failing('sync throw') } }, [overloaded(), reply.text('again')]],
  ] as const)('%s: the run resolves with stopReason error, the agent is idle, and the next prompt runs', async (name, options, script) => {
    const model = scriptedModel(script)
    const agent = new Agent({ systemPrompt: 'test', model: model.model, streamFn: model.streamFn, ...options })
    const first = await agent.prompt('hello')
    expect(first.stopReason).toBe('error')
    expect(first.error).toMatch(new RegExp(`^${name.replace('.', '\\.')} threw: boom`))
    expect(agent.isRunning).toBe(false)
    expect(agent.state.error).toMatch(/threw: boom/)
    const second = await agent.prompt('once more')
    expect(second.stopReason).toBe('stop')
  }, 10_000)
})

describe('guards fail closed', () => {
  it('an approvalRequired that answers neither true nor false (plain JS) still has the approver asked', async () => {
    const asked: string[] = []
    const events = await runLoop(toolThenText, [addTool], {
      approveTool: ({ toolCall }) => (asked.push(toolCall.id), Approval.reject('no')),
      approvalRequired: (() => undefined) as unknown as () => boolean,
      policies: { preDispatch: [{ name: 'ok', evaluate: () => ({ action: 'continue' }) }] },
    })
    expect(asked).toEqual(['c1'])
    expect(textOf(toolResultsOf(events)[0]!)).toBe('Tool call rejected by the approver: no')
  })
})
