/**
 * The `chat` span of one model call: opened when the call starts (with its
 * turn), named for its model once the first assistant message says which,
 * ended with the answer's model, finish reason, usage and error, and its
 * client metrics (duration, time to first chunk, token usage) recorded.
 */
import { SpanKind, SpanStatusCode, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api'
import type { AgentMessage, AssistantMessage } from '../types/message.js'
import { messagesJson } from './content.js'
import { usageAttributes } from './event-attributes.js'
import { hrTime, type Instruments } from './options.js'
import { ABORTED, ATTR, OPERATION, TOKEN_TYPE, finishReason } from './semconv.js'

/** The model call being traced. */
export interface OpenChat {
  readonly span: Span
  readonly start: number
  requestModel: string | undefined
  provider: string | undefined
  /** When the answering attempt's first content chunk arrived. */
  firstChunk: number | undefined
}

/** Opens the `chat` span of a call that started at `start` (milliseconds), under `parent` (the run's context). */
export function openChat(tracer: Tracer, conversationId: string | undefined, start: number, parent: Context | undefined): OpenChat {
  const attributes: Attributes = { [ATTR.operationName]: OPERATION.chat }
  if (conversationId !== undefined) attributes[ATTR.conversationId] = conversationId
  const span = tracer.startSpan(OPERATION.chat, { kind: SpanKind.CLIENT, attributes, startTime: hrTime(start) }, parent)
  return { span, start, requestModel: undefined, provider: undefined, firstChunk: undefined }
}

/** Names the call for `message`'s model and provider (the first message that says them). */
export function nameChat(chat: OpenChat, message: AssistantMessage): void {
  chat.requestModel = message.model
  chat.provider = message.provider
  chat.span.updateName(`${OPERATION.chat} ${message.model}`)
  chat.span.setAttributes({ [ATTR.requestModel]: message.model, [ATTR.providerName]: message.provider })
}

/**
 * Ends the call's span at `end` (milliseconds) with its answer `message`;
 * `input` is the run's messages so far when content is captured. Returns the
 * call's `error.type` (`undefined` when it succeeded).
 */
export function endChatSpan(chat: OpenChat, message: AssistantMessage, end: number, input: readonly AgentMessage[] | undefined): string | undefined {
  const { span } = chat
  span.setAttributes({
    [ATTR.responseModel]: message.model,
    [ATTR.responseFinishReasons]: [finishReason(message.stopReason)],
    ...usageAttributes(message.usage),
    ...(message.responseId === undefined ? {} : { [ATTR.responseId]: message.responseId }),
  })
  if (input !== undefined) {
    span.setAttribute(ATTR.inputMessages, messagesJson(input))
    span.setAttribute(ATTR.outputMessages, messagesJson([message]))
  }
  const errorType = message.stopReason === 'aborted' ? ABORTED : message.stopReason === 'error' ? (message.errorKind ?? 'error') : undefined
  if (errorType !== undefined) {
    span.setAttribute(ATTR.errorType, errorType)
    span.setStatus({ code: SpanStatusCode.ERROR, message: message.errorMessage ?? message.stopReason })
  }
  span.end(hrTime(end))
  return errorType
}

/** The client metrics of one model call that ended at `end` (milliseconds). */
export function recordChat(instruments: Instruments, chat: OpenChat, message: AssistantMessage, end: number, errorType: string | undefined): void {
  const attributes: Attributes = {
    [ATTR.operationName]: OPERATION.chat,
    [ATTR.providerName]: chat.provider ?? message.provider,
    [ATTR.requestModel]: chat.requestModel ?? message.model,
    [ATTR.responseModel]: message.model,
  }
  const { tokenUsage, operationDuration, timeToFirstChunk } = instruments
  operationDuration.record(Math.max(0, end - chat.start) / 1000, errorType === undefined ? attributes : { ...attributes, [ATTR.errorType]: errorType })
  if (errorType !== undefined) return
  if (chat.firstChunk !== undefined) timeToFirstChunk.record(Math.max(0, chat.firstChunk - chat.start) / 1000, attributes)
  const { usage } = message
  tokenUsage.record(usage.input + usage.cacheRead + usage.cacheWrite, { ...attributes, [ATTR.tokenType]: TOKEN_TYPE.input })
  tokenUsage.record(usage.output, { ...attributes, [ATTR.tokenType]: TOKEN_TYPE.output })
}
