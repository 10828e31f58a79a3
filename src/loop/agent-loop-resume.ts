/**
 * Resuming a run that stopped between its model's answer and the results of
 * that answer's tool calls: a run that waited for an approval when its
 * process exited, and whose session another process opened.
 */
import * as t from 'io-ts'
import { asyncScheduler, defer, type Observable } from 'rxjs'
import type { AgentContext } from '../turn/turn-state.js'
import { NonNegativeInteger } from '../types/codec.js'
import type { AgentEvent } from '../types/event.js'
import { decodeContext, decodeInput } from '../types/input.js'
import { toolCallsOf, type AgentMessage, type AssistantMessage } from '../types/message.js'
import { repaired, runLoop, type AgentLoopConfig } from './agent-loop.js'

/** The last assistant message of `messages` (before any tool results and custom messages), and where it is. */
function lastAnswer(messages: readonly AgentMessage[]): { readonly index: number; readonly message: AssistantMessage } | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!
    if (m.role === 'assistant') return { index: i, message: m }
    if (m.role === 'user') return undefined
  }
  return undefined
}

/** Where a resumed run stands in its own count of turns. */
export const ResumeOptionsCodec = t.partial({
  /**
   * The index of the turn being resumed (default 0): the run's turns are
   * numbered on from it, and `maxTurns` counts the turns before it — a run
   * suspended in its third turn (index 2) and resumed with `turnIndex: 2`
   * stops under `maxTurns: 3` after the resumed turn, as it would have
   * without the suspension.
   */
  turnIndex: NonNegativeInteger,
})
/** Where a resumed run stands in its own count of turns (see {@link ResumeOptionsCodec}). */
export type ResumeOptions = t.TypeOf<typeof ResumeOptionsCodec>

/**
 * Resumes from a transcript that ends with an assistant message whose tool
 * calls are not all answered (followed by the results some of them got):
 * the first turn dispatches the unanswered calls — policies, approval,
 * execution, exactly as `dispatchTools` does — without calling the model,
 * their results join the transcript after those already there, and the
 * loop goes on to the model as after any tool batch. Calls that have a
 * result are not run again. When every call has its result, this is
 * `agentLoopContinue`.
 *
 * Only the transcript before that assistant message is repaired (see
 * `repairTranscript`): the unanswered calls at its end are what this runs.
 *
 * ```
 * transcript: … user, assistant(a, b), toolResult(a)
 * events:     agentStart, turnStart, (approval, execution of b), messageStart/End(result b), turnEnd, turnStart, (model…)
 * ```
 *
 * @param options where the run stands: `turnIndex`, the resumed turn's index (see {@link ResumeOptions}).
 * @throws InvalidInputError when the context or the options do not decode (see `agentLoop`); an Error when the transcript does not end with an assistant message's calls or their results.
 */
export function agentLoopResume(context: AgentContext, config: AgentLoopConfig, options: ResumeOptions = {}): Observable<AgentEvent> {
  const decoded = decodeContext(context, 'agentLoopResume', (config.scheduler ?? asyncScheduler).now())
  const turnIndex = decodeInput(ResumeOptionsCodec, options, 'agentLoopResume', 'options', 'options').turnIndex ?? 0
  return defer(() => {
    const found = lastAnswer(decoded.messages)
    if (found === undefined) throw new Error('agentLoopResume: the transcript does not end with an assistant message and its tool results')
    const answered = new Set<string>()
    for (const m of decoded.messages.slice(found.index + 1)) if (m.role === 'toolResult') answered.add(m.toolCallId)
    const calls = toolCallsOf(found.message)
    const open = calls.filter((call) => !answered.has(call.id))
    const before = repaired({ ...decoded, messages: decoded.messages.slice(0, found.index) })
    const settled: AgentContext = { ...before, messages: Object.freeze([...before.messages, ...decoded.messages.slice(found.index)]) }
    if (open.length === 0) {
      if (calls.length === 0) throw new Error("agentLoopResume: the last message is the assistant's and has no tool calls to resume; add a user message first")
      return runLoop(settled, [], config, undefined, false, turnIndex)
    }
    const unanswered = new Set(open.map((call) => call.id))
    // The answer as far as this turn is concerned: its text and the calls still to run (the transcript keeps the whole message).
    const answer: AssistantMessage = Object.freeze({
      ...found.message,
      content: Object.freeze(found.message.content.filter((block) => block.type !== 'toolCall' || unanswered.has(block.id))),
    })
    return runLoop(settled, [], config, answer, false, turnIndex)
  })
}
