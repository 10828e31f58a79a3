/**
 * Tools the frontend runs. AG-UI sends them in `RunAgentInput.tools`; the
 * model may call them like any tool, and the run then ends with the call left
 * for the client: it runs the tool and sends its result in the next run's
 * messages. Here a client tool is an `AgentTool` whose call is answered at
 * once by a placeholder (never sent to the client: the next request carries
 * the client's own result instead), and a post-turn policy stops the run after
 * the turn that called one, so the other calls of the batch still run.
 */
import { right } from 'fp-ts/lib/Either.js'
import type { PostTurnPolicy } from '../policy/policy.js'
import { Verdict } from '../policy/policy.js'
import type { JsonObject } from '../types/codec.js'
import type { AgentTool } from '../types/tool.js'
import type { AgUiTool } from './input.js'

/** The policy's name, in `policyDecision` events and `AgentResult.stoppedBy`. */
export const CLIENT_TOOLS_POLICY = 'ag-ui client tools'

/** What a client tool's placeholder result carries in `details`. */
export const PENDING_ON_CLIENT = 'ag-ui: answered by the client'

const isObject = (u: unknown): u is JsonObject => typeof u === 'object' && u !== null && !Array.isArray(u)

/** The client's tools as rxagent tools (JSON Schema as sent; arguments passed on as the model wrote them). */
export function clientTools(tools: readonly AgUiTool[]): AgentTool[] {
  return tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    schema: isObject(tool.parameters) ? tool.parameters : { type: 'object', properties: {} },
    decodeArguments: (raw: unknown) => right(raw),
    execute: () => ({ content: [{ type: 'text', text: 'This tool runs in the client; its result comes with the next request.' }], details: PENDING_ON_CLIENT }),
  }))
}

/** Stops the run after a turn that called one of `names`: the client answers those calls. */
export function clientToolsPolicy(names: ReadonlySet<string>): PostTurnPolicy {
  return {
    name: CLIENT_TOOLS_POLICY,
    evaluate: ({ toolResults }) => {
      const pending = toolResults.filter((r) => names.has(r.toolName)).map((r) => r.toolCallId)
      return pending.length === 0 ? Verdict.continue : Verdict.stop(`waiting for the client to run ${pending.join(', ')}`)
    },
  }
}
