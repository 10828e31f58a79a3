/**
 * rxagent/operators: the stages a turn is made of, one per file, each an
 * RxJS operator over `TurnItem`s. `defaultTurn` (in `rxagent`) composes them;
 * compose your own to insert, replace or wrap a stage.
 */
export { onTurnState, type OnTurnStateOptions } from './on-turn-state.js'
export { untilAborted, abortedState, type AbortOption } from './until-aborted.js'
export { preTurnPolicy } from './pre-turn-policy.js'
export { startTurn } from './start-turn.js'
export {
  transformContext,
  type TransformContext,
  type ConvertToLlm,
  defaultConvertToLlm,
  type TransformContextOptions,
} from './transform-context.js'
export { retryStream, type RetryOptions } from './retry-stream.js'
export { callModel, type ModelRoute, type OverflowRecovery, type CallModelOptions } from './call-model.js'
export { accumulateMessage, type AccumulateMessageOptions } from './accumulate-message.js'
export { streamLlm, type StreamLlmOptions } from './stream-llm.js'
export { dispatchTools, type ToolExecution, type DispatchToolsOptions } from './dispatch-tools.js'
export { endTurn } from './end-turn.js'
export { postTurnPolicy } from './post-turn-policy.js'
export { pollSteering } from './poll-steering.js'
export { decideContinuation } from './decide-continuation.js'
export { postLoopPolicy } from './post-loop-policy.js'
export { pollFollowUp } from './poll-follow-up.js'
export { mapMessages } from './map-messages.js'
