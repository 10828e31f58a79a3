/** Shared test fixtures: small tools and a loop config over a scripted model. */
import * as t from 'io-ts'
import { timer, map, type Observable } from 'rxjs'
import { defineTool } from '../src/tools/define-tool.js'
import { userMessage } from '../src/types/message.js'
import type { AgentContext } from '../src/turn/turn-state.js'
import type { AgentTool } from '../src/types/tool.js'

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

export function context(tools: readonly AgentTool[] = [], messages = []): AgentContext {
  return { systemPrompt: 'You are a test.', messages, tools }
}

export const hello = userMessage('hello')

export type { Observable }
