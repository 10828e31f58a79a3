/**
 * A tool that runs another Agent: the parent's model delegates a task; the
 * child works with its own tools and limits; its progress streams to the
 * parent as tool updates; its final answer is the tool's result.
 *
 * Its child run can be followed from the parent: a forwarder of the parent
 * that is a {@link SubAgentFollower} (`otelForwarder` is one) is asked for a
 * forwarder of each child run, attached to the child for that run only. The
 * parent tells its sub-agent tools who follows (`withSubAgentParent`) only
 * when a follower is attached: otherwise nothing of this is on the path.
 */
import * as t from 'io-ts'
import { Observable } from 'rxjs'
import { defineTool } from '../tools/define-tool.js'
import { extractText } from '../types/content.js'
import type { AgentTool, ToolExecuteContext, ToolOutput } from '../types/tool.js'
import type { AgentRunEvent } from './agent-events.js'
import type { Agent } from './agent.js'

export interface SubAgentToolOptions {
  readonly name: string
  readonly description: string
  /** A fresh agent per call (its own transcript, tools, limits: `maxTurns`, policies). */
  readonly create: () => Agent
  /** The child's name for followers (the span `invoke_agent {agentName}`); default: the tool's `name`. */
  readonly agentName?: string
  readonly needsApproval?: boolean
  readonly timeoutMs?: number
}

/** A child run a sub-agent tool is about to start: where it comes from, and who it is. */
export interface SubAgentChild {
  /** The parent agent and its run, whose tool call the child answers. */
  readonly parentAgentId: string
  readonly parentRunId: string
  readonly toolCallId: string
  readonly toolName: string
  /** `SubAgentToolOptions.agentName`, or the tool's name. */
  readonly name: string
  /** The child agent's id (its events carry it). */
  readonly agentId: string
}

/**
 * A forwarder that follows sub-agents. Given to an Agent as a forwarder
 * (`forwarders`, `addForwarder`), it gets the agent's events as any
 * forwarder does, and is asked, for each child run a `subAgentTool` starts
 * in the agent's runs, for a forwarder of that child run (`undefined`: not
 * followed). The tool attaches it to the child before its run starts and
 * removes it once that run ended; it may itself be a follower (grandchildren).
 * A `followSubAgent` that throws is not followed (the call goes on).
 */
export interface SubAgentFollower {
  (event: AgentRunEvent): void
  readonly followSubAgent: (child: SubAgentChild) => ((event: AgentRunEvent) => void) | undefined
}

/** Whether `forward` follows sub-agents. */
export const isSubAgentFollower = (forward: (event: AgentRunEvent) => void): forward is SubAgentFollower =>
  typeof (forward as Partial<SubAgentFollower>).followSubAgent === 'function'

/** The parent run a sub-agent tool's call runs in, and who follows its children (a live set). */
export interface SubAgentParent {
  readonly agentId: string
  readonly runId: string
  readonly followers: ReadonlySet<SubAgentFollower>
}

type RunChild = (args: { task: string }, context: ToolExecuteContext, parent: SubAgentParent | undefined) => Observable<ToolOutput>
/** The sub-agent tools made here, by identity (a copy of one, say a durable wrapper, is not told its parent). */
const childRunners = new WeakMap<AgentTool, RunChild>()

/**
 * `tools`, each sub-agent tool among them told `parent` (a copy that follows
 * its children); `tools` itself when nothing follows.
 */
export function withSubAgentParent(tools: readonly AgentTool[], parent: SubAgentParent): readonly AgentTool[] {
  if (parent.followers.size === 0) return tools
  return tools.map((tool) => {
    const runChild = childRunners.get(tool)
    return runChild === undefined ? tool : { ...tool, execute: (args: unknown, context: ToolExecuteContext) => runChild(args as { task: string }, context, parent) }
  })
}

const TaskParameters = t.type({ task: t.string })

/**
 * The tool. Progress updates: one per child tool call started and per child
 * answer finished. The result is the child's last answer; `details` carries
 * its stop reason, usage and cost. Aborting the parent's call aborts the child.
 */
export function subAgentTool(options: SubAgentToolOptions): AgentTool<{ task: string }> {
  const runChild: RunChild = ({ task }, { signal, toolCallId }, parent) =>
    new Observable<ToolOutput>((subscriber) => {
      const child = options.create()
      const followed = parent === undefined ? [] : follow(child, parent, { toolCallId, toolName: options.name, name: options.agentName ?? options.name })
      // A follower's forwarder sees this run to its end (an abort included), then no other run of the child.
      const unfollow = (): void => followed.forEach((s) => s.unsubscribe())
      let run: ReturnType<Agent['prompt']>
      try {
        run = child.prompt(task)
      } catch (error) {
        unfollow()
        throw error
      }
      if (followed.length > 0) run.result.then(unfollow, unfollow)
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
    })
  const tool = defineTool({
    name: options.name,
    description: options.description,
    parameters: TaskParameters,
    ...(options.needsApproval === undefined ? {} : { needsApproval: options.needsApproval }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    execute: (args, context) => runChild(args, context, undefined),
  })
  childRunners.set(tool, runChild)
  return tool
}

/** Attaches each follower's forwarder of this child run to `child` (not yet running). */
function follow(child: Agent, parent: SubAgentParent, call: Pick<SubAgentChild, 'toolCallId' | 'toolName' | 'name'>): ReturnType<Agent['addForwarder']>[] {
  const link: SubAgentChild = { parentAgentId: parent.agentId, parentRunId: parent.runId, ...call, agentId: child.id }
  return [...parent.followers].flatMap((follower) => {
    let forward: ((event: AgentRunEvent) => void) | undefined
    try {
      forward = follower.followSubAgent(link)
    } catch {
      return []
    }
    if (forward === undefined) return []
    // Detached at the run's end, synchronously: a child reused at once is not followed again.
    const subscription = child.addForwarder((event) => {
      forward(event)
      if (event.type === 'agentEnd') subscription.unsubscribe()
    })
    return [subscription]
  })
}
