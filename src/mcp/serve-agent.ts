/**
 * An Agent as one tool, for serving over MCP: a call prompts the agent with
 * its `prompt` argument and returns the final answer. While the agent works,
 * each text delta and each tool start is a progress update (which
 * `serveMcp` sends as MCP progress notifications); aborting the call aborts
 * the run.
 */
import { Observable } from 'rxjs'
import * as t from 'io-ts'
import type { Agent } from '../agent/agent.js'
import { defineTool } from '../tools/define-tool.js'
import { withDescription } from '../tools/json-schema.js'
import { extractText, text } from '../types/content.js'
import type { AgentTool, ToolOutput } from '../types/tool.js'

/** What serving needs of an Agent. */
export type ServableAgent = Pick<Agent, 'prompt' | 'abort'>

/** How an Agent is served. */
export interface ServedAgent {
  /**
   * The agent, or a function making one per call. One agent keeps one
   * conversation across calls, and a call while it runs is an error result
   * ("busy"); a function gives every call a fresh conversation.
   */
  readonly agent: ServableAgent | (() => ServableAgent)
  /** The tool's name (default `ask`). */
  readonly name?: string
  /** The tool's description (default: "Asks the agent; returns its final answer."). */
  readonly description?: string
}

const Parameters = t.type({ prompt: withDescription(t.string, 'What to ask the agent') })

/** `served` as a tool with one `prompt` parameter. */
export function agentAsTool(served: ServedAgent): AgentTool<{ prompt: string }> {
  return defineTool({
    name: served.name ?? 'ask',
    description: served.description ?? 'Asks the agent; returns its final answer.',
    parameters: Parameters,
    execute: ({ prompt }, { signal }) =>
      new Observable<ToolOutput>((subscriber) => {
        const agent = typeof served.agent === 'function' ? served.agent() : served.agent
        const run = agent.prompt(prompt)
        const onAbort = (): void => void agent.abort()
        signal.addEventListener('abort', onAbort, { once: true })
        let answer = ''
        const subscription = run.events$.subscribe({
          next: (event) => {
            if (event.type === 'messageUpdate' && event.chunk.type === 'textDelta') {
              subscriber.next({ content: [text(event.chunk.text)], details: { kind: 'textDelta' } })
            } else if (event.type === 'toolExecutionStart') {
              subscriber.next({ content: [text(`tool: ${event.toolName}`)], details: { kind: 'toolStart', toolName: event.toolName } })
            } else if (event.type === 'messageEnd' && event.message.role === 'assistant') {
              answer = extractText(event.message.content)
            } else if (event.type === 'agentEnd') {
              const r = event.result
              if (r.stopReason === 'error' || r.stopReason === 'aborted') subscriber.error(new Error(`The agent stopped (${r.stopReason}): ${r.error ?? 'no details'}`))
              else {
                subscriber.next({ content: [text(answer)], details: { stopReason: r.stopReason } })
                subscriber.complete()
              }
            }
          },
          error: (error: unknown) => subscriber.error(error),
        })
        return () => {
          signal.removeEventListener('abort', onAbort)
          subscription.unsubscribe()
        }
      }),
  })
}
