/** Tracing an `agentLoop` pipeline: an operator that turns each run into spans. */
import { Observable, type MonoTypeOperatorFunction } from 'rxjs'
import type { AgentEvent } from '../types/event.js'
import { resolveOtelOptions, type OtelOptions } from './options.js'
import { RunTracer } from './run-tracer.js'

/**
 * Passes a run's events through unchanged and traces the run: an
 * `invoke_agent` span per subscription, a `chat` span per model call, an
 * `execute_tool` span per tool call (children of the run span), with the
 * GenAI client metrics. Unsubscribing before `agentEnd` ends whatever is
 * open with `error.type` `aborted`; an error of the source ends it with the
 * error's name. A tracer or meter that throws errors the run (the error of a
 * user callback goes to `error`).
 *
 * ```
 * events: -a-T-S-c-E-x-X-D-Z|     a: agentStart, S/E: assistant message, x/X: tool start/end, Z: agentEnd
 * result: -a-T-S-c-E-x-X-D-Z|     spans: invoke_agent [a, Z], chat [T, E], execute_tool [x, X]
 * ```
 *
 * @example
 * agentLoop(prompt, context, config).pipe(traceRun({ agentName: 'support', conversationId: sessionId }))
 */
export function traceRun<E extends AgentEvent | { readonly type: string }>(options: OtelOptions = {}): MonoTypeOperatorFunction<E> {
  const resolved = resolveOtelOptions('traceRun', options)
  return (source) =>
    new Observable<E>((subscriber) => {
      const run = new RunTracer(resolved, resolved.conversationId)
      const traced = (f: () => void): boolean => {
        try {
          f()
          return true
        } catch (error) {
          subscriber.error(error)
          return false
        }
      }
      const subscription = source.subscribe({
        next: (event) => {
          if (traced(() => run.handle(event))) subscriber.next(event)
        },
        error: (error: unknown) => {
          if (traced(() => run.fail(error))) subscriber.error(error)
        },
        complete: () => subscriber.complete(),
      })
      return () => {
        subscription.unsubscribe()
        try {
          run.abandon()
        } catch {
          // Teardown cannot report: the subscriber is gone.
        }
      }
    })
}
