/**
 * rxagent/operators: the stages a turn is made of, one per file, each an
 * RxJS operator over `TurnItem`s. `defaultTurn` (in `rxagent`) composes them;
 * compose your own to insert, replace or wrap a stage.
 */
export * from './on-turn-state.js'
export * from './until-aborted.js'
export * from './pre-turn-policy.js'
export * from './start-turn.js'
export * from './transform-context.js'
export * from './retry-stream.js'
export * from './call-model.js'
export * from './accumulate-message.js'
export * from './stream-llm.js'
export * from './dispatch-tools.js'
export * from './end-turn.js'
export * from './post-turn-policy.js'
export * from './poll-steering.js'
export * from './decide-continuation.js'
export * from './post-loop-policy.js'
export * from './poll-follow-up.js'
export * from './map-messages.js'
