/**
 * One run's events turned into spans: `invoke_agent` for the run, `chat` for
 * each model call, `execute_tool` for each tool call (children of the run, so
 * concurrent calls overlap under one parent). Holds only what is open; reads
 * the clock only on the events that start or end something, never per delta.
 */
import { SpanKind, SpanStatusCode, trace, type Attributes, type Context, type HrTime, type Span } from '@opentelemetry/api'
import type { AgentEvent } from '../types/event.js'
import type { AgentMessage, AssistantMessage } from '../types/message.js'
import { endChatSpan, nameChat, openChat, recordChat, type OpenChat } from './chat-span.js'
import { jsonString } from './content.js'
import {
  approvalEndAttributes,
  compactionAttributes,
  fallbackAttributes,
  policyDecisionAttributes,
  retryAttributes,
  textOf,
  toolStartAttributes,
  usageAttributes,
} from './event-attributes.js'
import { hrTime, type ResolvedOtelOptions } from './options.js'
import { ABORTED, ATTR, EVENT, OPERATION, TOOL_ERROR } from './semconv.js'

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
        chat.span.addEvent(EVENT.retry, retryAttributes(e), this.time())
        return
      }
      case 'modelFallback': {
        const chat = this.ensureChat(e.message)
        chat.firstChunk = undefined
        chat.span.addEvent(EVENT.fallback, fallbackAttributes(e), this.time())
        return
      }
      case 'compaction':
        this.ensureChat(undefined).span.addEvent(EVENT.compaction, compactionAttributes(e), this.time())
        return
      case 'messageEnd':
        if (e.message.role === 'assistant') this.endChat(e.message)
        if (this.options.captureContent) this.messages.push(e.message)
        return
      case 'toolExecutionStart': {
        this.ensureRun()
        const attributes = toolStartAttributes(e, this.options.captureContent)
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
        this.ensureRun().addEvent(EVENT.approvalEnd, approvalEndAttributes(e), this.time())
        return
      case 'policyDecision':
        this.ensureRun().addEvent(EVENT.policyDecision, policyDecisionAttributes(e), this.time())
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
      chat = openChat(this.options.tracer, this.conversationId, this.turnStart ?? this.now(), this.runContext)
      this.chat = chat
    }
    if (message !== undefined && chat.requestModel === undefined) {
      nameChat(chat, message)
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
    const errorType = endChatSpan(chat, message, end, this.options.captureContent ? this.messages : undefined)
    if (message.stopReason === 'error') this.lastErrorKind = message.errorKind ?? 'error'
    recordChat(this.options.instruments, chat, message, end, errorType)
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
