/**
 * Runs one tool call as an Observable that never errors: whatever the tool
 * does (returns, rejects, throws, errors, hangs, returns garbage), the stream
 * ends with exactly one `end` carrying the result the model will see.
 */
import { isThenable } from '../rx/user-callback.js'
import { from, isObservable, Observable, timer, type SchedulerLike } from 'rxjs'
import { linked } from '../rx/linked-observer.js'
import { resident, residentFor } from '../rx/resident.js'
import { errorText, reportErrors } from '../types/codec.js'
import { text } from '../types/content.js'
import { ToolOutput, type AgentTool, type ToolExecuteContext } from '../types/tool.js'

/** A progress update, or the one result. */
export type ToolRunEvent =
  | { readonly type: 'update'; readonly output: ToolOutput }
  | { readonly type: 'end'; readonly output: ToolOutput; readonly isError: boolean }

export interface RunToolOptions {
  readonly toolCallId: string
  /** Abandon the call after this long; the tool's signal is aborted. */
  readonly timeoutMs?: number
  /** Where time comes from (timeouts, the progress/result split). */
  readonly scheduler: SchedulerLike
}

/** An error result with one text block. */
export const errorOutput = (message: string): ToolOutput => ({ content: [text(message)] })

function normalize(tool: AgentTool, value: unknown): { output: ToolOutput; isError: boolean } {
  // Frozen here, where it is made (the result message freezes it anyway, see `frozenResult`): the
  // message's freeze then finds it frozen, with no walk of its own (TOOLS 200: see `executionStart`).
  if (typeof value === 'string') return { output: { content: Object.freeze([Object.freeze(text(value))]) }, isError: false }
  const decoded = ToolOutput.decode(value)
  if (decoded._tag === 'Right') return { output: decoded.right, isError: false }
  const problems = reportErrors(decoded.left).map((i) => i.message)
  return {
    output: errorOutput(`Tool '${tool.name}' returned an invalid result (expected a string or { content, details? }):\n${problems.join('\n')}`),
    isError: true,
  }
}

/** How a call went once `execute` returned: already ended (a plain value, a throw), or still running. */
export type ToolStart =
  | { readonly ended: { readonly output: ToolOutput; readonly isError: boolean } }
  | { readonly running: Observable<ToolRunEvent> }

/**
 * Calls `tool.execute(args)` now. A plain value (or a throw) is the result at
 * once, with no Observable and no scheduling: most tools are synchronous, and
 * a turn dispatches several. A Promise or an Observable is returned as
 * `running`, to be subscribed at once (see {@link runTool} for what it emits);
 * unsubscribing it aborts the tool's signal.
 */
export function startTool(tool: AgentTool, args: unknown, options: RunToolOptions): ToolStart {
  const context = new ExecuteContext(options.toolCallId)
  // The arguments' hidden classes (their frozen ones, from the model's JSON) outlive the run with
  // the last arguments of each tool: when a full GC between two runs found none alive, it threw
  // away the optimized code that had inlined the tool (CallBatch.execute, startTool: "deoptimizing
  // … weak objects" in 3 of 18 runs, TOOLS 200 with a full GC before each run), compiled again in
  // the next run (30–75 ms of a background thread each time, on a loaded 2-core host).
  if (typeof args === 'object' && args !== null) residentFor(tool, args)
  let returned: unknown
  try {
    returned = tool.execute(args, context)
  } catch (error) {
    return { ended: failure(tool, error) }
  }
  if (!isObservable(returned) && !isThenable(returned)) return { ended: normalize(tool, returned) }
  return { running: following(tool, returned, options, (reason) => abortContext(context, reason)) }
}

/** Aborts the signal of an {@link ExecuteContext} (made now, or when a tool first reads it). */
let abortContext: (context: ExecuteContext, reason: string) => void

/**
 * The context `execute` is given: `toolCallId` an own field, `signal` a
 * getter of the class (so not an own enumerable property: a spread of the
 * context does not copy it). Its AbortController is created on first use:
 * most tools never look at their signal, and an AbortController costs more
 * than the rest of a simple call. A tool that first looks after the abort
 * (say, after an await) still finds it aborted. A class rather than an object
 * literal with a getter and an abort closure per call (with three other
 * per-turn savings, TOOLS 200 turns: 401 -> 391 M instructions per run,
 * callgrind, node --single-threaded).
 */
class ExecuteContext implements ToolExecuteContext {
  #controller: AbortController | undefined
  #abortedWith: Error | undefined

  constructor(readonly toolCallId: string) {}

  /** Aborted when the run is aborted, the call times out, or the call is interrupted. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController()
      if (this.#abortedWith !== undefined) this.#controller.abort(this.#abortedWith)
    }
    return this.#controller.signal
  }

  static {
    abortContext = (context, reason) => {
      context.#abortedWith ??= new Error(reason)
      context.#controller?.abort(context.#abortedWith)
    }
  }
}

const failure = (tool: AgentTool, error: unknown): { output: ToolOutput; isError: boolean } => ({
  output: errorOutput(`Tool '${tool.name}' failed: ${errorText(error)}`),
  isError: true,
})

/**
 * Runs `tool.execute(args)` on subscription. A value, a Promise or an
 * Observable are all accepted. For an Observable, a value followed by
 * completion in the same moment is the result; a value that is still the
 * latest when the scheduler next gets a turn is emitted as progress (and, if
 * it stays the last, is the result too). Unsubscribing aborts the tool's signal.
 *
 * ```
 * execute: --p----r|     (p: progress, r: result)
 * result:  --u----(e|)   (u: update p, e: end r)
 * ```
 */
export function runTool(tool: AgentTool, args: unknown, options: RunToolOptions): Observable<ToolRunEvent> {
  return new Observable<ToolRunEvent>((subscriber) => {
    const start = startTool(tool, args, options)
    if ('running' in start) return start.running.subscribe(subscriber)
    subscriber.next({ type: 'end', ...start.ended })
    subscriber.complete()
    return undefined
  })
}

/** What a Promise or an Observable returned by `execute` emits, as tool run events. */
function following(
  tool: AgentTool,
  returned: PromiseLike<unknown> | Observable<unknown>,
  options: RunToolOptions,
  abort: (reason: string) => void,
): Observable<ToolRunEvent> {
  return new Observable<ToolRunEvent>((subscriber) => {
    let ended = false
    const end = (output: ToolOutput, isError: boolean): void => {
      if (ended) return
      ended = true
      subscriber.next({ type: 'end', output, isError })
      subscriber.complete()
    }
    const endWith = (value: unknown): void => {
      const { output, isError } = normalize(tool, value)
      end(output, isError)
    }
    const fail = (error: unknown): void => {
      const { output, isError } = failure(tool, error)
      end(output, isError)
    }

    subscriber.add(() => {
      if (!ended) abort(`tool call '${options.toolCallId}' was cancelled`)
    })

    if (options.timeoutMs !== undefined) {
      const ms = options.timeoutMs
      subscriber.add(
        timer(ms, options.scheduler).subscribe(() => {
          abort(`timed out after ${ms} ms`)
          end(errorOutput(`Tool '${tool.name}' timed out after ${ms} ms.`), true)
        }),
      )
    }

    // A Promise has one value, the result: no progress to tell apart.
    if (!isObservable(returned)) {
      from(returned).subscribe(linked<unknown>(subscriber, { next: endWith, error: fail }))
      return
    }

    const none = Symbol('none')
    let latest: unknown = none
    let flushedLatest = true
    let synchronous = true
    const flush = (): void => {
      if (ended || flushedLatest) return
      flushedLatest = true
      const { output, isError } = normalize(tool, latest)
      // A malformed progress value is dropped; only a malformed result is an error.
      if (!isError) subscriber.next({ type: 'update', output })
    }
    // The latest value is progress if it is still the latest when the scheduler next gets a turn.
    const flushLater = (): void => {
      const value = latest
      const action = options.scheduler.schedule(() => {
        subscriber.remove(action)
        if (latest === value) flush()
      })
      subscriber.add(action)
    }
    returned.subscribe(
      linked<unknown>(subscriber, {
        next: (value) => {
          // The previous value is not the last one after all: it is progress.
          flush()
          latest = value
          flushedLatest = false
          if (!synchronous) flushLater()
        },
        error: fail,
        complete: () => (latest === none ? end(errorOutput(`Tool '${tool.name}' completed without a result.`), true) : endWith(latest)),
      }),
    )
    synchronous = false
    // Values emitted synchronously without completing: the last of them may be progress.
    if (!ended && !flushedLatest) flushLater()
  })
}

// Its hidden class outlives a run (see `resident`): without it, every full GC between two runs
// threw away the optimized code of the constructor and of the code that inlined it.
resident(new ExecuteContext(''))
