/** Per-turn metrics, derived from a run's events in the order they happen. */
import { Observable, type OperatorFunction, type SchedulerLike } from 'rxjs'
import type { AgentEvent } from '../types/event.js'
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
      let llmStart = 0
      let firstToken: number | undefined
      let llmEnd: number | undefined
      const toolStarts = new Map<string, number>()
      let tools: ToolMetrics[] = []
      return source.subscribe({
        next: (event) => {
          // The clock is read only by the events that are timed: not once per delta.
          switch (event.type) {
            case 'turnStart':
              llmStart = scheduler.now()
              firstToken = undefined
              llmEnd = undefined
              tools = []
              break
            case 'messageEnd':
              if (event.message.role === 'assistant') llmEnd = scheduler.now()
              break
            case 'messageUpdate':
              if (firstToken === undefined && event.chunk.type !== 'usage') firstToken = scheduler.now()
              break
            case 'toolExecutionStart':
              toolStarts.set(event.toolCallId, scheduler.now())
              break
            case 'toolExecutionEnd': {
              const now = scheduler.now()
              tools.push({ toolCallId: event.toolCallId, toolName: event.toolName, durationMs: now - (toolStarts.get(event.toolCallId) ?? now), isError: event.isError })
              toolStarts.delete(event.toolCallId)
              break
            }
          }
          subscriber.next(event)
          if (event.type === 'turnEnd') {
            const now = scheduler.now()
            const message = event.message
            const end = llmEnd ?? now
            const output = message?.usage.output ?? 0
            const streamSeconds = firstToken === undefined ? 0 : (end - firstToken) / 1000
            const metrics: TurnMetrics = {
              turnIndex: event.turnIndex,
              llmDurationMs: Math.max(0, end - llmStart),
              tools,
              usage: message?.usage ?? emptyUsage,
              cost: message?.cost ?? emptyCost,
              ...(firstToken === undefined ? {} : { timeToFirstTokenMs: firstToken - llmStart }),
              ...(streamSeconds > 0 && output > 0 ? { outputTokensPerSecond: output / streamSeconds } : {}),
            }
            subscriber.next({ type: 'turnMetrics', metrics })
          }
        },
        error: (e: unknown) => subscriber.error(e),
        complete: () => subscriber.complete(),
      })
    })
}
