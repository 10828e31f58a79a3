/**
 * The Agent's states, kept for the process (see `resident`): one of each kind
 * a run builds — the fold of a run's entries by immer (`produce`, a copy of
 * the root frozen), and the per-delta snapshot of a streamed message
 * (`withStreamMessage`) — each built from each other kind, with a transcript
 * grown by a run (`appendMessages`).
 *
 * Between two runs nothing of the kind was alive (a new Agent's state is its
 * `initialAgentState`), so a full GC collected their hidden classes, and with
 * them the optimized code of the reducer, of immer's drafts and of the store
 * (`--trace-deopt`: "weak objects" on `finalize`, `set`, `createProxy`,
 * `prepareCopy`, `withStreamMessage`, `reduceAgentLog`, `record`, `stream`…);
 * each run then folded its first entries unoptimized. The classes built here
 * first also see every kind of value a run stores in their fields, so that no
 * run generalizes a field and throws code away either.
 *
 * Internal: not exported from the package.
 */
import { asyncScheduler } from 'rxjs'
import { resident } from '../rx/resident.js'
import { deepFreeze } from '../types/deep-freeze.js'
import { decodePrompts } from '../types/input.js'
import { assistantMessage, type AgentMessage, type AssistantMessage } from '../types/message.js'
import { modelSpec } from '../types/model.js'
import { residentToolAnswer } from '../stream/fold-residents.js'
import { AGENT_LOG_FORMAT, type AgentLogCommand } from './agent-log.js'
import { reduceAgentLog, stateOfInit, withStreamMessage } from './agent-reducer.js'
import { lazyAgentState, type AgentState } from './agent-state.js'
import { residentTranscript } from '../types/lazy-transcript.js'
import { StreamMarker } from './stream-marks.js'

/**
 * The init entry of the resident states here and of the resident store (`agent-store.ts`): an Agent
 * with no tools and no messages.
 *
 * Internal.
 */
export function residentInit(): Extract<AgentLogCommand, { type: 'init' }> {
  const model = modelSpec('resident', 'resident')
  return { type: 'init', version: AGENT_LOG_FORMAT, agentId: 'resident', systemPrompt: '', model, availableModels: [model], tools: [], messages: [] }
}

/** `value`, frozen all the way down. */
function frozen<T>(value: T): T {
  deepFreeze(value)
  return value
}

function residentStates(): readonly AgentState[] {
  const noTools = (): readonly never[] => []
  const answer = frozen(assistantMessage('a', { stopReason: 'toolUse' }))
  // A clock's timestamps, as a run's (a small integer would give the field a layout a run's time then replaces).
  const result: AgentMessage = frozen({ role: 'toolResult', toolCallId: 'c', toolName: 't', content: [{ type: 'text', text: 'r' }], isError: false, timestamp: Date.now() })
  // A streamed answer as the loop folds it, logged with its stream marks as a run logs it.
  const streamed = residentToolAnswer()
  // Kept itself, not only its marks: an Agent's store holds its own marker, so none was alive between
  // two Agents, and the first full GC after a process's warm-up runs threw away the code of the
  // store's per-event path (`record`, `recordEntry`, `commit`, `stream`, the marker's `now`…,
  // "weak objects"; agent-tools, in 3 of 3 processes after 30 warm-up runs, `--trace-deopt`).
  const marker = resident(new StreamMarker(asyncScheduler))
  marker.turnStart()
  marker.chunk({ type: 'textDelta', text: 'a' })
  const states: AgentState[] = [stateOfInit(residentInit(), noTools)]
  const fold = (entry: AgentLogCommand): void => void states.push(reduceAgentLog(states.at(-1)!, entry, noTools))
  const stream = (message: typeof answer | undefined): void => void states.push(withStreamMessage(states.at(-1)!, message))
  fold({ type: 'runStart', runId: 'resident', prompts: [] })
  fold({ type: 'agentStart' })
  // A prompt as `Agent.prompt` decodes it: a frozen user message, of a hidden class of its own.
  // Without one alive between runs, the code that had read a run's prompt (`TurnMeter.seeTimed`,
  // `withMessages`, `appendMessages`, the queues' `release`…) was compiled again after every full
  // GC (agent-tools 200 under callgrind, full GC before each of 6 runs: 2,549M -> 2,283M).
  fold({ type: 'messageEnd', message: decodePrompts('r', 'resident', Date.now())[0]! })
  stream(answer)
  stream(frozen(assistantMessage('ab')))
  fold({ type: 'messageEnd', message: answer })
  fold({ type: 'toolExecutionStart', toolCallId: 'c' })
  fold({ type: 'toolExecutionEnd', toolCallId: 'c' })
  fold({ type: 'messageEnd', message: result })
  stream(streamed)
  fold({ type: 'messageEnd', message: streamed, stream: marker.end() })
  stream(answer)
  fold({ type: 'agentEnd', stopReason: 'stop' })
  stream(undefined)
  return states
}

/**
 * The states of a run on a long transcript (`lazy-transcript.ts`): a class of their own (an
 * accessor for `messages`), with none alive between two runs either — a restored Agent's
 * state holds its transcript as an array until a run appends to it. The entries a run logs
 * without touching the transcript keep it lazy, as in a run. AGENT restored 60k, 6 runs
 * after a full GC under callgrind (TurboFan's share left out): 23.6M -> 23.1M instructions;
 * AGENT TOOLS 50, which never holds a transcript lazily, 4 runs: 116.0M -> 116.3M in JIT
 * code and builtins. (The same for the loop's lazy contexts, `turn-state.ts`, saved another
 * 0.9M at 60k but cost AGENT TOOLS 0.8–1.3M, on the loop's path every runtime shares: left out.)
 */
function residentLazyStates(): readonly AgentState[] {
  const init = stateOfInit(residentInit(), () => [])
  const prompt = decodePrompts('r', 'resident', Date.now())[0]!
  const states: AgentState[] = [lazyAgentState(init, residentTranscript(frozen(prompt)), undefined)]
  const fold = (entry: AgentLogCommand): void => void states.push(reduceAgentLog(states.at(-1)!, entry, () => []))
  const stream = (message: AssistantMessage | undefined): void => void states.push(withStreamMessage(states.at(-1)!, message))
  fold({ type: 'runStart', runId: 'resident', prompts: [] })
  fold({ type: 'agentStart' })
  stream(frozen(assistantMessage('a')))
  stream(frozen(assistantMessage('ab')))
  fold({ type: 'toolExecutionStart', toolCallId: 'c' })
  fold({ type: 'toolExecutionEnd', toolCallId: 'c' })
  stream(undefined)
  fold({ type: 'agentEnd', stopReason: 'stop' })
  return states
}

resident(residentStates())
resident(residentLazyStates())
