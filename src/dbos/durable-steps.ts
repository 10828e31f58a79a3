/**
 * Model calls and tool calls as DBOS steps. Inside a workflow, each call of
 * the wrapped `streamFn` and each execution of a wrapped tool is one
 * `DBOS.runStep`: the first execution runs it and DBOS records its result;
 * an execution of the workflow after a crash gets the recorded result back
 * without calling the model or running the tool again. The call in flight
 * when the worker died has no record: it runs again.
 *
 * Live, a model step forwards each chunk to the loop as it arrives (readers
 * see deltas while the step runs) and records the chunks, adjacent deltas
 * merged. Replayed, it emits the recorded chunks at once, muted for the
 * session writer (its `messageEnd` carries the whole message).
 *
 * Context: DBOS knows it is inside a step by the async context. What a live
 * step hands the loop (chunks, progress) is handed over in the workflow's
 * context (`outside`), so that the loop's next steps, started from those
 * callbacks, are steps of the workflow and not nested in this one.
 *
 * Step order: DBOS matches recorded results to calls by their order in the
 * workflow. The loop asks the model one call at a time, asks approvals in
 * call order, and starts tool calls in call order, so the order is the same
 * in every execution.
 */
import { AsyncResource } from 'node:async_hooks'
import { Observable, type Subscriber } from 'rxjs'
import type { ReplayGate } from '../agent/session-replay.js'
import type { ProviderChunk } from '../types/chunk.js'
import { errorText } from '../types/codec.js'
import { ProviderError, ProviderErrorInfo } from '../types/provider-error.js'
import type { StreamFn } from '../types/request.js'
import type { AgentTool, ToolOutput } from '../types/tool.js'
import type { DbosApi } from './sdk.js'

/** What a model step records: its chunks (deltas merged), and how the call ended. */
export interface ModelStepRecord {
  readonly chunks: readonly ProviderChunk[]
  /** The stream failed: its error (`info` when it was a classified provider error). */
  readonly error?: { readonly name: string; readonly message: string; readonly info?: ProviderErrorInfo }
  /** The loop let go of the call before it ended (a timeout, an abort): replayed, it is left open for the loop to let go again. */
  readonly cancelled?: boolean
}

/** Runs callbacks in the async context this is called in (the workflow's), wherever they are called from. */
function inWorkflowContext(): (run: () => unknown) => void {
  return AsyncResource.bind((run: () => unknown): void => void run())
}

/**
 * The chunks a model step records, adjacent text, thinking and argument
 * deltas of one block merged. A delta costs a type test and a string
 * concatenation (no object per delta), as in the session writer.
 */
class RecordedChunks {
  private readonly chunks: ProviderChunk[] = []
  private deltaType: 'textDelta' | 'thinkingDelta' | 'toolUseArgsDelta' | undefined
  private deltaId = ''
  private deltaText = ''

  push(chunk: ProviderChunk): void {
    const type = chunk.type
    if (type === 'textDelta' || type === 'thinkingDelta' || type === 'toolUseArgsDelta') {
      const id = type === 'toolUseArgsDelta' ? chunk.id : ''
      const text = type === 'toolUseArgsDelta' ? chunk.fragment : chunk.text
      if (this.deltaType === type && this.deltaId === id) {
        this.deltaText += text
        return
      }
      this.endDelta()
      this.deltaType = type
      this.deltaId = id
      this.deltaText = text
      return
    }
    this.endDelta()
    this.chunks.push(chunk)
  }

  /** The chunks so far (the open delta included). */
  done(): readonly ProviderChunk[] {
    this.endDelta()
    return this.chunks
  }

  private endDelta(): void {
    const type = this.deltaType
    if (type === undefined) return
    this.deltaType = undefined
    this.chunks.push(type === 'toolUseArgsDelta' ? { type, id: this.deltaId, fragment: this.deltaText } : { type, text: this.deltaText })
  }
}

function recordError(error: unknown): NonNullable<ModelStepRecord['error']> {
  const info = error instanceof ProviderError && ProviderErrorInfo.is(error.info) ? error.info : undefined
  const name = error instanceof Error ? error.name : 'Error'
  return info === undefined ? { name, message: errorText(error) } : { name, message: errorText(error), info }
}

function replayError(error: NonNullable<ModelStepRecord['error']>): Error {
  if (error.info !== undefined) return new ProviderError(error.info)
  const e = new Error(error.message)
  e.name = error.name
  return e
}

/**
 * `streamFn` with each call a DBOS step named `rxagent.model` (see the module
 * comment). Must be called inside a workflow.
 */
export function durableStreamFn(dbos: DbosApi, streamFn: StreamFn, gate: ReplayGate): StreamFn {
  return (request) =>
    new Observable<ProviderChunk>((subscriber) => {
      const outside = inWorkflowContext()
      let live: { readonly stop: () => void } | undefined
      let closed = false
      dbos
        .runStep(
          () =>
            new Promise<ModelStepRecord>((resolve) => {
              const recorded = new RecordedChunks()
              let ended = false
              const end = (record: Omit<ModelStepRecord, 'chunks'>): void => {
                if (ended) return
                ended = true
                resolve({ chunks: recorded.done(), ...record })
              }
              const inner = streamFn(request).subscribe({
                next: (chunk) => {
                  recorded.push(chunk)
                  outside(() => closed || subscriber.next(chunk))
                },
                error: (error: unknown) => {
                  end({ error: recordError(error) })
                  outside(() => closed || subscriber.error(error))
                },
                complete: () => {
                  end({})
                  outside(() => closed || subscriber.complete())
                },
              })
              live = {
                stop: () => {
                  inner.unsubscribe()
                  end({ cancelled: true })
                },
              }
              if (closed) live.stop()
            }),
          { name: 'rxagent.model' },
        )
        .then(
          (record) => {
            if (live !== undefined || closed) return
            replayRecord(record, subscriber, gate)
          },
          (error: unknown) => {
            if (!closed) subscriber.error(error)
          },
        )
      return () => {
        closed = true
        live?.stop()
      }
    })
}

/** Emits a recorded model step (muted for the session writer); a cancelled one is left open, as the loop left it. */
function replayRecord(record: ModelStepRecord, subscriber: Subscriber<ProviderChunk>, gate: ReplayGate): void {
  gate.mute(() => {
    for (const chunk of record.chunks) {
      if (subscriber.closed) return
      subscriber.next(chunk)
    }
  })
  if (record.cancelled === true) return
  if (record.error !== undefined) subscriber.error(replayError(record.error))
  else subscriber.complete()
}

/** What a tool step records: the tool's result, or its failure. */
type ToolStepRecord = { readonly value: ToolOutput | string } | { readonly error: { readonly name: string; readonly message: string } }

/**
 * `tool` with each execution a DBOS step named `rxagent.tool:<name>`; the
 * tool is given `idempotencyKey` = `key(toolCallId)`. Progress updates reach
 * the loop while the step runs live; a replayed step gives its result only.
 */
export function durableTool(dbos: DbosApi, tool: AgentTool, key: (toolCallId: string) => string): AgentTool {
  return {
    ...tool,
    execute(args, context) {
      return new Observable<ToolOutput | string>((subscriber) => {
        const outside = inWorkflowContext()
        let closed = false
        dbos
          .runStep(
            () =>
              new Promise<ToolStepRecord>((resolve) => {
                let returned
                try {
                  returned = tool.execute(args, { toolCallId: context.toolCallId, signal: context.signal, idempotencyKey: key(context.toolCallId) })
                } catch (error) {
                  return resolve({ error: { name: error instanceof Error ? error.name : 'Error', message: errorText(error) } })
                }
                const fail = (error: unknown) => resolve({ error: { name: error instanceof Error ? error.name : 'Error', message: errorText(error) } })
                if (returned instanceof Observable) {
                  let last: ToolOutput | string | undefined
                  returned.subscribe({
                    next: (value) => {
                      const update = last
                      if (update !== undefined) outside(() => closed || subscriber.next(update))
                      last = value
                    },
                    error: fail,
                    complete: () => (last === undefined ? fail(new Error(`tool '${tool.name}' completed without a result`)) : resolve({ value: last })),
                  })
                  return
                }
                Promise.resolve(returned).then((value) => resolve({ value }), fail)
              }),
            { name: `rxagent.tool:${tool.name}` },
          )
          .then(
            (record) => {
              if (closed) return
              if ('error' in record) {
                const e = new Error(record.error.message)
                e.name = record.error.name
                subscriber.error(e)
                return
              }
              subscriber.next(record.value)
              subscriber.complete()
            },
            (error: unknown) => {
              if (!closed) subscriber.error(error)
            },
          )
        return () => {
          closed = true
        }
      })
    },
  }
}
