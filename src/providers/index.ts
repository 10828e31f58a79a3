/**
 * rxagent/providers: real model APIs behind the `StreamFn` contract.
 * Separate from `rxagent` so that the core imports no HTTP code.
 */
export * from './sse.js'
export * from './http.js'
export * from './errors.js'
export * from './protocol.js'
export * from './replay.js'
export * from './models.js'
export * from './anthropic.js'
export * from './openai-responses.js'
export * from './openai-chat.js'
export * from './openai-compatible.js'
export * from './google.js'
export * from './route.js'
