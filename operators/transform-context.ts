import { isAsyncAnswer } from '../src/rx/user-callback.js'
import { from, map, Observable, take, defaultIfEmpty, catchError, of } from 'rxjs'
import type { ObservableInput } from 'rxjs'
import { isLlmMessage, type AgentMessage, type LlmMessage } from '../src/types/message.js'
import { draftState, hasNoCustomMessages, nextState, type TurnItem, type TurnOperator, type TurnState } from '../src/turn/turn-state.js'
import type { ConvertToLlm, TransformContext } from '../src/types/run-config.js'
import { onTurnState } from './on-turn-state.js'
import { lazyTranscriptOf, transcriptTransformOf } from '../src/types/lazy-transcript.js'
import { errorText } from '../src/types/codec.js'
import { abortedState, untilAborted, type AbortOption } from './until-aborted.js'

export type { ConvertToLlm, TransformContext } from '../src/types/run-config.js'

/** The default conversion: custom messages never reach a model. Without any, the transcript is passed as is (no copy). */
export const defaultConvertToLlm: ConvertToLlm = (messages) =>
  hasNoCustomMessages(messages) ? (messages as readonly LlmMessage[]) : messages.filter(isLlmMessage)

export interface TransformContextOptions extends AbortOption {
  readonly transform?: TransformContext
  readonly convertToLlm?: ConvertToLlm
}

/**
 * Computes `llmMessages`, the context this turn sends: `convertToLlm(transform(transcript))`
 * (nothing for a turn that has its answer already: the first of `agentLoopResume`).
 * A failing transform stops the run with stopReason `error` and says so; an
 * abort while an asynchronous transform is pending cancels it and stops the
 * run with `aborted` (see {@link untilAborted}).
 *
 * ```
 * source: --S|
 * result: --S'|        S'.llmMessages set
 * ```
 */
export function transformContext(options: TransformContextOptions = {}): TurnOperator {
  return options.transform === undefined && options.convertToLlm === undefined && options.abort === undefined ? plainTransformContext : transformContextOf(options)
}

function transformContextOf(options: TransformContextOptions): TurnOperator {
  const convert = options.convertToLlm ?? defaultConvertToLlm
  const failed = (state: TurnState, error: unknown): TurnState =>
    nextState(state, {
      stop: { reason: 'error', message: `transformContext failed: ${errorText(error)}` },
    })
  const done = (state: TurnState, messages: readonly AgentMessage[]): TurnState => {
    try {
      const llmMessages = convert(messages)
      const next = draftState(state)
      next.llmMessages = llmMessages
      return Object.freeze(next)
    } catch (error) {
      return nextState(state, {
        stop: { reason: 'error', message: `convertToLlm failed: ${errorText(error)}` },
      })
    }
  }
  return onTurnState((state): TurnItem | Observable<TurnItem> => {
    // A resumed turn (`agentLoopResume`) sends nothing to the model.
    if (state.assistant !== undefined) return state
    if (options.transform === undefined) return done(state, state.context.messages)
    let out: readonly AgentMessage[] | ObservableInput<readonly AgentMessage[]>
    try {
      const contextWindow = state.model.contextWindow
      const info = contextWindow === undefined ? { turnIndex: state.turnIndex } : { turnIndex: state.turnIndex, contextWindow }
      // A long transcript held lazily goes to the default window without its array being made (`lazy-transcript.ts`).
      const lazy = lazyTranscriptOf(state.context)
      const window = lazy === undefined ? undefined : transcriptTransformOf(options.transform)
      out = window !== undefined && lazy !== undefined ? window(lazy, info) : options.transform(state.context.messages, info)
    } catch (error) {
      return failed(state, error)
    }
    if (!isAsyncAnswer<readonly AgentMessage[]>(out)) return done(state, out as readonly AgentMessage[])
    return from(out).pipe(
      take(1),
      map((messages) => done(state, messages)),
      defaultIfEmpty(failed(state, new Error('it completed without a value'))),
      catchError((error: unknown) => of(failed(state, error))),
      untilAborted<TurnItem>(options.abort, () => [abortedState(state, 'the context transform')]),
    )
  }, { stage: 'transformContext' })
}

// Without options (the default conversion, no transform, no abort): one operator serves every run.
const plainTransformContext: TurnOperator = transformContextOf({})
