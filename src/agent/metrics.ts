/** Per-turn metrics, derived from a run's events in the order they happen. */
import { Observable, type OperatorFunction, type SchedulerLike } from 'rxjs'
import type { AgentEvent, MessageUpdateEvent, TurnEndEvent } from '../types/event.js'
import { emptyCost, emptyUsage } from '../types/usage.js'
import type { ToolMetrics, TurnMetrics, TurnMetricsEvent } from './agent-events.js'

/** Receives each turn's metrics (a hook for exporters: Prometheus, OpenTelemetry, logs). */
export interface MetricsCollector {
  onTurn(metrics: TurnMetrics): void
}

/**
 * Passes every event through and adds a `turnMetrics` event right after each
 * `turnEnd`. The model call is timed from `turnStart` (the turn's pending
 * messages are emitted in the same instant, then the context is transformed
 * and the call made) to the assistant's `messageEnd`, retries and fallbacks
 * included; time to first token runs to the first content chunk.
 *
 * ```
 * events: -T-u-S-c-c-E-x-X-D-      T: turnStart, S: msgStart:assistant, c: content, D: turnEnd
 * result: -T-u-S-c-c-E-x-X-(Dm)-   m: turnMetrics
 * ```
 */
export function turnMetrics(scheduler: SchedulerLike): OperatorFunction<AgentEvent, AgentEvent | TurnMetricsEvent> {
  return (source) =>
    new Observable<AgentEvent | TurnMetricsEvent>((subscriber) => {
      const meter = new TurnMeter(scheduler)
      return source.subscribe({
        next: (event) => {
          meter.see(event)
          subscriber.next(event)
          if (event.type === 'turnEnd') subscriber.next(meter.turnEnded(event))
        },
        error: (e: unknown) => subscriber.error(e),
        complete: () => subscriber.complete(),
      })
    })
}

/**
 * What {@link turnMetrics} does, for a subscriber of the events to call
 * itself (the Agent's runs: one Observable layer less per event): `see`
 * each event before handling it, and after handling a `turnEnd`, handle
 * `turnEnded(turnEnd)`.
 */
export class TurnMeter {
  private llmStart = 0
  private firstToken: number | undefined
  private llmEnd: number | undefined
  private readonly toolStarts = new Map<string, number>()
  private tools: ToolMetrics[] = []

  constructor(private readonly scheduler: SchedulerLike) {}

  see(event: AgentEvent): void {
    // The clock is read only by the events that are timed: not once per delta.
    if (event.type !== 'messageUpdate') return this.seeTimed(event)
    if (this.firstToken === undefined && event.chunk.type !== 'usage') this.firstToken = this.scheduler.now()
  }

  /** Every event but a delta, out of `see`, which is inlined in a per-delta path (see `Runner`). */
  private seeTimed(event: Exclude<AgentEvent, MessageUpdateEvent>): void {
    switch (event.type) {
      case 'turnStart':
        this.llmStart = this.scheduler.now()
        this.firstToken = undefined
        this.llmEnd = undefined
        this.tools = []
        return
      case 'messageEnd':
        if (event.message.role === 'assistant') this.llmEnd = this.scheduler.now()
        return
      case 'toolExecutionStart':
        this.toolStarts.set(event.toolCallId, this.scheduler.now())
        return
      case 'toolExecutionEnd': {
        const now = this.scheduler.now()
        this.tools.push({ toolCallId: event.toolCallId, toolName: event.toolName, durationMs: now - (this.toolStarts.get(event.toolCallId) ?? now), isError: event.isError })
        this.toolStarts.delete(event.toolCallId)
        return
      }
    }
  }

  /** The metrics of the turn `event` ended. */
  turnEnded(event: TurnEndEvent): TurnMetricsEvent {
    const { llmStart, firstToken } = this
    const now = this.scheduler.now()
    const message = event.message
    const end = this.llmEnd ?? now
    const output = message?.usage.output ?? 0
    const streamSeconds = firstToken === undefined ? 0 : (end - firstToken) / 1000
    const metrics: TurnMetrics = {
      turnIndex: event.turnIndex,
      llmDurationMs: Math.max(0, end - llmStart),
      tools: this.tools,
      usage: message?.usage ?? emptyUsage,
      cost: message?.cost ?? emptyCost,
      ...(firstToken === undefined ? {} : { timeToFirstTokenMs: firstToken - llmStart }),
      ...(streamSeconds > 0 && output > 0 ? { outputTokensPerSecond: output / streamSeconds } : {}),
    }
    return { type: 'turnMetrics', metrics }
  }
}
