/**
 * rxagent: a reactive runtime for LLM agent loops.
 *
 * - Data model: io-ts codecs for content, messages, usage, models, stream
 *   chunks, events; static types derived from them.
 * - `agentLoop` / `agentLoopContinue`: a run as a cold Observable of events.
 * - `defineTool`: tools with io-ts parameters and derived JSON Schema.
 * - Policies and approval: the loop's four policy slots and the approval gate.
 *
 * Stages live in `rxagent/operators`; the test kit in `rxagent/marbles`.
 */
export * from './types/index.js'
export * from './policy/policy.js'
export * from './policy/approval.js'
export * from './tools/define-tool.js'
export * from './tools/json-schema.js'
export * from './tools/run-tool.js'
export * from './turn/turn-state.js'
export { TurnProtocolError } from './turn/turn-protocol.js'
export * from './rx/linked-observer.js'
export * from './loop/agent-loop.js'
export * from './loop/message-queue.js'
export * from './loop/transcript.js'
export * from './context/index.js'
export * from './agent/index.js'
export * from './policy/builtin/index.js'
