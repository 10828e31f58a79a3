/** Shared test fixtures: small tools and a loop config over a scripted model. */
import * as t from 'io-ts'
import { timer, map, type Observable } from 'rxjs'
import { defineTool } from '../src/tools/define-tool.js'
import { userMessage, type AgentMessage } from '../src/types/message.js'
import type { AgentContext } from '../src/turn/turn-state.js'
import type { AgentTool } from '../src/types/tool.js'
import type { AgentEvent } from '../src/types/event.js'
import type { ToolResultMessage } from '../src/types/message.js'

/** A tool answering after `ms` virtual milliseconds with `answer`. */
export function delayedTool(name: string, ms: number, answer = `${name} done`, log?: string[]): AgentTool {
  return defineTool({
    name,
    description: `answers after ${ms} ms`,
    parameters: t.type({}),
    execute: (_args, { signal }) => {
      log?.push(`start:${name}`)
      signal.addEventListener('abort', () => log?.push(`abort:${name}`))
      return timer(ms).pipe(map(() => answer))
    },
  })
}

export const addTool = defineTool({
  name: 'add',
  description: 'Adds two integers.',
  parameters: t.type({ a: t.Int, b: t.Int }),
  execute: ({ a, b }) => String(a + b),
})

export function context(tools: readonly AgentTool[] = [], messages: readonly AgentMessage[] = []): AgentContext {
  return { systemPrompt: 'You are a test.', messages, tools }
}

export const hello = userMessage('hello')

/** Subscribes and collects what is emitted synchronously (or, under runAgentMarbles, by the end of virtual time). */
export function collect(run$: Observable<AgentEvent>): AgentEvent[] {
  const events: AgentEvent[] = []
  run$.subscribe((e) => events.push(e))
  return events
}

export const resultOf = (events: readonly AgentEvent[]) => {
  const end = events.at(-1)
  if (end?.type !== 'agentEnd') throw new Error(`the run did not end: last event ${end?.type}`)
  return end.result
}

export const toolResultsOf = (events: readonly AgentEvent[]): ToolResultMessage[] =>
  events.flatMap((e) => (e.type === 'messageEnd' && e.message.role === 'toolResult' ? [e.message] : []))

export const textOf = (m: { content: readonly { type: string; text?: string }[] }) => m.content.map((c) => c.text ?? '').join('')

