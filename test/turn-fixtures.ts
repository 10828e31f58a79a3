/**
 * Builders for testing single turn stages: states at each point of a turn,
 * answers with tool calls, events to push through a stage, tools that log
 * their start and abort with the virtual frame, an AbortSignal that counts
 * its listeners, and a scheduler check that nothing was left scheduled.
 */
import * as t from 'io-ts'
import type { SchedulerLike } from 'rxjs'
import type { TestScheduler } from 'rxjs/testing'
import { eventLabel } from '../marbles/index.js'
import { defineTool } from '../src/tools/define-tool.js'
import {
  initialState,
  isTurnState,
  nextState,
  withAssistant,
  type AgentContext,
  type TurnItem,
  type TurnState,
} from '../src/turn/turn-state.js'
import type { AgentEvent } from '../src/types/event.js'
import { assistantMessage, type AgentMessage, type AssistantMessage } from '../src/types/message.js'
import { modelSpec } from '../src/types/model.js'
import type { AgentTool, ToolReturn } from '../src/types/tool.js'
import { emptyCost, emptyUsage } from '../src/types/usage.js'
import { hello } from './helpers.js'

export const testModel = modelSpec('scripted', 'scripted-1')

export function ctx(tools: readonly AgentTool[] = [], messages: readonly AgentMessage[] = []): AgentContext {
  return { systemPrompt: 'You are a test.', messages, tools }
}

/** Before `startTurn`: `hello` pending, not started. */
export function freshState(tools: readonly AgentTool[] = []): TurnState {
  return initialState(ctx(tools), testModel, [hello], emptyUsage, emptyCost)
}

/** After `startTurn`: `hello` in the transcript, started. */
export function startedState(tools: readonly AgentTool[] = []): TurnState {
  return nextState(initialState(ctx(tools, [hello]), testModel, [], emptyUsage, emptyCost), { runStart: 0, started: true })
}

/** After `streamLlm`: `answer` recorded (plus `changes`). */
export function answeredState(answer: AssistantMessage, tools: readonly AgentTool[] = [], changes: Partial<Omit<TurnState, 'type'>> = {}): TurnState {
  return nextState(withAssistant(startedState(tools), answer), changes)
}

export const textAnswer: AssistantMessage = assistantMessage('hi', { stopReason: 'stop' })

/** An answer calling each tool by name, with call id `c<n>` (or the id given as `id:name`) and no arguments. */
export function toolCallAnswer(...calls: readonly string[]): AssistantMessage {
  return assistantMessage(
    calls.map((spec, i) => {
      const [id, name] = spec.includes(':') ? (spec.split(':') as [string, string]) : [`c${i + 1}`, spec]
      return { type: 'toolCall' as const, id, name, arguments: {} }
    }),
    { stopReason: 'toolUse' },
  )
}

/** A small event to push through a stage: label `toolUpdate:<id>`. */
export const ev = (id: string): AgentEvent => ({ type: 'toolExecutionUpdate', toolCallId: id, toolName: 'x', partialResult: { content: [] } })

/** `eventLabel` for events, `S` for the state. */
export const itemLabel = (item: TurnItem): string => (isTurnState(item) ? 'S' : eventLabel(item))

/** A subscription marble that subscribes at 0 and unsubscribes at `frame`. */
export const unsubAt = (frame: number): string => `^${'-'.repeat(frame - 1)}!`

const reasonText = (reason: unknown): string => (reason instanceof Error ? reason.message : String(reason))

/**
 * A tool with no parameters that logs `start:<name>@<frame>` and, when its
 * signal aborts, `abort:<name>@<frame>: <reason>`; `run` gives what it returns.
 */
export function loggedTool(
  name: string,
  run: (signal: AbortSignal) => ToolReturn,
  log: string[],
  scheduler: SchedulerLike,
  timeoutMs?: number,
): AgentTool {
  return defineTool({
    name,
    description: `test tool ${name}`,
    parameters: t.type({}),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    execute: (_args, { signal }) => {
      log.push(`start:${name}@${scheduler.now()}`)
      signal.addEventListener('abort', () => log.push(`abort:${name}@${scheduler.now()}: ${reasonText(signal.reason)}`))
      return run(signal)
    },
  })
}

/** An AbortController whose signal counts its live `abort` listeners. */
export function trackedAbort(): { readonly controller: AbortController; readonly signal: AbortSignal; readonly listeners: () => number } {
  const controller = new AbortController()
  const signal = controller.signal
  const live = new Set<unknown>()
  type Add = (...args: Parameters<AbortSignal['addEventListener']>) => void
  const add: Add = signal.addEventListener.bind(signal)
  const remove: Add = signal.removeEventListener.bind(signal)
  Object.defineProperty(signal, 'addEventListener', {
    value: ((type, listener, options) => {
      if (type === 'abort') live.add(listener)
      add(type, listener, options)
    }) satisfies Add,
  })
  Object.defineProperty(signal, 'removeEventListener', {
    value: ((type, listener, options) => {
      if (type === 'abort') live.delete(listener)
      remove(type, listener, options)
    }) satisfies Add,
  })
  return { controller, signal, listeners: () => live.size }
}

/**
 * At `frame`, throws (failing the marble run) if anything is still scheduled:
 * a timer, a scripted timeline, a cold Observable's notifications still
 * subscribed. Then runs `then`, if given.
 */
export function expectNothingScheduledAt(scheduler: TestScheduler, frame: number, then?: () => void): void {
  scheduler.schedule(() => {
    const left = scheduler.actions.map((a) => a.delay)
    if (left.length > 0) throw new Error(`at frame ${frame}, ${left.length} action(s) still scheduled, due at frames ${left.join(', ')}`)
    then?.()
  }, frame)
}

/**
 * A scheduler that delegates to `inner` and records the frame of every action
 * it runs (`ran`), and of those run after `close()` was called
 * (`ranAfterClose`): work that a torn-down subscription left behind.
 */
export function spyScheduler(inner: SchedulerLike): {
  readonly scheduler: SchedulerLike
  readonly ran: readonly number[]
  readonly ranAfterClose: readonly number[]
  close(): void
} {
  const ran: number[] = []
  const ranAfterClose: number[] = []
  let closed = false
  const scheduler: SchedulerLike = {
    now: () => inner.now(),
    schedule<S>(work: (this: unknown, state?: S) => void, delay?: number, state?: S) {
      return inner.schedule(
        function (this: unknown, s?: S) {
          ;(closed ? ranAfterClose : ran).push(inner.now())
          work.call(this, s)
        },
        delay,
        state,
      )
    },
  } as SchedulerLike
  return { scheduler, ran, ranAfterClose, close: () => (closed = true) }
}
