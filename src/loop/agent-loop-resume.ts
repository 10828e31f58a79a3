/**
 * Resuming a run that stopped between its model's answer and the results of
 * that answer's tool calls: a run that waited for an approval when its
 * process exited, and whose session another process opened.
 */
import { asyncScheduler, defer, type Observable } from 'rxjs'
import type { AgentContext } from '../turn/turn-state.js'
import type { AgentEvent } from '../types/event.js'
import { decodeContext } from '../types/input.js'
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
 * @throws InvalidInputError when the context does not decode (see `agentLoop`); an Error when the transcript does not end with an assistant message's calls or their results.
 */
export function agentLoopResume(context: AgentContext, config: AgentLoopConfig): Observable<AgentEvent> {
  const decoded = decodeContext(context, 'agentLoopResume', (config.scheduler ?? asyncScheduler).now())
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
      return runLoop(settled, [], config)
    }
    const unanswered = new Set(open.map((call) => call.id))
    // The answer as far as this turn is concerned: its text and the calls still to run (the transcript keeps the whole message).
    const answer: AssistantMessage = Object.freeze({
      ...found.message,
      content: Object.freeze(found.message.content.filter((block) => block.type !== 'toolCall' || unanswered.has(block.id))),
    })
    return runLoop(settled, [], config, answer)
  })
}
