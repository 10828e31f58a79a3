/** The OpenTelemetry SDK wired for tests: spans to the in-memory exporter, metrics to a reader collected on demand. */
import { expect } from 'vitest'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { MeterProvider, MetricReader, type HistogramMetricData } from '@opentelemetry/sdk-metrics'
import type { OtelOptions } from '../../src/otel/index.js'

class TestReader extends MetricReader {
  protected override onShutdown(): Promise<void> {
    return Promise.resolve()
  }
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve()
  }
}

/** A tracer and meter for `OtelOptions`, and what they recorded. */
export function telemetry() {
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const reader = new TestReader()
  const meters = new MeterProvider({ readers: [reader] })
  const options: OtelOptions = { tracer: provider.getTracer('test'), meter: meters.getMeter('test') }
  const spans = (): ReadableSpan[] => exporter.getFinishedSpans()
  const byName = (name: string): ReadableSpan[] => spans().filter((s) => s.name === name)
  const one = (name: string): ReadableSpan => {
    const found = byName(name)
    expect(found, `spans named ${name}: ${spans().map((s) => s.name).join(', ')}`).toHaveLength(1)
    return found[0]!
  }
  const histogram = async (name: string): Promise<HistogramMetricData | undefined> => {
    const { resourceMetrics } = await reader.collect()
    return resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === name) as HistogramMetricData | undefined
  }
  return { options, spans, byName, one, histogram }
}

export const ms = (hr: readonly [number, number]): number => hr[0] * 1000 + hr[1] / 1e6
export const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId
export const idOf = (span: ReadableSpan): string => span.spanContext().spanId
