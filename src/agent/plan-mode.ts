/** Plan mode: what a run is given while the agent plans rather than acts. */
import type { AgentState } from './agent-state.js'
import type { RunContext } from './structured-output.js'

/** The addendum plan mode adds to the system prompt unless `planModeAddendum` replaces it. */
export const DEFAULT_PLAN_MODE_ADDENDUM =
  'You are in plan mode. Investigate with the read-only tools you have and propose a step-by-step plan; do not make changes. The tools that change things are not available until the plan is approved.'

/** The system prompt, transcript and tools a run starts from; plan mode narrows the tools to those needing no approval and adds its addendum. */
export function runContextOf(state: AgentState, addendum = DEFAULT_PLAN_MODE_ADDENDUM): RunContext {
  if (!state.planMode) return { systemPrompt: state.systemPrompt, messages: state.messages, tools: state.tools }
  return {
    systemPrompt: `${state.systemPrompt}\n\n${addendum}`,
    messages: state.messages,
    tools: state.tools.filter((t) => t.needsApproval !== true),
  }
}
