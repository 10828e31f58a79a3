/**
 * rxagent/otel and sub-agents: the forwarder attached to the parent Agent
 * traces a `subAgentTool`'s child run under the call's `execute_tool` span,
 * and ends it as aborted when the parent is aborted mid-child.
 */
import { describe, expect, it } from 'vitest'
import * as t from 'io-ts'
import { NEVER, map, timer } from 'rxjs'
import { SpanStatusCode } from '@opentelemetry/api'
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { Agent, subAgentTool } from '../src/agent/index.js'
import { defineTool } from '../src/tools/define-tool.js'
import { modelSpec } from '../src/types/model.js'
import { reply, runAgentMarbles, scriptedModel } from '../marbles/index.js'
import { ATTR, otelForwarder } from '../src/otel/index.js'
import { idOf, ms, parentOf, telemetry } from './support/otel-telemetry.js'

const work = defineTool({ name: 'work', description: 'Works for n frames.', parameters: t.type({ n: t.number }), execute: ({ n }) => timer(n).pipe(map(() => `worked ${n}`)) })

/** The span tree as `name` lines, children indented under their parent, in start order. */
function tree(spans: readonly ReadableSpan[]): string[] {
  const lines: string[] = []
  const walk = (parent: string | undefined, depth: number): void => {
    for (const span of spans.filter((s) => parentOf(s) === parent).sort((a, b) => ms(a.startTime) - ms(b.startTime))) {
      lines.push(`${'  '.repeat(depth)}${span.name}`)
      walk(idOf(span), depth + 1)
    }
  }
  walk(undefined, 0)
  return lines
}

describe('otelForwarder and sub-agents', () => {
  it('a sub-agent run is traced under its execute_tool span, its own chat and execute_tool spans beneath; the child is not followed after its run', () => {
    const tel = telemetry()
    let child: Agent | undefined
    runAgentMarbles(({ scheduler }) => {
      const childModel = scriptedModel([reply.toolCalls([{ id: 'k1', name: 'work', args: { n: 5 } }]), reply.text('found it'), reply.text('again')], { model: modelSpec('p', 'small') })
      child = new Agent({ id: 'researcher-1', systemPrompt: '', model: childModel.model, streamFn: childModel.streamFn, tools: [work] })
      const research = subAgentTool({ name: 'research', description: 'Researches.', create: () => child! })
      const model = scriptedModel([reply.toolCalls([{ id: 'c1', name: 'research', args: { task: 'look' } }]), reply.text('done')], { model: modelSpec('p', 'big') })
      const agent = new Agent({ id: 'boss', systemPrompt: '', model: model.model, streamFn: model.streamFn, tools: [research], forwarders: [otelForwarder({ ...tel.options, agentName: 'boss', scheduler })] })
      agent.prompt('go')
    })
    expect(tree(tel.spans())).toEqual([
      'invoke_agent boss',
      '  chat big',
      '  execute_tool research',
      '    invoke_agent research',
      '      chat small',
      '      execute_tool work',
      '      chat small',
      '  chat big',
    ])
    const call = tel.one('execute_tool research')
    const sub = tel.one('invoke_agent research')
    expect(sub.attributes).toMatchObject({ [ATTR.agentName]: 'research', [ATTR.conversationId]: 'researcher-1', [ATTR.stopReason]: 'stop' })
    expect(ms(sub.startTime)).toBeGreaterThanOrEqual(ms(call.startTime))
    expect(ms(sub.endTime)).toBeLessThanOrEqual(ms(call.endTime))
    expect(ms(tel.one('execute_tool work').duration)).toBe(5)
    expect(tel.spans().every((s) => s.ended)).toBe(true)

    // The forwarder was the child's for that run only.
    const before = tel.spans().length
    runAgentMarbles(() => void child!.prompt('more'))
    expect(tel.spans()).toHaveLength(before)
  })

  it('an abort of the parent mid-child ends the child run and its open spans as aborted', async () => {
    const tel = telemetry()
    let childSignal: AbortSignal | undefined
    let parent: Agent | undefined
    const hang = defineTool({
      name: 'hang',
      description: 'Never ends.',
      parameters: t.type({}),
      execute: (_args, { signal }) => {
        childSignal = signal
        queueMicrotask(() => void parent!.abort())
        return NEVER
      },
    })
    const research = subAgentTool({
      name: 'research',
      description: 'Researches.',
      create: () => {
        const m = scriptedModel([reply.toolCalls([{ id: 'k1', name: 'hang', args: {} }])])
        return new Agent({ id: 'researcher-2', systemPrompt: '', model: m.model, streamFn: m.streamFn, tools: [hang] })
      },
    })
    const model = scriptedModel([reply.toolCalls([{ id: 'c1', name: 'research', args: { task: 'look' } }])])
    parent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, tools: [research], forwarders: [otelForwarder(tel.options)] })
    expect((await parent.prompt('go')).stopReason).toBe('aborted')
    expect(childSignal?.aborted).toBe(true)
    expect(tree(tel.spans())).toEqual(['invoke_agent rxagent', '  chat scripted-1', '  execute_tool research', '    invoke_agent research', '      chat scripted-1', '      execute_tool hang'])
    const status = (name: string) => [name, tel.one(name).attributes[ATTR.errorType], tel.one(name).status.code]
    expect(['invoke_agent rxagent', 'execute_tool research', 'invoke_agent research', 'execute_tool hang'].map(status)).toEqual([
      ['invoke_agent rxagent', 'aborted', SpanStatusCode.ERROR],
      ['execute_tool research', 'tool_error', SpanStatusCode.ERROR], // the cancelled call's error result
      ['invoke_agent research', 'aborted', SpanStatusCode.ERROR],
      ['execute_tool hang', 'tool_error', SpanStatusCode.ERROR],
    ])
    expect(tel.spans().every((s) => s.ended)).toBe(true)
  })
})
