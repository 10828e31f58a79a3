/**
 * rxagent events → AG-UI events: one run becomes RUN_STARTED … RUN_FINISHED
 * (or RUN_ERROR), each turn a step, each streamed answer a text message (with
 * its reasoning and tool calls), each tool execution a TOOL_CALL_RESULT, and
 * the run's progress a state document kept in sync by JSON Patch deltas.
 */
import { EventType, type AGUIEvent } from '@ag-ui/core'
import { Observable, type OperatorFunction } from 'rxjs'
import { extractText, type ToolCallContent, type UserContent } from '../types/content.js'
import type { AgentEvent } from '../types/event.js'
import type { AssistantMessage } from '../types/message.js'
import { CLIENT_TOOLS_POLICY } from './client-tools.js'
import { ProgressState, type RunProgress } from './progress.js'

/** Options of {@link toAgUi}. */
export interface ToAgUiOptions {
  /** The conversation (`RunAgentInput.threadId`), echoed in RUN_STARTED and RUN_FINISHED. */
  readonly threadId: string
  /** The run (`RunAgentInput.runId`); message ids are derived from it (`{runId}-m1`, `{runId}-result-{callId}`). */
  readonly runId: string
  /** Names of the tools the frontend runs: their calls get no TOOL_CALL_RESULT and are reported as pending when the run ends. */
  readonly clientTools?: Iterable<string>
  /** The client's state: the STATE_SNAPSHOT at the start is it (an object) with rxagent's `rxagent` progress field added. */
  readonly state?: unknown
  /** Milliseconds since the epoch for each event's `timestamp` (default `Date.now`). */
  readonly now?: () => number
}

/** Message ids and what is open within the current assistant message. */
interface Open {
  messageId: string
  /** The id of the text message open now (the first text segment uses the message's id). */
  text: string | undefined
  textSegments: number
  reasoning: string | undefined
  reasoningSegments: number
  calls: Set<string>
  started: Set<string>
}

const toolResultContent = (content: readonly UserContent[]): string | Array<Record<string, unknown>> => {
  if (content.every((c) => c.type === 'text')) return content.map((c) => (c.type === 'text' ? c.text : '')).join('')
  return content.map((c) => {
    if (c.type === 'text') return { type: 'text', text: c.text }
    if (c.type === 'image') {
      return c.source.type === 'base64'
        ? { type: 'image', source: { type: 'data', value: c.source.data, mimeType: c.source.mimeType } }
        : { type: 'image', source: { type: 'url', value: c.source.url, ...(c.source.mimeType === undefined ? {} : { mimeType: c.source.mimeType }) } }
    }
    return { type: 'text', text: JSON.stringify(c.data) }
  })
}

/**
 * Maps a run's events onto AG-UI's. Per subscription; completes after
 * RUN_FINISHED or RUN_ERROR. An error of the source becomes RUN_ERROR (the
 * stream then completes): AG-UI reports failures as events.
 *
 * | rxagent | AG-UI |
 * |---|---|
 * | `agentStart` | RUN_STARTED, STATE_SNAPSHOT |
 * | `turnStart` / `turnEnd` | STEP_STARTED / STEP_FINISHED (`turn 0`, `turn 1`…), STATE_DELTA |
 * | `textDelta` chunks | TEXT_MESSAGE_START, TEXT_MESSAGE_CONTENT…, TEXT_MESSAGE_END |
 * | `thinkingDelta` chunks | REASONING_START, REASONING_MESSAGE_START / CONTENT / END, REASONING_END |
 * | `toolUseStart` / `toolUseArgsDelta` / `toolUseEnd` | TOOL_CALL_START / TOOL_CALL_ARGS / TOOL_CALL_END |
 * | `toolExecutionStart` / `toolExecutionEnd` | STATE_DELTA (running tools); TOOL_CALL_RESULT (not for client tools) |
 * | `streamRetry`, `modelFallback`, `compaction` | CUSTOM `rxagent.streamRetry` (the discarded message's id) / `rxagent.modelFallback` / `rxagent.compaction` |
 * | `agentEnd` | RUN_FINISHED (`result`: stop reason, usage, cost; `outcome.pendingToolCallIds` for client tools), or RUN_ERROR for `error` and `aborted` |
 */
export function toAgUi(options: ToAgUiOptions): OperatorFunction<AgentEvent | { readonly type: string }, AGUIEvent> {
  const { threadId, runId } = options
  const clientTools = new Set(options.clientTools ?? [])
  const now = options.now ?? Date.now
  return (source) =>
    new Observable<AGUIEvent>((subscriber) => {
      let messages = 0
      let open: Open | undefined
      let step: string | undefined
      let ended = false
      let started = false
      const pending: string[] = []
      const progress = new ProgressState(options.state)
      const emit = (event: Record<string, unknown> & { type: EventType }): void => {
        subscriber.next({ ...event, timestamp: now() } as AGUIEvent)
      }
      const delta = (ops: RunProgress.Patch): void => {
        if (ops.length > 0) emit({ type: EventType.STATE_DELTA, delta: ops })
      }
      const closeText = (o: Open): void => {
        if (o.text !== undefined) emit({ type: EventType.TEXT_MESSAGE_END, messageId: o.text })
        o.text = undefined
      }
      const closeReasoning = (o: Open): void => {
        if (o.reasoning === undefined) return
        emit({ type: EventType.REASONING_MESSAGE_END, messageId: o.reasoning })
        emit({ type: EventType.REASONING_END, messageId: o.reasoning })
        o.reasoning = undefined
      }
      const closeMessage = (): void => {
        if (open === undefined) return
        closeText(open)
        closeReasoning(open)
        for (const id of open.calls) emit({ type: EventType.TOOL_CALL_END, toolCallId: id })
        open.calls.clear()
      }
      const newMessage = (): Open => {
        messages += 1
        open = { messageId: `${runId}-m${messages}`, text: undefined, textSegments: 0, reasoning: undefined, reasoningSegments: 0, calls: new Set(), started: new Set() }
        return open
      }
      const startCall = (o: Open, id: string, name: string): void => {
        closeText(o)
        closeReasoning(o)
        o.calls.add(id)
        o.started.add(id)
        emit({ type: EventType.TOOL_CALL_START, toolCallId: id, toolCallName: name, parentMessageId: o.messageId })
      }
      const finishStep = (): void => {
        if (step !== undefined) emit({ type: EventType.STEP_FINISHED, stepName: step })
        step = undefined
      }
      const end = (event: Record<string, unknown> & { type: EventType }): void => {
        closeMessage()
        finishStep()
        ended = true
        emit(event)
        subscriber.complete()
      }
      const handle = (e: AgentEvent): void => {
        switch (e.type) {
          case 'agentStart':
            started = true
            emit({ type: EventType.RUN_STARTED, threadId, runId })
            emit({ type: EventType.STATE_SNAPSHOT, snapshot: progress.snapshot() })
            return
          case 'turnStart':
            finishStep()
            step = `turn ${e.turnIndex}`
            emit({ type: EventType.STEP_STARTED, stepName: step })
            delta(progress.turn(e.turnIndex))
            return
          case 'messageStart':
            if (e.message.role === 'assistant') newMessage()
            return
          case 'messageUpdate': {
            const o = open ?? newMessage()
            const c = e.chunk
            if (c.type === 'textDelta') {
              closeReasoning(o)
              if (o.text === undefined) {
                o.textSegments += 1
                o.text = o.textSegments === 1 ? o.messageId : `${o.messageId}-t${o.textSegments}`
                emit({ type: EventType.TEXT_MESSAGE_START, messageId: o.text, role: 'assistant' })
              }
              emit({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: o.text, delta: c.text })
            } else if (c.type === 'thinkingDelta') {
              closeText(o)
              if (o.reasoning === undefined) {
                o.reasoningSegments += 1
                o.reasoning = `${o.messageId}-r${o.reasoningSegments}`
                emit({ type: EventType.REASONING_START, messageId: o.reasoning })
                emit({ type: EventType.REASONING_MESSAGE_START, messageId: o.reasoning, role: 'reasoning' })
              }
              emit({ type: EventType.REASONING_MESSAGE_CONTENT, messageId: o.reasoning, delta: c.text })
            } else if (c.type === 'toolUseStart') {
              if (!o.started.has(c.id)) startCall(o, c.id, c.name)
            } else if (c.type === 'toolUseArgsDelta') {
              if (o.calls.has(c.id)) emit({ type: EventType.TOOL_CALL_ARGS, toolCallId: c.id, delta: c.fragment })
            } else if (c.type === 'toolUseEnd') {
              if (o.calls.delete(c.id)) emit({ type: EventType.TOOL_CALL_END, toolCallId: c.id })
            }
            return
          }
          case 'streamRetry': {
            const discarded = open?.messageId
            closeMessage()
            newMessage()
            emit({ type: EventType.CUSTOM, name: 'rxagent.streamRetry', value: { discardedMessageId: discarded, attempt: e.attempt, error: e.error.message } })
            return
          }
          case 'modelFallback':
            emit({ type: EventType.CUSTOM, name: 'rxagent.modelFallback', value: { from: e.from.modelId, to: e.to.modelId, error: e.error.message } })
            return
          case 'compaction':
            emit({ type: EventType.CUSTOM, name: 'rxagent.compaction', value: { reason: e.reason, droppedMessages: e.droppedMessages, keptMessages: e.keptMessages } })
            return
          case 'messageEnd':
            if (e.message.role === 'assistant') endAssistant(e.message)
            return
          case 'toolExecutionStart':
            if (clientTools.has(e.toolName)) pending.push(e.toolCallId)
            else delta(progress.toolStarted(e.toolCallId, e.toolName))
            return
          case 'toolExecutionEnd':
            if (clientTools.has(e.toolName)) return
            delta(progress.toolEnded(e.toolCallId))
            emit({ type: EventType.TOOL_CALL_RESULT, messageId: `${runId}-result-${e.toolCallId}`, toolCallId: e.toolCallId, role: 'tool', content: toolResultContent(e.result.content) })
            return
          case 'turnEnd':
            closeMessage()
            open = undefined
            delta(progress.usage(e.message))
            finishStep()
            return
          case 'agentEnd': {
            const { result } = e
            delta(progress.ended(result.stopReason))
            if (result.stopReason === 'error' || result.stopReason === 'aborted') {
              end({ type: EventType.RUN_ERROR, message: result.error ?? result.stopReason, code: result.stopReason })
              return
            }
            const clientStop = result.stopReason === 'policyStop' && result.stoppedBy === CLIENT_TOOLS_POLICY
            const summary = { stopReason: clientStop ? 'clientTools' : result.stopReason, usage: result.usage, cost: result.cost, ...(result.error === undefined ? {} : { reason: result.error }) }
            end({ type: EventType.RUN_FINISHED, threadId, runId, result: summary, ...(clientStop ? { outcome: { type: 'success', pendingToolCallIds: [...pending] } } : {}) })
            return
          }
          default:
            return
        }
      }
      const endAssistant = (message: AssistantMessage): void => {
        const o = open ?? newMessage()
        closeText(o)
        closeReasoning(o)
        // Content the stream did not announce (a replayed run whose deltas were dropped, a provider
        // that sends whole blocks) is sent whole: reasoning, text, then the calls.
        const thinking = message.content.map((c) => (c.type === 'thinking' && c.redacted !== true ? c.thinking : '')).join('')
        if (o.reasoningSegments === 0 && thinking !== '') {
          const id = `${o.messageId}-r1`
          emit({ type: EventType.REASONING_START, messageId: id })
          emit({ type: EventType.REASONING_MESSAGE_START, messageId: id, role: 'reasoning' })
          emit({ type: EventType.REASONING_MESSAGE_CONTENT, messageId: id, delta: thinking })
          emit({ type: EventType.REASONING_MESSAGE_END, messageId: id })
          emit({ type: EventType.REASONING_END, messageId: id })
        }
        const text = extractText(message.content)
        if (o.textSegments === 0 && text !== '') {
          emit({ type: EventType.TEXT_MESSAGE_START, messageId: o.messageId, role: 'assistant' })
          emit({ type: EventType.TEXT_MESSAGE_CONTENT, messageId: o.messageId, delta: text })
          emit({ type: EventType.TEXT_MESSAGE_END, messageId: o.messageId })
        }
        for (const block of message.content) {
          if (block.type !== 'toolCall' || o.started.has(block.id)) continue
          const call = block satisfies ToolCallContent
          startCall(o, call.id, call.name)
          emit({ type: EventType.TOOL_CALL_ARGS, toolCallId: call.id, delta: JSON.stringify(call.arguments) })
        }
        for (const id of o.calls) emit({ type: EventType.TOOL_CALL_END, toolCallId: id })
        o.calls.clear()
      }
      return source.subscribe({
        next: (event) => {
          if (ended) return
          try {
            handle(event as AgentEvent)
          } catch (error) {
            subscriber.error(error)
          }
        },
        error: (error: unknown) => {
          if (ended) return
          // An error before the run started still opens one, so the client sees a well-formed run.
          if (!started) emit({ type: EventType.RUN_STARTED, threadId, runId })
          end({ type: EventType.RUN_ERROR, message: error instanceof Error ? error.message : String(error), code: error instanceof Error ? error.name : 'error' })
        },
        complete: () => {
          if (!ended && !started) emit({ type: EventType.RUN_STARTED, threadId, runId })
          if (!ended) end({ type: EventType.RUN_ERROR, message: 'the run ended without agentEnd', code: 'incomplete' })
        },
      })
    })
}
