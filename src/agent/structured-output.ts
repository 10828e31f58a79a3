/**
 * Structured output: a run whose answer is a value of an io-ts codec — given
 * by calling a synthetic `respond` tool, or in the API's own JSON-schema mode
 * — with invalid answers fed back to the model a bounded number of times.
 */
import * as t from 'io-ts'
import type { Observable } from 'rxjs'
import { agentLoop, type AgentLoopConfig } from '../loop/agent-loop.js'
import { Verdict, type PostLoopPolicy, type PostTurnPolicy } from '../policy/policy.js'
import { defineTool } from '../tools/define-tool.js'
import { isKind } from '../types/codec-kind.js'
import { errorText } from '../types/codec.js'
import { extractText } from '../types/content.js'
import type { AgentEvent } from '../types/event.js'
import { decodePrompts, type PromptInput } from '../types/input.js'
import { userMessage, type AgentMessage } from '../types/message.js'
import type { ModelSpec } from '../types/model.js'
import type { AgentTool } from '../types/tool.js'
import { StructuredOutputError, type AgentRun, type CallOptions, type StructuredOptions, type StructuredRun } from './agent-options.js'

/** What a run is given: the context it starts from and its configuration. */
export type RunContext = { systemPrompt: string; messages: readonly AgentMessage[]; tools: readonly AgentTool[] }
/** Starts a run of the Agent with a loop built from the run's context and configuration. */
export type StartRun = (loop: (context: RunContext, config: AgentLoopConfig) => Observable<AgentEvent>, call: CallOptions, prompts: readonly AgentMessage[]) => AgentRun

/** What structured output needs of the Agent. */
export interface StructuredHost {
  readonly now: () => number
  readonly model: ModelSpec
  readonly nativeStructuredOutput: ((model: ModelSpec) => boolean) | undefined
  readonly start: StartRun
}

/** See {@link Agent.structured}. */
export function structuredRun<C extends t.Mixed>(host: StructuredHost, codec: C, input: PromptInput, options: StructuredOptions): StructuredRun<t.TypeOf<C>> {
  const maxRetries = options.maxRetries ?? 3
  const name = options.toolName ?? 'respond'
  const wrapped = !isObjectCodec(codec)
  const parameters = wrapped ? t.type({ value: codec }) : codec
  let answer: { value: unknown } | undefined
  let failures = 0
  let reminders = 0
  let lastProblem = 'the model never called the tool'
  const respond = defineTool({
    name,
    description: options.description ?? 'Gives your final answer. Call it exactly once, when you have the answer; its arguments are the answer.',
    parameters,
    execute: (args: t.TypeOf<typeof parameters>) => {
      answer = { value: wrapped ? (args as { value: unknown }).value : args }
      return 'Answer recorded.'
    },
  })
  const done: PostTurnPolicy = {
    name: 'structuredOutput',
    evaluate: (view) => {
      for (const r of view.toolResults) {
        if (r.toolName === name && r.isError) {
          failures++
          lastProblem = r.content.map((c) => (c.type === 'text' ? c.text : '')).join('')
        }
      }
      if (answer !== undefined) return Verdict.stop('structured output received')
      if (failures > maxRetries) return Verdict.stop(`no valid structured output after ${failures} invalid attempts`)
      return Verdict.continue
    },
  }
  const remind: PostLoopPolicy = {
    name: 'structuredOutput',
    evaluate: () => {
      if (answer !== undefined) return Verdict.continue
      if (reminders >= maxRetries) return Verdict.stop('the model answered without calling the respond tool')
      reminders++
      return Verdict.inject(userMessage(`Give your final answer by calling the \`${name}\` tool; its arguments must match its schema.`, host.now()))
    },
  }
  const messages = decodePrompts(input, 'Agent.structured', host.now())
  const native = options.mode === 'native' || (options.mode !== 'tool' && (host.nativeStructuredOutput ?? defaultNativeStructuredOutput)(host.model))
  // Native: the API constrains the answer to the schema; the last answer's text is decoded, and a
  // failure goes back as a user message with the decode errors.
  const checkAnswer: PostLoopPolicy = {
    name: 'structuredOutput',
    evaluate: (view) => {
      const raw = extractText(view.message.content).trim()
      let json: unknown
      try {
        json = JSON.parse(stripFence(raw))
      } catch (error) {
        lastProblem = `the answer is not JSON (${errorText(error)})`
      }
      if (json !== undefined) {
        const decoded = respond.decodeArguments(json)
        if (decoded._tag === 'Right') {
          answer = { value: wrapped ? (decoded.right as { value: unknown }).value : decoded.right }
          return Verdict.continue
        }
        lastProblem = `the answer does not match the schema:\n${decoded.left.map((l) => `  - ${l}`).join('\n')}`
      }
      if (failures >= maxRetries) return Verdict.stop(`no valid structured output after ${failures + 1} invalid answers`)
      failures++
      return Verdict.inject(userMessage(`Your answer was invalid: ${lastProblem}\nAnswer again with only the JSON.`, host.now()))
    },
  }
  const run = native
    ? host.start(
        (context, config) =>
          agentLoop(messages, context, {
            ...config,
            streamOptions: { ...config.streamOptions, responseFormat: { name, schema: respond.schema } },
            policies: { ...config.policies, postLoop: [...(config.policies?.postLoop ?? []), checkAnswer] },
          }),
        options.call ?? {},
        messages,
      )
    : host.start(
        (context, config) =>
          agentLoop(
            messages,
            { ...context, systemPrompt: `${context.systemPrompt}\n\nWhen you have the answer, call the \`${name}\` tool with it.`, tools: [...context.tools, respond] },
            {
              ...config,
              policies: { ...config.policies, postTurn: [...(config.policies?.postTurn ?? []), done], postLoop: [...(config.policies?.postLoop ?? []), remind] },
            },
          ),
        options.call ?? {},
        messages,
      )
  const value = run.result.then((result) => {
    if (answer !== undefined) return answer.value as t.TypeOf<C>
    throw new StructuredOutputError(`no valid structured output (${result.error ?? result.stopReason}); last problem: ${lastProblem}`, result)
  })
  value.catch(() => undefined)
  return {
    runId: run.runId,
    events$: run.events$,
    value,
    then: (onFulfilled, onRejected) => value.then(onFulfilled, onRejected),
  }
}

const defaultNativeStructuredOutput = (model: ModelSpec): boolean => model.provider === 'openai' || model.provider === 'google'

/** Models sometimes wrap JSON in a Markdown fence even in JSON mode. */
function stripFence(text: string): string {
  const m = /^```(?:json)?\s*([\s\S]*?)\s*```$/.exec(text)
  return m === null ? text : m[1]!
}

/** Whether `codec` decodes objects, so its arguments can be the tool's arguments as they are. */
function isObjectCodec(codec: t.Mixed): boolean {
  if (isKind(codec, 'InterfaceType', 'PartialType', 'ExactType', 'StrictType')) return true
  if (isKind(codec, 'IntersectionType')) return (codec.types as t.Mixed[]).every(isObjectCodec)
  if (isKind(codec, 'RefinementType')) return isObjectCodec(codec.type as t.Mixed)
  return false
}
