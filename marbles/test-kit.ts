/**
 * Marble-testing agents: run a loop under the RxJS TestScheduler and assert
 * its events as a diagram whose values are readable labels.
 */
import { map, type Observable } from 'rxjs'
import { TestScheduler, type RunHelpers } from 'rxjs/testing'
import type { AgentEvent } from '../src/types/event.js'
import type { AgentOwnEvent } from '../src/agent/agent-events.js'
import { eventLabel } from './labels.js'

/** What `TestScheduler` records: a notification at a frame. */
interface Recorded {
  readonly frame: number
  readonly notification: { readonly kind: 'N' | 'E' | 'C'; readonly value?: unknown; readonly error?: unknown }
}

/** JSON-like normal form: lazily computed getters (`toJSON`) resolved, undefined fields dropped. */
function normal(u: unknown): unknown {
  if (u === null || typeof u !== 'object') return u
  const json = (u as { toJSON?: () => unknown }).toJSON
  if (typeof json === 'function' && !(u instanceof Date)) return normal(json.call(u))
  if (Array.isArray(u)) return u.map(normal)
  if (u instanceof Error) return { error: u.name, message: u.message }
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(u).sort()) {
    const v = (u as Record<string, unknown>)[key]
    if (v !== undefined) out[key] = normal(v)
  }
  return out
}

function show(u: unknown): string {
  return typeof u === 'string' ? u : JSON.stringify(normal(u))
}

function listing(messages: readonly Recorded[]): string {
  if (messages.length === 0) return '    (nothing)'
  return messages
    .map(({ frame, notification: n }) => {
      const what = n.kind === 'N' ? show(n.value) : n.kind === 'E' ? `ERROR ${show(n.error)}` : 'COMPLETE'
      return `    frame ${String(frame).padStart(4)}: ${what}`
    })
    .join('\n')
}

const LETTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'

/**
 * The diagram and value map that would produce `messages`, for pasting into
 * a test; `undefined` when a diagram cannot express them (more distinct
 * values than letters, or a synchronous group overlapping the next frame).
 */
export function diagramOf(messages: readonly Recorded[]): { marbles: string; values: Record<string, unknown> } | undefined {
  const letterOf = new Map<string, string>()
  const values: Record<string, unknown> = {}
  let marbles = ''
  let cursor = 0
  let i = 0
  while (i < messages.length) {
    const frame = messages[i]!.frame
    const group: string[] = []
    while (i < messages.length && messages[i]!.frame === frame) {
      const n = messages[i++]!.notification
      if (n.kind === 'C') group.push('|')
      else if (n.kind === 'E') group.push('#')
      else {
        const key = JSON.stringify(normal(n.value))
        let letter = letterOf.get(key)
        if (letter === undefined) {
          letter = LETTERS[letterOf.size]
          if (letter === undefined) return undefined
          letterOf.set(key, letter)
          values[letter] = n.value
        }
        group.push(letter)
      }
    }
    if (frame < cursor) return undefined
    const gap = frame - cursor
    marbles += gap > 8 ? ` ${gap}ms ` : '-'.repeat(gap)
    marbles += group.length === 1 ? group[0] : `(${group.join('')})`
    cursor = frame + (group.length === 1 ? 1 : group.length + 2)
  }
  return { marbles: marbles.trim(), values }
}

/** Compares recorded notifications; on a mismatch, says where, and shows the actual diagram. */
export function assertRecordedEqual(actual: unknown, expected: unknown): void {
  const a = JSON.stringify(normal(actual))
  const e = JSON.stringify(normal(expected))
  if (a === e) return
  const isRecording = (u: unknown): u is Recorded[] => Array.isArray(u) && u.every((m) => typeof m === 'object' && m !== null && 'frame' in m)
  if (!isRecording(actual) || !isRecording(expected)) {
    throw new Error(`Values differ.\n  expected: ${e}\n  actual:   ${a}`)
  }
  const firstDiff = actual.findIndex((m, i) => JSON.stringify(normal(m)) !== JSON.stringify(normal(expected[i])))
  const at = firstDiff === -1 ? Math.min(actual.length, expected.length) : firstDiff
  const diagram = diagramOf(actual)
  throw new Error(
    [
      `Event timelines differ at notification #${at + 1}.`,
      `  expected:\n${listing(expected)}`,
      `  actual:\n${listing(actual)}`,
      diagram === undefined
        ? ''
        : `  actual as a diagram: '${diagram.marbles}'\n  with values: ${JSON.stringify(Object.fromEntries(Object.entries(diagram.values).map(([k, v]) => [k, normal(v)])))}`,
    ].join('\n'),
  )
}

/** A TestScheduler whose failures print readable timelines. */
export function agentTestScheduler(): TestScheduler {
  return new TestScheduler(assertRecordedEqual)
}

/**
 * A run's events as a timeline: one line per frame that has events,
 * `<frame> <label>, <label>, …`, ending with `|` on completion or
 * `# <message>` on error. Unlike a marble diagram it never runs out of room
 * when a synchronous group is followed closely by more events.
 */
export function timelineOf(messages: readonly Recorded[]): string {
  const lines: string[] = []
  let frame = -1
  let line: string[] = []
  const flush = (): void => {
    if (line.length > 0) lines.push(`${frame} ${line.join(', ')}`)
  }
  for (const { frame: f, notification: n } of messages) {
    if (f !== frame) {
      flush()
      frame = f
      line = []
    }
    line.push(n.kind === 'N' ? show(n.value) : n.kind === 'C' ? '|' : `# ${n.error instanceof Error ? n.error.message : show(n.error)}`)
  }
  flush()
  return lines.join('\n')
}

const normalizeTimeline = (text: string): string =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .join('\n')

/** The helpers `runAgentMarbles` hands to its callback. */
export interface AgentMarbleHelpers extends RunHelpers {
  /**
   * Asserts a run's events as a timeline of labels (see {@link timelineOf}),
   * checked when virtual time has run out:
   * ```
   * expectTimeline(run$).toBe(`
   *   0 agentStart, turnStart:0, msgStart:user, msgEnd:user
   *   1 msgStart:assistant
   *   7 msgEnd:assistant:stop, turnEnd:0, agentEnd:stop, |
   * `)
   * ```
   */
  readonly expectTimeline: (events$: Observable<AgentEvent | AgentOwnEvent>) => { toBe(timeline: string): void }
  readonly scheduler: TestScheduler
  /**
   * Asserts a run's events as labels (see `eventLabel`):
   * `expectEvents(run$).toBe('(ab)-c', { a: 'agentStart', b: 'turnStart:0', c: ... })`.
   */
  readonly expectEvents: (
    events$: Observable<AgentEvent>,
    subscription?: string,
  ) => { toBe(marbles: string, values?: Readonly<Record<string, string>>): void }
}

/**
 * Runs `callback` in virtual time. Everything scheduled on RxJS's schedulers
 * (timers, `delay`, the scripted model's timelines, tool timeouts) runs on
 * virtual frames; Promises do not, so keep them out of what you assert.
 */
export function runAgentMarbles<T>(callback: (helpers: AgentMarbleHelpers) => T): T {
  const scheduler = agentTestScheduler()
  const checks: (() => void)[] = []
  const result = scheduler.run((helpers) =>
    callback({
      ...helpers,
      scheduler,
      expectTimeline: (events$) => {
        const recorded: Recorded[] = []
        scheduler.schedule(() => {
          events$.subscribe({
            next: (value) => recorded.push({ frame: scheduler.now(), notification: { kind: 'N', value: eventLabel(value) } }),
            error: (error: unknown) => recorded.push({ frame: scheduler.now(), notification: { kind: 'E', error } }),
            complete: () => recorded.push({ frame: scheduler.now(), notification: { kind: 'C' } }),
          })
        })
        return {
          toBe: (timeline) =>
            checks.push(() => {
              const actual = timelineOf(recorded)
              const expected = normalizeTimeline(timeline)
              if (actual !== expected) {
                throw new Error(`Event timelines differ.\n  expected:\n${indent(expected)}\n  actual:\n${indent(actual)}`)
              }
            }),
        }
      },
      expectEvents: (events$, subscription) => {
        const expectation = helpers.expectObservable(events$.pipe(map(eventLabel)), subscription)
        return { toBe: (marbles, values) => expectation.toBe(marbles, values) }
      },
    }),
  )
  for (const check of checks) check()
  return result
}

const indent = (text: string): string =>
  text
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n')
