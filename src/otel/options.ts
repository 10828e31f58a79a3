/** What `otelForwarder` and `traceRun` are configured with, and the defaults. */
import { context as otelContext, metrics, trace, type Context, type Histogram, type HrTime, type Meter, type Tracer } from '@opentelemetry/api'
import type { SchedulerLike } from 'rxjs'
import { INSTRUMENTATION_NAME, METRIC } from './semconv.js'

/** Options of {@link otelForwarder} and {@link traceRun}. Every field has a default. */
export interface OtelOptions {
  /** Where spans go (default: `trace.getTracer('rxagent')` from the global API, a no-op until an SDK is registered). */
  readonly tracer?: Tracer
  /** Where the two client metrics go (default: `metrics.getMeter('rxagent')`). */
  readonly meter?: Meter
  /** `gen_ai.agent.name`, and the run span's name `invoke_agent {agentName}` (default `rxagent`). */
  readonly agentName?: string
  /** `gen_ai.conversation.id` (default: the Agent's id for the forwarder, none for the operator). Set it to your session id. */
  readonly conversationId?: string
  /**
   * Record message content: the chat span's input and output messages, a
   * tool call's arguments and result (default `false`: content can hold
   * personal data and secrets, and is large).
   */
  readonly captureContent?: boolean
  /**
   * The clock of span start and end times, span event times and durations, in
   * milliseconds since the epoch (default: `performance.timeOrigin +
   * performance.now()`). The test scheduler makes them virtual.
   */
  readonly scheduler?: Pick<SchedulerLike, 'now'>
  /** The context a run span is a child of (default: the active context when the run starts). */
  readonly parentContext?: () => Context
}

/** The two histograms of the GenAI client metrics. */
export interface Instruments {
  readonly tokenUsage: Histogram
  readonly operationDuration: Histogram
  readonly timeToFirstChunk: Histogram
}

/** Options with their defaults filled in, and the instruments created once. */
export interface ResolvedOtelOptions {
  readonly tracer: Tracer
  readonly agentName: string
  readonly conversationId: string | undefined
  readonly captureContent: boolean
  readonly now: () => number
  readonly parentContext: () => Context
  readonly instruments: Instruments
}

const performanceClock = (): number => performance.timeOrigin + performance.now()

/**
 * Milliseconds since the epoch as OpenTelemetry's `[seconds, nanoseconds]`:
 * exact, where a plain number below the process's time origin would be read
 * as an offset from it (virtual time starts at 0).
 */
export function hrTime(ms: number): HrTime {
  const seconds = Math.floor(ms / 1000)
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)]
}

/** Creates the histograms on `meter`, with the advised buckets. */
export function createInstruments(meter: Meter): Instruments {
  const { tokenUsage: u, operationDuration: d, timeToFirstChunk: f } = METRIC
  return {
    timeToFirstChunk: meter.createHistogram(f.name, { unit: f.unit, description: f.description, advice: { explicitBucketBoundaries: [...f.buckets] } }),
    tokenUsage: meter.createHistogram(u.name, { unit: u.unit, description: u.description, advice: { explicitBucketBoundaries: [...u.buckets] } }),
    operationDuration: meter.createHistogram(d.name, { unit: d.unit, description: d.description, advice: { explicitBucketBoundaries: [...d.buckets] } }),
  }
}

/** Checks the options (a clear error naming the field) and fills in the defaults. */
export function resolveOtelOptions(entry: string, options: OtelOptions = {}): ResolvedOtelOptions {
  if (typeof options !== 'object' || options === null) throw new TypeError(`${entry}: options must be an object, got ${options === null ? 'null' : typeof options}`)
  const fail = (field: string, expected: string, actual: unknown): never => {
    throw new TypeError(`${entry}: invalid options at ${field}: expected ${expected}, got ${actual === null ? 'null' : typeof actual}`)
  }
  const { tracer, meter, agentName, conversationId, captureContent, scheduler, parentContext } = options
  if (tracer !== undefined && typeof tracer.startSpan !== 'function') fail('tracer', 'a Tracer (with startSpan)', tracer)
  if (meter !== undefined && typeof meter.createHistogram !== 'function') fail('meter', 'a Meter (with createHistogram)', meter)
  if (agentName !== undefined && typeof agentName !== 'string') fail('agentName', 'string', agentName)
  if (conversationId !== undefined && typeof conversationId !== 'string') fail('conversationId', 'string', conversationId)
  if (captureContent !== undefined && typeof captureContent !== 'boolean') fail('captureContent', 'boolean', captureContent)
  if (scheduler !== undefined && typeof scheduler.now !== 'function') fail('scheduler', 'a scheduler (with now())', scheduler)
  if (parentContext !== undefined && typeof parentContext !== 'function') fail('parentContext', 'a function returning a Context', parentContext)
  return {
    tracer: tracer ?? trace.getTracer(INSTRUMENTATION_NAME),
    agentName: agentName ?? INSTRUMENTATION_NAME,
    conversationId,
    captureContent: captureContent ?? false,
    now: scheduler === undefined ? performanceClock : () => scheduler.now(),
    parentContext: parentContext ?? (() => otelContext.active()),
    instruments: createInstruments(meter ?? metrics.getMeter(INSTRUMENTATION_NAME)),
  }
}
