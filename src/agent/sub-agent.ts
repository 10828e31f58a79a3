/**
 * A tool that runs another Agent: the parent's model delegates a task; the
 * child works with its own tools and limits; its progress streams to the
 * parent as tool updates; its final answer is the tool's result.
 */
import * as t from 'io-ts'
import { Observable } from 'rxjs'
import { defineTool } from '../tools/define-tool.js'
import { extractText } from '../types/content.js'
import type { AgentTool, ToolOutput } from '../types/tool.js'
import type { Agent } from './agent.js'

export interface SubAgentToolOptions {
  readonly name: string
  readonly description: string
  /** A fresh agent per call (its own transcript, tools, limits: `maxTurns`, policies). */
  readonly create: () => Agent
  readonly needsApproval?: boolean
  readonly timeoutMs?: number
}

const TaskParameters = t.type({ task: t.string })

/**
 * The tool. Progress updates: one per child tool call started and per child
 * answer finished. The result is the child's last answer; `details` carries
 * its stop reason, usage and cost. Aborting the parent's call aborts the child.
 */
export function subAgentTool(options: SubAgentToolOptions): AgentTool<{ task: string }> {
  return defineTool({
    name: options.name,
    description: options.description,
    parameters: TaskParameters,
    ...(options.needsApproval === undefined ? {} : { needsApproval: options.needsApproval }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    execute: ({ task }, { signal }) =>
      new Observable<ToolOutput>((subscriber) => {
        const child = options.create()
        const run = child.prompt(task)
        let last = ''
        const onAbort = (): void => void child.abort()
        signal.addEventListener('abort', onAbort, { once: true })
        const subscription = run.events$.subscribe({
          next: (event) => {
            if (event.type === 'toolExecutionStart') {
              subscriber.next({ content: [{ type: 'text', text: `[${child.id}] → ${event.toolName}` }] })
            } else if (event.type === 'messageEnd' && event.message.role === 'assistant') {
              last = extractText(event.message.content)
              if (last !== '') subscriber.next({ content: [{ type: 'text', text: `[${child.id}] ${last}` }] })
            } else if (event.type === 'agentEnd') {
              const r = event.result
              const failed = r.stopReason === 'error' || r.stopReason === 'aborted'
              const text = failed ? `The sub-agent failed (${r.stopReason}): ${r.error ?? 'no details'}${last === '' ? '' : `\nIts last answer: ${last}`}` : last
              subscriber.next({ content: [{ type: 'text', text }], details: { stopReason: r.stopReason, usage: r.usage, cost: r.cost } })
              if (failed) subscriber.error(new Error(text))
              else subscriber.complete()
            }
          },
          error: (error: unknown) => subscriber.error(error),
        })
        return () => {
          signal.removeEventListener('abort', onAbort)
          subscription.unsubscribe()
          if (child.isRunning) void child.abort()
        }
      }),
  })
}
