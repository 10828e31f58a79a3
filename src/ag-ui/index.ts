/**
 * rxagent/ag-ui: rxagent runs for web frontends speaking AG-UI (the protocol
 * of `@ag-ui/client`, CopilotKit…). Needs `@ag-ui/core` (an optional peer
 * dependency); nothing else in rxagent imports it.
 *
 * - `toAgUi(options)`: an operator, rxagent events → AG-UI events.
 * - `decodeRunAgentInput(input)`: a `RunAgentInput` → transcript, system text, client tools.
 * - `runAgUi(input, factory)`: one AG-UI run (an interop Observable any rxjs copy accepts).
 * - `loopRunner(config)`, `agentRunner(options)`: run factories over `agentLoopContinue` and `Agent`.
 * - `agUiHandler(factory)`: a `node:http` endpoint streaming the events as SSE, resumable
 *   through the session log (`sessionStore`, `GET ?threadId=`; `sessionRunToAgUi`).
 */
export { toAgUi, type ToAgUiOptions } from './to-ag-ui.js'
export { decodeRunAgentInput, RunAgentInputCodec, AgUiMessage, AgUiTool, type AgUiRunInput, type RunAgentInputData } from './input.js'
export { clientTools, clientToolsPolicy, CLIENT_TOOLS_POLICY, PENDING_ON_CLIENT } from './client-tools.js'
export { type RunProgress } from './progress.js'
export { runAgUi, loopRunner, agentRunner, type AgUiRun, type AgUiRunFactory, type RunEvents, type RunAgUiOptions } from './run.js'
export { agUiHandler, sseFrame, type AgUiHandlerOptions } from './http.js'
export { sessionRunToAgUi, latestRun, type PositionedAgUiEvent } from './session-replay.js'
