/**
 * What the crash and lease children run: a scripted model whose next answer
 * depends only on the transcript (so a process that reopens a crashed session
 * goes on where the log says it is), streamed asynchronously chunk by chunk,
 * and three tools that record every execution in a file (one JSON line per
 * start and end, keyed by the tool call id: the idempotency key the tests
 * check "not run again" with).
 *
 * The full script, per prompt: (0) some text, then `note` and `slow` (which
 * takes a while); (1) some text, then `deploy` (which needs approval);
 * (2) a longer final text. The short script (many sessions at once): (0)
 * `note`; (1) a final text.
 */
import { appendFileSync } from 'node:fs'
import { randomUUID } from 'node:crypto'
import * as t from 'io-ts'
import { concatMap, from, map, timer, type Observable } from 'rxjs'
import { defineTool } from '../../../src/tools/define-tool.js'
import type { ProviderChunk } from '../../../src/types/chunk.js'
import type { LlmMessage } from '../../../src/types/message.js'
import { modelSpec } from '../../../src/types/model.js'
import type { LlmRequest, StreamFn } from '../../../src/types/request.js'
import type { AgentTool } from '../../../src/types/tool.js'
import { reply } from '../../../marbles/chunks.js'

export const SYSTEM_PROMPT = 'You are the crash-test agent.'
export const MODEL = modelSpec('scripted', 'crash-1')
export const FINAL_TEXT = 'All done: the notes are checked, the slow job finished and the deploy went out.'
export const SHORT_FINAL_TEXT = 'Noted, and done.'

/** The tools that need approval: in a durable session such a call runs only once its decision is committed, so it never runs twice. */
export const GATED_TOOLS: readonly string[] = ['deploy']

/** One line of the executions file. */
export interface Execution {
  readonly id: string
  readonly name: string
  readonly phase: 'start' | 'end' | 'abort'
  readonly pid: number
}

export type Script = 'full' | 'short'

/** How far the current prompt's script is: the answers the model completed since the last user message (an `aborted` or failed answer is redone). */
export function stepOf(messages: readonly LlmMessage[]): number {
  let last = messages.length - 1
  while (last >= 0 && messages[last]!.role !== 'user') last--
  return messages.slice(last + 1).filter((m) => m.role === 'assistant' && (m.stopReason === 'toolUse' || m.stopReason === 'stop')).length
}

/** The answer for `step`; tool call ids are unique per answer (a redone answer calls with new ids). */
export function answerFor(script: Script, step: number): ProviderChunk[] {
  const id = (name: string) => `${name}-${step}-${randomUUID().slice(0, 8)}`
  if (script === 'short') {
    return step === 0 ? reply.toolCalls([{ id: id('note'), name: 'note', args: { text: 'short' } }], { text: 'Noting. ', deltas: 3 }) : reply.text(SHORT_FINAL_TEXT, { deltas: 4 })
  }
  if (step === 0) {
    return reply.toolCalls(
      [
        { id: id('note'), name: 'note', args: { text: 'first' }, fragments: 3 },
        { id: id('slow'), name: 'slow', args: { ms: 150 }, fragments: 2 },
      ],
      { text: 'Checking the notes first, and starting the slow job. ', deltas: 10 },
    )
  }
  if (step === 1) return reply.toolCalls([{ id: id('deploy'), name: 'deploy', args: { target: 'prod' }, fragments: 2 }], { text: 'Now the deploy. ', deltas: 8 })
  return reply.text(FINAL_TEXT, { deltas: 24 })
}

/** The scripted model: each chunk `delayMs` after the one before (real time: the children run on the clock). */
export function scenarioModel(script: Script, delayMs: number): { readonly streamFn: StreamFn; readonly model: typeof MODEL } {
  const streamFn = (request: LlmRequest): Observable<ProviderChunk> =>
    from(answerFor(script, stepOf(request.messages))).pipe(concatMap((chunk) => timer(delayMs).pipe(map(() => chunk))))
  return { streamFn, model: MODEL }
}

/** The tools, recording into `executionsFile` (and telling `onRecord` after each line is written). */
export function scenarioTools(executionsFile: string, onRecord?: (execution: Execution) => void): AgentTool[] {
  const record = (id: string, name: string, phase: Execution['phase']) => {
    const line: Execution = { id, name, phase, pid: process.pid }
    appendFileSync(executionsFile, JSON.stringify(line) + '\n')
    onRecord?.(line)
  }
  const note = defineTool({
    name: 'note',
    description: 'Writes a note.',
    parameters: t.type({ text: t.string }),
    execute: ({ text }, { toolCallId }) => {
      record(toolCallId, 'note', 'start')
      record(toolCallId, 'note', 'end')
      return `noted ${text}`
    },
  })
  const slow = defineTool({
    name: 'slow',
    description: 'Takes a while.',
    parameters: t.type({ ms: t.number }),
    execute: ({ ms }, { toolCallId, signal }) => {
      record(toolCallId, 'slow', 'start')
      signal.addEventListener('abort', () => record(toolCallId, 'slow', 'abort'))
      return timer(ms).pipe(
        map(() => {
          record(toolCallId, 'slow', 'end')
          return `slow done after ${ms} ms`
        }),
      )
    },
  })
  const deploy = defineTool({
    name: 'deploy',
    description: 'Deploys (needs approval).',
    parameters: t.type({ target: t.string }),
    needsApproval: true,
    execute: ({ target }, { toolCallId }) => {
      record(toolCallId, 'deploy', 'start')
      record(toolCallId, 'deploy', 'end')
      return `deployed to ${target}`
    },
  })
  return [note, slow, deploy]
}
