/**
 * `agentLoopResume`: a run that stopped between an answer and its tool
 * results goes on from there — the unanswered calls are dispatched without
 * a model call, the answered ones are not run again, then the model.
 */
import { describe, expect, it } from 'vitest'
import * as t from 'io-ts'
import { lastValueFrom, map, timer, toArray } from 'rxjs'
import { agentLoopResume } from '../src/loop/agent-loop-resume.js'
import type { AgentLoopConfig } from '../src/loop/agent-loop.js'
import { defineTool } from '../src/tools/define-tool.js'
import { text } from '../src/types/content.js'
import { assistantMessage, userMessage, type AgentMessage, type AssistantMessage, type ToolResultMessage } from '../src/types/message.js'
import { chunk, reply, runAgentMarbles, scriptedModel } from '../marbles/index.js'

const ran: string[] = []
const work = defineTool({
  name: 'work',
  description: 'Works for 3 frames.',
  parameters: t.type({ n: t.number }),
  execute: ({ n }) => {
    ran.push(`work ${n}`)
    return timer(3).pipe(map(() => `worked ${n}`))
  },
})
const answer = (ids: readonly string[]): AssistantMessage => ({
  ...assistantMessage([text('on it'), ...ids.map((id, n) => ({ type: 'toolCall' as const, id, name: 'work', arguments: { n } }))], { stopReason: 'toolUse' }),
})
const result = (id: string, out: string): ToolResultMessage => ({ role: 'toolResult', toolCallId: id, toolName: 'work', content: [text(out)], isError: false, timestamp: 0 })

describe('agentLoopResume', () => {
  it('dispatches only the unanswered calls of the last answer, without a model call, then asks the model', () => {
    ran.length = 0
    const model = scriptedModel([{ marbles: '-s-a-(p|)', values: { s: chunk.start(), a: chunk.text('done'), p: chunk.stop() } }])
    const messages: AgentMessage[] = [userMessage('go', 0), answer(['c0', 'c1', 'c2']), result('c0', 'worked 0')]
    runAgentMarbles(({ expectTimeline, scheduler }) => {
      const config: AgentLoopConfig = { model: model.model, streamFn: model.streamFn, scheduler }
      expectTimeline(agentLoopResume({ systemPrompt: '', messages, tools: [work] }, config)).toBe(`
        0 agentStart, turnStart:0, toolStart:c1, toolStart:c2
        3 toolEnd:c1, toolEnd:c2, msgStart:toolResult, msgEnd:toolResult:c1, msgStart:toolResult, msgEnd:toolResult:c2, turnEnd:0, turnStart:1
        4 msgStart:assistant
        6 textDelta:"done"
        8 msgEnd:assistant:stop, turnEnd:1, agentEnd:stop, |
      `)
    })
    expect(ran).toEqual(['work 1', 'work 2'])
    expect(model.requests).toHaveLength(1)
    // The model sees every call answered once, in call order.
    expect(model.requests[0]!.messages.filter((m) => m.role === 'toolResult').map((m) => (m as ToolResultMessage).toolCallId)).toEqual(['c0', 'c1', 'c2'])
  })

  it('asks the approver about the unanswered calls as dispatchTools does', async () => {
    const model = scriptedModel([reply.text('ok')])
    const asked: string[] = []
    const config: AgentLoopConfig = {
      model: model.model,
      streamFn: model.streamFn,
      approveTool: (request) => {
        asked.push(request.toolCall.id)
        return { approved: false, reason: 'no' }
      },
    }
    const events = await lastValueFrom(agentLoopResume({ systemPrompt: '', messages: [userMessage('go', 0), answer(['x'])], tools: [work] }, config).pipe(toArray()))
    expect(asked).toEqual(['x'])
    const end = events.at(-1)
    expect(end?.type === 'agentEnd' && end.result.messages.map((m) => m.role)).toEqual(['toolResult', 'assistant'])
    expect(end?.type === 'agentEnd' && (end.result.messages[0] as ToolResultMessage).isError).toBe(true)
  })

  it('with every call answered, continues to the model; refuses a transcript it cannot resume', async () => {
    const model = scriptedModel([reply.text('ok')])
    const config: AgentLoopConfig = { model: model.model, streamFn: model.streamFn }
    const events = await lastValueFrom(agentLoopResume({ systemPrompt: '', messages: [userMessage('go', 0), answer(['c0']), result('c0', 'w')], tools: [work] }, config).pipe(toArray()))
    expect(events.filter((e) => e.type === 'toolExecutionStart')).toHaveLength(0)
    expect(model.requests).toHaveLength(1)
    await expect(lastValueFrom(agentLoopResume({ systemPrompt: '', messages: [userMessage('go', 0)], tools: [] }, config))).rejects.toThrow(/does not end with an assistant message/)
    await expect(lastValueFrom(agentLoopResume({ systemPrompt: '', messages: [userMessage('go', 0), assistantMessage([text('hi')])], tools: [] }, config))).rejects.toThrow(/has no tool calls to resume/)
  })

  it('numbers its turns on from `turnIndex`, and maxTurns counts the turns before it', () => {
    ran.length = 0
    const model = scriptedModel([reply.text('done')])
    const messages: AgentMessage[] = [userMessage('go', 0), answer(['c0'])]
    runAgentMarbles(({ expectTimeline, scheduler }) => {
      // Suspended in its third turn (index 2) under maxTurns 3: the resumed turn is the last one, the model is not asked again.
      const config: AgentLoopConfig = { model: model.model, streamFn: model.streamFn, scheduler, maxTurns: 3 }
      expectTimeline(agentLoopResume({ systemPrompt: '', messages, tools: [work] }, config, { turnIndex: 2 })).toBe(`
        0 agentStart, turnStart:2, toolStart:c0
        3 toolEnd:c0, msgStart:toolResult, msgEnd:toolResult:c0, turnEnd:2, agentEnd:maxTurns, |
      `)
    })
    expect(ran).toEqual(['work 0'])
    expect(model.requests).toHaveLength(0)
  })

  it('refuses a turnIndex that is not a non-negative integer, naming it', () => {
    const model = scriptedModel([reply.text('ok')])
    const config: AgentLoopConfig = { model: model.model, streamFn: model.streamFn }
    const messages: AgentMessage[] = [userMessage('go', 0), answer(['c0'])]
    expect(() => agentLoopResume({ systemPrompt: '', messages, tools: [work] }, config, { turnIndex: -1 })).toThrow(/agentLoopResume.*options\.turnIndex/)
    expect(() => agentLoopResume({ systemPrompt: '', messages, tools: [work] }, config, { turnIndex: 1.5 })).toThrow(/options\.turnIndex/)
  })
})
