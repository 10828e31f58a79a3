/**
 * rxagent/marbles: test agents frame by frame.
 *
 * - `scriptedModel`: an offline model answering from a script (chunk arrays,
 *   marble timelines, or functions of the request); records every request.
 * - `reply`, `chunk`, `toolCallChunks`, `splitText`: build scripted answers.
 * - `runAgentMarbles`, `expectEvents`, `eventLabel`: assert a run's events as
 *   a marble diagram with readable labels.
 */
export { splitText, toolCallChunks, chunk, type ReplyOptions, type ScriptedCall, reply } from './chunks.js'
export {
  scriptedModel,
  type ScriptedResponse,
  type ScriptedModelOptions,
  type ScriptedModel,
} from './scripted-model.js'
export { eventLabel } from './labels.js'
export { agentTestScheduler, timelineOf, runAgentMarbles, type AgentMarbleHelpers } from './test-kit.js'
export { foldChunks, splitBytes } from './fold-chunks.js'
