/**
 * rxagent/otel: a run as OpenTelemetry spans and metrics, per the GenAI
 * semantic conventions. Needs `@opentelemetry/api` (an optional peer
 * dependency); nothing else in rxagent imports it.
 *
 * - `otelForwarder(options)`: for an `Agent` (`forwarders` or `addForwarder`).
 * - `traceRun(options)`: an operator for `agentLoop` pipelines.
 * - `ATTR`, `EVENT`, `METRIC`, `OPERATION`: every name written, in one module.
 */
export { otelForwarder } from './forwarder.js'
export { traceRun } from './trace-run.js'
export { type OtelOptions } from './options.js'
export { ATTR, EVENT, METRIC, OPERATION, TOKEN_TYPE, ABORTED, TOOL_ERROR, INSTRUMENTATION_NAME, finishReason } from './semconv.js'
export { semconvMessage, type SemconvMessage } from './content.js'
