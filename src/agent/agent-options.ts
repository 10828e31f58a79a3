/**
 * What builds an Agent and what its calls return: the options, the run
 * handles, the errors. The Agent itself is in `agent.ts`.
 */
import * as t from 'io-ts'
import type { Observable, SchedulerLike } from 'rxjs'
import { deepFreeze } from '../types/deep-freeze.js'
import { appendMessages } from '../types/growing-transcript.js'
import { decodeInput, MessagesInput, optional } from '../types/input.js'
import { AgentTools } from '../types/tool.js'
import type { QueueMode } from '../loop/message-queue.js'
import type { ConvertToLlm, ModelRoute, OverflowRecovery, RetryOptions, ToolExecution, TransformContext } from '../types/run-config.js'
import type { ApproveTool } from '../policy/approval.js'
import type { Policies } from '../policy/policy.js'
import type { BudgetLimits, DenyRule, LoopDetectionOptions } from '../policy/builtin/index.js'
import type { TurnState } from '../turn/turn-state.js'
import type { ModelSpec } from '../types/model.js'
import type { StreamFn, StreamOptions } from '../types/request.js'
import type { AgentResult } from '../types/result.js'
import type { AgentTool } from '../types/tool.js'
import type { AgentMessage } from '../types/message.js'
import type { AgentRunEvent } from './agent-events.js'
import type { CheckpointStore } from './checkpoint.js'
import type { MetricsCollector } from './metrics.js'
import type { SlidingWindowOptions } from '../context/sliding-window.js'

/** Which tool calls need a human's approval. */
export type ApprovalMode =
  /** Every call asks `approveTool`. */
  | 'enabled'
  /** Only calls of tools marked `needsApproval` ask (default). */
  | 'smart'
  /** Nothing asks. */
  | 'bypassed'


/** How many tool calls an Agent runs at a time unless `toolExecution` says otherwise. */
export const DEFAULT_AGENT_TOOL_CONCURRENCY = 16

/** Options of one call (`prompt`, `continue`), layered over the agent's. */
export interface CallOptions {
  /** Merged over the agent's `streamOptions` for this run. */
  readonly streamOptions?: StreamOptions
}

/** What builds an Agent. Only `systemPrompt`, `model` and `streamFn` are required. */
export interface AgentOptions {
  readonly systemPrompt: string
  readonly model: ModelSpec
  readonly streamFn: StreamFn
  readonly tools?: readonly AgentTool[]
  /** A transcript to start from. */
  readonly messages?: readonly AgentMessage[]
  /**
   * What to do with a transcript (`messages`, a checkpoint's) that breaks the
   * tool-call invariants: `repair` (default) drops orphan and duplicate
   * results, moves misplaced ones after their call and answers unanswered
   * calls with an error result ("no result was recorded"); `reject` throws an
   * `InvalidTranscriptError` listing every problem. See `repairTranscript`.
   */
  readonly invalidTranscript?: 'repair' | 'reject'
  /** A stable id (default: generated, unique in the process). */
  readonly id?: string
  /** Models `cycleModel` goes through (the current one is added if missing). */
  readonly availableModels?: readonly ModelRoute[]
  /** Models that take over a turn whose call failed with a retryable error after its retries. */
  readonly fallback?: readonly ModelRoute[]
  readonly retry?: RetryOptions | false
  readonly streamOptions?: StreamOptions
  /**
   * Called before every request; its key overrides the provider's own
   * (rotation, vaults). May return a Promise; a synchronous one keeps the
   * call in virtual time.
   */
  readonly getApiKey?: (provider: string) => string | undefined | PromiseLike<string | undefined>
  readonly convertToLlm?: ConvertToLlm
  /**
   * What the model sees each turn. Default: a sliding window (`slidingWindow`:
   * 100k tokens, 50k after an overflow — or 3/4 and 1/2 of the model's
   * `contextWindow` when that is smaller —, the first 2 messages kept, a tool
   * call never separated from its results), configured by `contextWindow`;
   * each time it drops messages a `compaction` event says what. `false`:
   * the whole transcript, always.
   */
  readonly transformContext?: TransformContext | false
  /** Options of the default sliding window. */
  readonly contextWindow?: Omit<SlidingWindowOptions, 'onCompaction'>
  /**
   * Asked once per turn on a context-overflow error. Default: the sliding
   * window in overflow mode (`slidingWindowRecovery`); `false`: fail the turn.
   */
  readonly recoverOverflow?: ((state: TurnState) => OverflowRecovery | undefined) | false
  /** Default `oneAtATime`. */
  readonly steeringMode?: QueueMode
  /** Default `oneAtATime`. */
  readonly followUpMode?: QueueMode
  readonly steeringDelivery?: 'afterBatch' | 'interrupt'
  /** Default `smart`. */
  readonly approvalMode?: ApprovalMode
  /**
   * Asked when the approval mode requires it. Without one, such calls are
   * rejected with a reason. Either way a call waiting for a decision is in
   * `state.pendingApprovals` and `agent.resolveApproval` can decide it first;
   * `'resolveApproval'`: no callback, the decision comes from
   * `agent.resolveApproval` alone (another process, a UI).
   */
  readonly approveTool?: ApproveTool | 'resolveApproval'
  /** User policies, run after the built-in ones below. */
  readonly policies?: Policies
  readonly maxTurns?: number
  /** Stops before a turn that would start over budget (see `budgetPolicy`). */
  readonly budget?: BudgetLimits
  /** Tools the model may not call (see `toolDenyList`). */
  readonly denyTools?: readonly string[] | DenyRule
  /** Stops or nudges a model repeating the same call (see `loopDetection`). */
  readonly loopDetection?: LoopDetectionOptions
  /** Default: concurrent, at most {@link DEFAULT_AGENT_TOOL_CONCURRENCY} (16) calls at a time. */
  readonly toolExecution?: ToolExecution
  readonly toolTimeoutMs?: number
  /** Tool calls of one message that run at all; the others get an error result saying so. Default 128 (`Infinity`: no cap). */
  readonly maxToolCallsPerMessage?: number
  /** How deep a tool call's parsed arguments may nest; deeper ones are not run. Default 64. */
  readonly maxArgumentDepth?: number
  /** Joins the system prompt in plan mode. */
  readonly planModeAddendum?: string
  /** Told each turn's metrics; a collector that throws or rejects is reported as a `listenerError`. */
  readonly metrics?: MetricsCollector
  /** Called with every event, isolated like listeners. */
  readonly forwarders?: readonly ((event: AgentRunEvent) => void)[]
  readonly checkpointStore?: CheckpointStore
  /** Where time comes from; the TestScheduler's in tests. */
  readonly scheduler?: SchedulerLike
  /** `error` (default): a prompt while running throws. `followUp`: it is queued as a follow-up of the current run. */
  readonly whileRunning?: 'error' | 'followUp'
  /** Whether a model has a native JSON-schema output mode (default: providers `openai` and `google`). */
  readonly nativeStructuredOutput?: (model: ModelSpec) => boolean
  /** Told when a listener, forwarder or metrics collector throws or rejects (default: nothing beyond the `listenerError` event). */
  readonly onListenerError?: (error: unknown, event: AgentRunEvent) => void
}

/**
 * A run: awaitable for its result, observable for its events. A late
 * subscriber to `events$` catches up on every event since the run's start
 * except the deltas: of a message still streaming it gets the latest
 * `messageUpdate` (whose `message` is the answer so far), of a call still
 * running its latest `toolExecutionUpdate` (see `run-replay.ts`).
 */
export interface AgentRun extends PromiseLike<AgentResult> {
  readonly runId: string
  readonly events$: Observable<AgentRunEvent>
  readonly result: Promise<AgentResult>
}

/** A prompt while a run is in progress. */
export class AgentBusyError extends Error {
  override readonly name = 'AgentBusyError'
}

/** The model gave no valid structured answer within the retries. */
export class StructuredOutputError extends Error {
  override readonly name = 'StructuredOutputError'
  constructor(
    message: string,
    readonly result: AgentResult,
  ) {
    super(message)
  }
}

/** Options of {@link Agent.structured}. */
export interface StructuredOptions {
  /** Invalid answers fed back before giving up (default 3). */
  readonly maxRetries?: number
  /** The synthetic tool's name (default `respond`). */
  readonly toolName?: string
  readonly description?: string
  readonly call?: CallOptions
  /**
   * `tool`: a synthetic tool the model calls with the answer. `native`: the
   * API's own JSON-schema mode (`StreamOptions.responseFormat`). `auto`
   * (default): native where the agent's `nativeStructuredOutput` says the
   * model has it (OpenAI and Gemini by default), the tool elsewhere.
   */
  readonly mode?: 'auto' | 'tool' | 'native'
}

/** A structured run: awaitable for the decoded value, observable for its events. */
export interface StructuredRun<T> extends PromiseLike<T> {
  readonly runId: string
  readonly events$: Observable<AgentRunEvent>
  readonly value: Promise<T>
}



const EMPTY: readonly AgentMessage[] = Object.freeze([])

/** `options` with its messages, tools and system prompt decoded. @throws InvalidInputError naming the path of a bad one (`messages[1].content`). */
export function decodeAgentOptions(options: AgentOptions, now: number): AgentOptions {
  const codec = t.type({ systemPrompt: t.string, messages: optional(MessagesInput(now)), tools: optional(AgentTools) })
  // Frozen first, as every message the Agent's transcript takes in is: a frozen message is checked once, here, not again on every run.
  // Without recursion: a message may hold data of any depth (a tool's `details`).
  if (Array.isArray(options.messages)) for (const m of options.messages as readonly unknown[]) deepFreeze(m)
  const input = Array.isArray(options.messages) ? { ...options, messages: growing(options.messages) } : options
  return { ...options, ...decodeInput(codec, input, 'new Agent', 'options') }
}

/**
 * A list of message objects as a frozen growing transcript (`appendMessages`):
 * decoded, checked and estimated once at construction, the same array is the
 * state's transcript, and a run's appends share its backing, so the first run
 * finds those facts in O(1) and copies the history once, not once per holder.
 * Anything else (a value to report) is left to the decoder as is.
 */
function growing(list: readonly unknown[]): readonly unknown[] {
  for (const m of list) if (typeof m !== 'object' || m === null) return list
  return appendMessages(EMPTY, list as readonly AgentMessage[])
}
