/**
 * The agent state an AG-UI run exposes: the client's state (when it is an
 * object) with one field added, `rxagent`, the run's progress:
 *
 * ```json
 * { "rxagent": { "status": "running", "turn": 1, "runningTools": { "call_1": "search" },
 *                "usage": { "inputTokens": 1200, "outputTokens": 80, "cost": 0.0042 } } }
 * ```
 *
 * `status` is `running`, then the run's stop reason. STATE_SNAPSHOT sends it
 * whole at the start; every change after that is a STATE_DELTA (RFC 6902 JSON
 * Patch against `/rxagent/…`), so a client's copy always equals this.
 */
import type { AssistantMessage } from '../types/message.js'

/** The `rxagent` field of the exposed state. */
export interface RunProgress {
  readonly status: string
  readonly turn: number | null
  readonly runningTools: Readonly<Record<string, string>>
  readonly usage: { readonly inputTokens: number; readonly outputTokens: number; readonly cost: number }
}

export declare namespace RunProgress {
  /** JSON Patch operations. */
  type Patch = ReadonlyArray<{ readonly op: 'add' | 'remove' | 'replace'; readonly path: string; readonly value?: unknown }>
}

/** A JSON Pointer segment (RFC 6901). */
const pointer = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1')

/** The progress document and the patches that keep a copy of it in sync. */
export class ProgressState {
  private progress: RunProgress = { status: 'running', turn: null, runningTools: {}, usage: { inputTokens: 0, outputTokens: 0, cost: 0 } }

  constructor(private readonly clientState: unknown) {}

  /** The whole state: the client's object with `rxagent` set. */
  snapshot(): Record<string, unknown> {
    const base = typeof this.clientState === 'object' && this.clientState !== null && !Array.isArray(this.clientState) ? this.clientState : {}
    return { ...base, rxagent: this.progress }
  }

  turn(turn: number): RunProgress.Patch {
    this.progress = { ...this.progress, turn }
    return [{ op: 'replace', path: '/rxagent/turn', value: turn }]
  }

  toolStarted(id: string, name: string): RunProgress.Patch {
    this.progress = { ...this.progress, runningTools: { ...this.progress.runningTools, [id]: name } }
    return [{ op: 'add', path: `/rxagent/runningTools/${pointer(id)}`, value: name }]
  }

  toolEnded(id: string): RunProgress.Patch {
    if (!(id in this.progress.runningTools)) return []
    const { [id]: _ended, ...rest } = this.progress.runningTools
    this.progress = { ...this.progress, runningTools: rest }
    return [{ op: 'remove', path: `/rxagent/runningTools/${pointer(id)}` }]
  }

  usage(message: AssistantMessage | undefined): RunProgress.Patch {
    if (message === undefined) return []
    const { usage, cost } = message
    const now = this.progress.usage
    const next = { inputTokens: now.inputTokens + usage.input + usage.cacheRead + usage.cacheWrite, outputTokens: now.outputTokens + usage.output, cost: now.cost + cost.total }
    if (next.inputTokens === now.inputTokens && next.outputTokens === now.outputTokens && next.cost === now.cost) return []
    this.progress = { ...this.progress, usage: next }
    return [{ op: 'replace', path: '/rxagent/usage', value: next }]
  }

  ended(stopReason: string): RunProgress.Patch {
    const patch: { op: 'replace' | 'remove'; path: string; value?: unknown }[] = [{ op: 'replace', path: '/rxagent/status', value: stopReason }]
    for (const id of Object.keys(this.progress.runningTools)) patch.push({ op: 'remove', path: `/rxagent/runningTools/${pointer(id)}` })
    this.progress = { ...this.progress, status: stopReason, runningTools: {} }
    return patch
  }
}
