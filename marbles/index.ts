/**
 * rxagent/marbles: test agents frame by frame.
 *
 * - `scriptedModel`: an offline model answering from a script (chunk arrays,
 *   marble timelines, or functions of the request); records every request.
 * - `reply`, `chunk`, `toolCallChunks`, `splitText`: build scripted answers.
 * - `runAgentMarbles`, `expectEvents`, `eventLabel`: assert a run's events as
 *   a marble diagram with readable labels.
 */
export * from './chunks.js'
export * from './scripted-model.js'
export * from './labels.js'
export * from './test-kit.js'
export * from './fold-chunks.js'
