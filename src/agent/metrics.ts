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

  /** Sees `event`, whose `type` is `type` (a caller that read it already hands it over: see `ActiveRun.next`). */
  see(event: AgentEvent, type: AgentEvent['type'] = event.type): void {
    // The clock is read only by the events that are timed: not once per delta.
    if (type !== 'messageUpdate') return this.seeTimed(event as Exclude<AgentEvent, MessageUpdateEvent>, type)
    if (this.firstToken === undefined && (event as MessageUpdateEvent).chunk.type !== 'usage') this.firstToken = this.scheduler.now()
  }

  /** Every event but a delta, out of `see`, which is inlined in a per-delta path (see `Runner`). */
  private seeTimed(event: Exclude<AgentEvent, MessageUpdateEvent>, type: AgentEvent['type']): void {
    switch (type) {
      case 'turnStart':
        this.llmStart = this.scheduler.now()
        this.firstToken = undefined
        this.llmEnd = undefined
        this.tools = []
        return
      case 'messageEnd':
        if ((event as Extract<AgentEvent, { type: 'messageEnd' }>).message.role === 'assistant') this.llmEnd = this.scheduler.now()
        return
      case 'toolExecutionStart':
        this.toolStarts.set((event as Extract<AgentEvent, { type: 'toolExecutionStart' }>).toolCallId, this.scheduler.now())
        return
      case 'toolExecutionEnd': {
        const end = event as Extract<AgentEvent, { type: 'toolExecutionEnd' }>
        const now = this.scheduler.now()
        this.tools.push({ toolCallId: end.toolCallId, toolName: end.toolName, durationMs: now - (this.toolStarts.get(end.toolCallId) ?? now), isError: end.isError })
        this.toolStarts.delete(end.toolCallId)
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
