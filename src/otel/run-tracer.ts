/**
 * One run's events turned into spans: `invoke_agent` for the run, `chat` for
 * each model call, `execute_tool` for each tool call (children of the run, so
 * concurrent calls overlap under one parent). Holds only what is open; reads
 * the clock only on the events that start or end something, never per delta.
 */
import { SpanKind, SpanStatusCode, trace, type Attributes, type Context, type HrTime, type Span } from '@opentelemetry/api'
import type { AgentEvent } from '../types/event.js'
import type { AgentMessage, AssistantMessage } from '../types/message.js'
import type { Usage } from '../types/usage.js'
import { jsonString, messagesJson } from './content.js'
import { hrTime, type ResolvedOtelOptions } from './options.js'
import { ABORTED, ATTR, EVENT, OPERATION, TOKEN_TYPE, TOOL_ERROR, finishReason } from './semconv.js'

/** The model call being traced. */
interface OpenChat {
  readonly span: Span
  readonly start: number
  requestModel: string | undefined
  provider: string | undefined
  /** When the answering attempt's first content chunk arrived. */
  firstChunk: number | undefined
}

const usageAttributes = (usage: Usage): Attributes => ({
  [ATTR.usageInputTokens]: usage.input + usage.cacheRead + usage.cacheWrite,
  [ATTR.usageOutputTokens]: usage.output,
  [ATTR.usageCacheReadTokens]: usage.cacheRead,
  [ATTR.usageCacheCreationTokens]: usage.cacheWrite,
})

/** Events a tracer is given: the loop's, plus any an Agent adds (ignored). */
export type TracedEvent = AgentEvent | { readonly type: string }

/** Traces one run. `handle` each event in order; `abandon` or `fail` if the run ends without `agentEnd`. */
export class RunTracer {
  private run: Span | undefined
  private runContext: Context | undefined
  private chat: OpenChat | undefined
  private turnStart: number | undefined
  private readonly tools = new Map<string, Span>()
  /** The run's messages so far, kept only when content is captured. */
  private readonly messages: AgentMessage[] = []
  private finished = false
  /** Whether the run span has its model yet (from the first call). */
  private runHasModel = false
  /** The kind of the last failed model call: the run's `error.type` when it ends in error. */
  private lastErrorKind: string | undefined

  constructor(
    private readonly options: ResolvedOtelOptions,
    private readonly conversationId: string | undefined,
  ) {}

  /** The clock, in milliseconds. */
  private now(): number {
    return this.options.now()
  }

  /** The clock, as a span time. */
  private time(): HrTime {
    return hrTime(this.options.now())
  }

  /** Whether the run span has ended. */
  get done(): boolean {
    return this.finished
  }

  /** The context of tool call `toolCallId`'s open `execute_tool` span (a sub-agent's run is traced under it); `undefined` when none is open. */
  toolContext(toolCallId: string): Context | undefined {
    const span = this.tools.get(toolCallId)
    return span === undefined || this.runContext === undefined ? undefined : trace.setSpan(this.runContext, span)
  }

  /** Takes one event of the run. */
  handle(event: TracedEvent): void {
    if (this.finished) return
    const e = event as AgentEvent
    switch (e.type) {
      case 'agentStart':
        this.ensureRun()
        return
      case 'turnStart':
        this.ensureRun()
        this.turnStart = this.now()
        return
      case 'messageStart':
        if (e.message.role === 'assistant') this.ensureChat(e.message)
        return
      case 'messageUpdate': {
        const chat = this.chat
        if (chat !== undefined && chat.firstChunk === undefined) {
          chat.firstChunk = this.now()
          chat.span.setAttribute(ATTR.responseTimeToFirstChunk, Math.max(0, chat.firstChunk - chat.start) / 1000)
        }
        return
      }
      case 'streamRetry': {
        const chat = this.ensureChat(e.message)
        chat.firstChunk = undefined
        chat.span.addEvent(
          EVENT.retry,
          { [ATTR.attempt]: e.attempt, [ATTR.delayMs]: e.delayMs, [ATTR.errorType]: e.error.kind, [ATTR.errorMessage]: e.error.message },
          this.time(),
        )
        return
      }
      case 'modelFallback': {
        const chat = this.ensureChat(e.message)
        chat.firstChunk = undefined
        chat.span.addEvent(
          EVENT.fallback,
          { [ATTR.fallbackFrom]: e.from.modelId, [ATTR.fallbackTo]: e.to.modelId, [ATTR.errorType]: e.error.kind, [ATTR.errorMessage]: e.error.message },
          this.time(),
        )
        return
      }
      case 'compaction':
        this.ensureChat(undefined).span.addEvent(
          EVENT.compaction,
          {
            [ATTR.compactionReason]: e.reason,
            [ATTR.droppedMessages]: e.droppedMessages,
            [ATTR.droppedTokens]: e.droppedTokens,
            [ATTR.keptMessages]: e.keptMessages,
            [ATTR.keptTokens]: e.keptTokens,
            [ATTR.budget]: e.budget,
          },
          this.time(),
        )
        return
      case 'messageEnd':
        if (e.message.role === 'assistant') this.endChat(e.message)
        if (this.options.captureContent) this.messages.push(e.message)
        return
      case 'toolExecutionStart': {
        this.ensureRun()
        const attributes: Attributes = {
          [ATTR.operationName]: OPERATION.executeTool,
          [ATTR.toolName]: e.toolName,
          [ATTR.toolCallId]: e.toolCallId,
          [ATTR.toolType]: 'function',
        }
        if (this.options.captureContent) attributes[ATTR.toolCallArguments] = jsonString(e.args)
        const span = this.options.tracer.startSpan(
          `${OPERATION.executeTool} ${e.toolName}`,
          { kind: SpanKind.INTERNAL, attributes, startTime: this.time() },
          this.runContext,
        )
        this.tools.set(e.toolCallId, span)
        return
      }
      case 'toolExecutionEnd': {
        const span = this.tools.get(e.toolCallId)
        if (span === undefined) return
        this.tools.delete(e.toolCallId)
        if (this.options.captureContent) span.setAttribute(ATTR.toolCallResult, jsonString(e.result.content))
        if (e.isError) {
          span.setAttribute(ATTR.errorType, TOOL_ERROR)
          span.setStatus({ code: SpanStatusCode.ERROR, message: textOf(e.result.content) })
        }
        span.end(this.time())
        return
      }
      case 'toolApprovalRequest':
        this.ensureRun().addEvent(EVENT.approvalRequest, { [ATTR.toolName]: e.toolName, [ATTR.toolCallId]: e.toolCallId }, this.time())
        return
      case 'toolApprovalEnd':
        this.ensureRun().addEvent(
          EVENT.approvalEnd,
          { [ATTR.toolName]: e.toolName, [ATTR.toolCallId]: e.toolCallId, [ATTR.approved]: e.approved, ...(e.reason === undefined ? {} : { [ATTR.reason]: e.reason }) },
          this.time(),
        )
        return
      case 'policyDecision':
        this.ensureRun().addEvent(
          EVENT.policyDecision,
          {
            [ATTR.policySlot]: e.slot,
            [ATTR.policyName]: e.policy,
            [ATTR.policyAction]: e.action,
            ...(e.reason === undefined ? {} : { [ATTR.reason]: e.reason }),
            ...(e.toolCallId === undefined ? {} : { [ATTR.toolCallId]: e.toolCallId }),
          },
          this.time(),
        )
        return
      case 'agentEnd': {
        const run = this.ensureRun()
        const { result } = e
        const errorType = result.stopReason === 'aborted' ? ABORTED : result.stopReason === 'error' ? (this.lastErrorKind ?? 'error') : undefined
        run.setAttributes({ ...usageAttributes(result.usage), [ATTR.stopReason]: result.stopReason })
        this.finish(errorType, result.error ?? result.stopReason)
        return
      }
      default:
        return
    }
  }

  /** The run was unsubscribed before `agentEnd`: everything open ends as aborted. */
  abandon(): void {
    if (!this.finished && this.run !== undefined) this.finish(ABORTED, 'unsubscribed before the run ended')
  }

  /** The run's Observable errored: everything open ends with the error. */
  fail(error: unknown): void {
    if (this.finished) return
    const run = this.ensureRun()
    if (error instanceof Error) run.recordException(error, this.time())
    this.finish(error instanceof Error ? error.name : 'error', error instanceof Error ? error.message : String(error))
  }

  private ensureRun(): Span {
    if (this.run !== undefined) return this.run
    const { tracer, agentName } = this.options
    const attributes: Attributes = { [ATTR.operationName]: OPERATION.invokeAgent, [ATTR.agentName]: agentName }
    if (this.conversationId !== undefined) attributes[ATTR.conversationId] = this.conversationId
    const parent = this.options.parentContext()
    const run = tracer.startSpan(`${OPERATION.invokeAgent} ${agentName}`, { kind: SpanKind.INTERNAL, attributes, startTime: this.time() }, parent)
    this.run = run
    this.runContext = trace.setSpan(parent, run)
    return run
  }

  private ensureChat(message: AssistantMessage | undefined): OpenChat {
    this.ensureRun()
    let chat = this.chat
    if (chat === undefined) {
      // The call started with its turn (the pending messages and the context transform take no model time).
      const start = this.turnStart ?? this.now()
      const attributes: Attributes = { [ATTR.operationName]: OPERATION.chat }
      if (this.conversationId !== undefined) attributes[ATTR.conversationId] = this.conversationId
      const span = this.options.tracer.startSpan(OPERATION.chat, { kind: SpanKind.CLIENT, attributes, startTime: hrTime(start) }, this.runContext)
      chat = { span, start, requestModel: undefined, provider: undefined, firstChunk: undefined }
      this.chat = chat
    }
    if (message !== undefined && chat.requestModel === undefined) {
      chat.requestModel = message.model
      chat.provider = message.provider
      chat.span.updateName(`${OPERATION.chat} ${message.model}`)
      chat.span.setAttributes({ [ATTR.requestModel]: message.model, [ATTR.providerName]: message.provider })
      if (this.run !== undefined && !this.runHasModel) {
        this.runHasModel = true
        this.run.setAttributes({ [ATTR.requestModel]: message.model, [ATTR.providerName]: message.provider })
      }
    }
    return chat
  }

  private endChat(message: AssistantMessage): void {
    const chat = this.ensureChat(message)
    this.chat = undefined
    this.turnStart = undefined
    const end = this.now()
    const { span } = chat
    span.setAttributes({
      [ATTR.responseModel]: message.model,
      [ATTR.responseFinishReasons]: [finishReason(message.stopReason)],
      ...usageAttributes(message.usage),
      ...(message.responseId === undefined ? {} : { [ATTR.responseId]: message.responseId }),
    })
    if (this.options.captureContent) {
      span.setAttribute(ATTR.inputMessages, messagesJson(this.messages))
      span.setAttribute(ATTR.outputMessages, messagesJson([message]))
    }
    const errorType = message.stopReason === 'aborted' ? ABORTED : message.stopReason === 'error' ? (message.errorKind ?? 'error') : undefined
    if (message.stopReason === 'error') this.lastErrorKind = message.errorKind ?? 'error'
    if (errorType !== undefined) {
      span.setAttribute(ATTR.errorType, errorType)
      span.setStatus({ code: SpanStatusCode.ERROR, message: message.errorMessage ?? message.stopReason })
    }
    span.end(hrTime(end))
    this.record(chat, message, end, errorType)
  }

  /** The client metrics of one model call. */
  private record(chat: OpenChat, message: AssistantMessage, end: number, errorType: string | undefined): void {
    const attributes: Attributes = {
      [ATTR.operationName]: OPERATION.chat,
      [ATTR.providerName]: chat.provider ?? message.provider,
      [ATTR.requestModel]: chat.requestModel ?? message.model,
      [ATTR.responseModel]: message.model,
    }
    const { tokenUsage, operationDuration, timeToFirstChunk } = this.options.instruments
    operationDuration.record(Math.max(0, end - chat.start) / 1000, errorType === undefined ? attributes : { ...attributes, [ATTR.errorType]: errorType })
    if (errorType !== undefined) return
    if (chat.firstChunk !== undefined) timeToFirstChunk.record(Math.max(0, chat.firstChunk - chat.start) / 1000, attributes)
    const { usage } = message
    tokenUsage.record(usage.input + usage.cacheRead + usage.cacheWrite, { ...attributes, [ATTR.tokenType]: TOKEN_TYPE.input })
    tokenUsage.record(usage.output, { ...attributes, [ATTR.tokenType]: TOKEN_TYPE.output })
  }

  /** Ends every open span; `errorType` marks the run (and what was still open) as failed. */
  private finish(errorType: string | undefined, message: string): void {
    this.finished = true
    const end = this.now()
    const failOpen = errorType ?? ABORTED
    for (const span of this.tools.values()) {
      span.setAttribute(ATTR.errorType, failOpen)
      span.setStatus({ code: SpanStatusCode.ERROR, message })
      span.end(hrTime(end))
    }
    this.tools.clear()
    if (this.chat !== undefined) {
      this.chat.span.setAttribute(ATTR.errorType, failOpen)
      this.chat.span.setStatus({ code: SpanStatusCode.ERROR, message })
      this.chat.span.end(hrTime(end))
      this.chat = undefined
    }
    const run = this.run
    if (run === undefined) return
    if (errorType !== undefined) {
      run.setAttribute(ATTR.errorType, errorType)
      run.setStatus({ code: SpanStatusCode.ERROR, message })
    }
    run.end(hrTime(end))
  }
}

function textOf(content: readonly { readonly type: string; readonly text?: string }[]): string {
  return content.map((c) => (c.type === 'text' ? (c.text ?? '') : '')).join('')
}
