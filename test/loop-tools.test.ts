import { describe, expect, it } from 'vitest'
import * as t from 'io-ts'
import { concat, map, NEVER, Observable, tap, timer } from 'rxjs'
import { agentLoop, type AgentLoopConfig } from '../src/loop/agent-loop.js'
import { defineTool } from '../src/tools/define-tool.js'
import { isFrozenMessage } from '../src/providers/wire-cache.js'
import type { AgentEvent } from '../src/types/event.js'
import type { AgentTool } from '../src/types/tool.js'
import { chunk, reply, runAgentMarbles, scriptedModel, type ScriptedResponse } from '../marbles/index.js'
import { addTool, collect, context, delayedTool, hello, resultOf, textOf, toolResultsOf } from './helpers.js'

function loop(script: readonly ScriptedResponse[], tools: readonly AgentTool[], extra: Partial<AgentLoopConfig> = {}) {
  const model = scriptedModel(script)
  return { model, run$: agentLoop(hello, context(tools), { model: model.model, streamFn: model.streamFn, ...extra }) }
}

const call = (id: string, name: string, args: Record<string, unknown> = {}) => ({ id, name, args })

describe('tool turns', () => {
  it('tool results join the transcript frozen with their content (the adapters cache the wire text of frozen messages)', () => {
    const events = collect(loop([reply.toolCalls([call('c1', 'add', { a: 2, b: 3 })]), reply.text('ok')], [addTool]).run$)
    const results = events.flatMap((e) => (e.type === 'messageEnd' && e.message.role === 'toolResult' ? [e.message] : []))
    expect(results).toHaveLength(1)
    expect(isFrozenMessage(results[0]!)).toBe(true)
  })

  it('a tool result is frozen all the way down: its content blocks and its details at every depth', () => {
    const detailed = defineTool({
      name: 'detailed',
      description: 'Returns details.',
      parameters: t.type({}),
      execute: () => ({ content: [{ type: 'text' as const, text: 'ok' }], details: { nested: { list: [{ deep: 1 }] } } }),
    })
    const events = collect(loop([reply.toolCalls([call('c1', 'detailed')]), reply.text('ok')], [detailed]).run$)
    const result = events.flatMap((e) => (e.type === 'messageEnd' && e.message.role === 'toolResult' ? [e.message] : []))[0]!
    const details = result.details as { nested: { list: { deep: number }[] } }
    expect([result, result.content, result.content[0], details, details.nested, details.nested.list, details.nested.list[0]].map(Object.isFrozen)).toEqual([
      true, true, true, true, true, true, true,
    ])
  })

  it('tool turn then text turn', () => {
    runAgentMarbles(({ expectTimeline }) => {
      const first = { a: chunk.start(), b: chunk.toolStart('c1', 'add'), c: chunk.args('c1', '{"a":2,"b":3}'), d: chunk.toolEnd('c1'), p: chunk.stop('toolUse') }
      const second = { s: chunk.start(), t: chunk.text('5'), p: chunk.stop() }
      const { run$, model } = loop(
        [
          { marbles: '-a-b-c-d-(p|)', values: first },
          { marbles: '-s-t-(p|)', values: second },
        ],
        [addTool],
      )
      expectTimeline(run$).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user
        1 msgStart:assistant
        3 toolUseStart:c1
        5 toolUseArgsDelta:c1:{"a":2,"b":3}
        7 toolUseEnd:c1
        9 msgEnd:assistant:toolUse, toolStart:c1, toolEnd:c1, msgStart:toolResult, msgEnd:toolResult:c1, turnEnd:0, turnStart:1
        10 msgStart:assistant
        12 textDelta:"5"
        14 msgEnd:assistant:stop, turnEnd:1, agentEnd:stop, |
      `)
      return model
    }).requests.forEach((request, i) => expect(request.messages.map((m) => m.role)).toEqual(i === 0 ? ['user'] : ['user', 'assistant', 'toolResult']))
  })

  it('two concurrent tools finishing out of call order: ends in completion order, results in call order', () => {
    runAgentMarbles(({ expectTimeline }) => {
      const { run$ } = loop(
        [reply.toolCalls([call('slow', 'slow'), call('fast', 'fast')]), reply.text('ok')],
        [delayedTool('slow', 30), delayedTool('fast', 10)],
      )
      expectTimeline(run$).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user, msgStart:assistant, toolUseStart:slow, toolUseArgsDelta:slow:{}, toolUseEnd:slow, toolUseStart:fast, toolUseArgsDelta:fast:{}, toolUseEnd:fast, msgEnd:assistant:toolUse, toolStart:slow, toolStart:fast
        10 toolEnd:fast
        30 toolEnd:slow, msgStart:toolResult, msgEnd:toolResult:slow, msgStart:toolResult, msgEnd:toolResult:fast, turnEnd:0, turnStart:1, msgStart:assistant, textDelta:"ok", msgEnd:assistant:stop, turnEnd:1, agentEnd:stop, |
      `)
    })
  })

  it('sequential policy runs one call after another, in call order', () => {
    runAgentMarbles(({ expectTimeline }) => {
      const { run$ } = loop(
        [reply.toolCalls([call('slow', 'slow'), call('fast', 'fast')]), reply.text('ok')],
        [delayedTool('slow', 30), delayedTool('fast', 10)],
        { toolExecution: { mode: 'sequential' } },
      )
      expectTimeline(run$).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user, msgStart:assistant, toolUseStart:slow, toolUseArgsDelta:slow:{}, toolUseEnd:slow, toolUseStart:fast, toolUseArgsDelta:fast:{}, toolUseEnd:fast, msgEnd:assistant:toolUse, toolStart:slow
        30 toolEnd:slow, toolStart:fast
        40 toolEnd:fast, msgStart:toolResult, msgEnd:toolResult:slow, msgStart:toolResult, msgEnd:toolResult:fast, turnEnd:0, turnStart:1, msgStart:assistant, textDelta:"ok", msgEnd:assistant:stop, turnEnd:1, agentEnd:stop, |
      `)
    })
  })

  it('a concurrency limit of 2 with 4 tools never has more than 2 live', () => {
    runAgentMarbles(({ expectTimeline }) => {
      let live = 0
      let maxLive = 0
      const tracked = (name: string, ms: number): AgentTool =>
        defineTool({
          name,
          description: name,
          parameters: t.type({}),
          execute: () =>
            new Observable<string>((o) => {
              live++
              maxLive = Math.max(maxLive, live)
              const s = timer(ms).subscribe(() => {
                o.next(name)
                o.complete()
              })
              return () => {
                live--
                s.unsubscribe()
              }
            }),
        })
      const { run$ } = loop(
        [reply.toolCalls([call('a', 'a'), call('b', 'b'), call('c', 'c'), call('d', 'd')]), reply.text('ok')],
        [tracked('a', 10), tracked('b', 30), tracked('c', 10), tracked('d', 10)],
        { toolExecution: { mode: 'concurrent', limit: 2 } },
      )
      expectTimeline(run$).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user, msgStart:assistant, toolUseStart:a, toolUseArgsDelta:a:{}, toolUseEnd:a, toolUseStart:b, toolUseArgsDelta:b:{}, toolUseEnd:b, toolUseStart:c, toolUseArgsDelta:c:{}, toolUseEnd:c, toolUseStart:d, toolUseArgsDelta:d:{}, toolUseEnd:d, msgEnd:assistant:toolUse, toolStart:a, toolStart:b
        10 toolEnd:a, toolStart:c
        20 toolEnd:c, toolStart:d
        30 toolEnd:b, toolEnd:d, msgStart:toolResult, msgEnd:toolResult:a, msgStart:toolResult, msgEnd:toolResult:b, msgStart:toolResult, msgEnd:toolResult:c, msgStart:toolResult, msgEnd:toolResult:d, turnEnd:0, turnStart:1, msgStart:assistant, textDelta:"ok", msgEnd:assistant:stop, turnEnd:1, agentEnd:stop, |
      `)
      return () => expect(maxLive).toBe(2)
    })()
  })
})

describe('tool failures are results, and the loop goes on', () => {
  const failing = defineTool({
    name: 'boom',
    description: 'throws',
    parameters: t.type({}),
    execute: () => {
      throw new Error('kaput')
    },
  })
  const erroring = defineTool({
    name: 'err',
    description: 'errors later',
    parameters: t.type({}),
    execute: () => timer(5).pipe(map((): string => { throw new Error('late kaput') })),
  })
  const hanging = defineTool({ name: 'hang', description: 'never answers', parameters: t.type({}), execute: () => NEVER, timeoutMs: 50 })

  it('invalid arguments: an error result listing the problems, execute not called', () => {
    let called = false
    const strict = defineTool({
      name: 'add',
      description: 'adds',
      parameters: t.type({ a: t.Int, b: t.Int }),
      execute: () => {
        called = true
        return 'never'
      },
    })
    const events: AgentEvent[] = []
    runAgentMarbles(({ expectTimeline }) => {
      const { run$ } = loop([reply.toolCalls([call('c1', 'add', { a: 'x' })]), reply.text('sorry')], [strict])
      expectTimeline(run$.pipe(tap((e) => events.push(e)))).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user, msgStart:assistant, toolUseStart:c1, toolUseArgsDelta:c1:{"a":"x"}, toolUseEnd:c1, msgEnd:assistant:toolUse, toolStart:c1, toolEnd:c1:error, msgStart:toolResult, msgEnd:toolResult:c1, turnEnd:0, turnStart:1, msgStart:assistant, textDelta:"sorry", msgEnd:assistant:stop, turnEnd:1, agentEnd:stop, |
      `)
    })
    const [result] = toolResultsOf(events)
    expect(called).toBe(false)
    expect(result?.isError).toBe(true)
    expect(textOf(result!)).toBe("Invalid arguments for tool 'add':\n  - at a: expected Int, got \"x\"\n  - at b: expected Int, got undefined (missing)")
    expect(resultOf(events).stopReason).toBe('stop')
  })

  it('unknown tool: an error result naming the available tools', () => {
    const events: AgentEvent[] = []
    runAgentMarbles(({ expectTimeline }) => {
      const { run$ } = loop([reply.toolCalls([call('c1', 'nope')]), reply.text('ok')], [addTool])
      expectTimeline(run$.pipe(tap((e) => events.push(e)))).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user, msgStart:assistant, toolUseStart:c1, toolUseArgsDelta:c1:{}, toolUseEnd:c1, msgEnd:assistant:toolUse, toolStart:c1, toolEnd:c1:error, msgStart:toolResult, msgEnd:toolResult:c1, turnEnd:0, turnStart:1, msgStart:assistant, textDelta:"ok", msgEnd:assistant:stop, turnEnd:1, agentEnd:stop, |
      `)
    })
    expect(textOf(toolResultsOf(events)[0]!)).toBe("Tool 'nope' not found. Available tools: add.")
    expect(resultOf(events).stopReason).toBe('stop')
  })

  it('throwing tool and erroring tool: error results with their messages', () => {
    runAgentMarbles(({ expectTimeline }) => {
      const { run$ } = loop([reply.toolCalls([call('c1', 'boom'), call('c2', 'err')]), reply.text('ok')], [failing, erroring])
      const seen: AgentEvent[] = []
      expectTimeline(run$.pipe(map((e) => (seen.push(e), e)))).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user, msgStart:assistant, toolUseStart:c1, toolUseArgsDelta:c1:{}, toolUseEnd:c1, toolUseStart:c2, toolUseArgsDelta:c2:{}, toolUseEnd:c2, msgEnd:assistant:toolUse, toolStart:c1, toolEnd:c1:error, toolStart:c2
        5 toolEnd:c2:error, msgStart:toolResult, msgEnd:toolResult:c1, msgStart:toolResult, msgEnd:toolResult:c2, turnEnd:0, turnStart:1, msgStart:assistant, textDelta:"ok", msgEnd:assistant:stop, turnEnd:1, agentEnd:stop, |
      `)
      return seen
    })
  })

  it('tool timeout: an error result at the deadline, the tool aborted', () => {
    runAgentMarbles(({ expectTimeline }) => {
      const { run$ } = loop([reply.toolCalls([call('c1', 'hang')]), reply.text('ok')], [hanging])
      expectTimeline(run$).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user, msgStart:assistant, toolUseStart:c1, toolUseArgsDelta:c1:{}, toolUseEnd:c1, msgEnd:assistant:toolUse, toolStart:c1
        50 toolEnd:c1:error, msgStart:toolResult, msgEnd:toolResult:c1, turnEnd:0, turnStart:1, msgStart:assistant, textDelta:"ok", msgEnd:assistant:stop, turnEnd:1, agentEnd:stop, |
      `)
    })
  })

  it('error texts say what happened', () => {
    const events = collect(
      loop([reply.toolCalls([call('c1', 'boom')]), reply.text('ok')], [failing]).run$,
    )
    expect(textOf(toolResultsOf(events)[0]!)).toBe("Tool 'boom' failed: kaput")
  })

  it('a tool that completes without a value, or returns garbage, gets an error result', () => {
    const empty = defineTool({ name: 'empty', description: '', parameters: t.type({}), execute: () => concat() as Observable<string> })
    const garbage = defineTool({ name: 'garbage', description: '', parameters: t.type({}), execute: () => ({ nope: 1 }) as never })
    const events = collect(loop([reply.toolCalls([call('c1', 'empty'), call('c2', 'garbage')]), reply.text('ok')], [empty, garbage]).run$)
    const [r1, r2] = toolResultsOf(events)
    expect(textOf(r1!)).toBe("Tool 'empty' completed without a result.")
    expect(textOf(r2!)).toMatch(/^Tool 'garbage' returned an invalid result/)
    expect(r2?.isError).toBe(true)
  })

  it('progress updates become toolExecutionUpdate events; details stay out of the model request', () => {
    runAgentMarbles(({ expectTimeline }) => {
      const progress = defineTool({
        name: 'work',
        description: 'reports progress',
        parameters: t.type({}),
        execute: () =>
          concat(
            timer(10).pipe(map(() => ({ content: [{ type: 'text' as const, text: '50%' }] }))),
            timer(10).pipe(map(() => ({ content: [{ type: 'text' as const, text: 'done' }], details: { secret: 1 } }))),
          ),
      })
      const { run$ } = loop([reply.toolCalls([call('c1', 'work')]), reply.text('ok')], [progress])
      expectTimeline(run$).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user, msgStart:assistant, toolUseStart:c1, toolUseArgsDelta:c1:{}, toolUseEnd:c1, msgEnd:assistant:toolUse, toolStart:c1
        10 toolUpdate:c1
        20 toolEnd:c1, msgStart:toolResult, msgEnd:toolResult:c1, turnEnd:0, turnStart:1, msgStart:assistant, textDelta:"ok", msgEnd:assistant:stop, turnEnd:1, agentEnd:stop, |
      `)
    })
  })

  it('a length-cut tool call is never executed and gets a result saying so', () => {
    let called = false
    const tool = defineTool({ name: 'write', description: '', parameters: t.type({ text: t.string }), execute: () => ((called = true), 'x') })
    const cut = { marbles: '-s-t-a-(p|)', values: { s: chunk.start(), t: chunk.toolStart('c1', 'write'), a: chunk.args('c1', '{"text":"a very long'), p: chunk.stop('maxTokens') } }
    const events: AgentEvent[] = []
    runAgentMarbles(({ expectTimeline }) => {
      expectTimeline(loop([cut, reply.text('ok')], [tool]).run$.pipe(tap((e) => events.push(e)))).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user
        1 msgStart:assistant
        3 toolUseStart:c1
        5 toolUseArgsDelta:c1:{"text":"a very long
        7 msgEnd:assistant:length, toolStart:c1, toolEnd:c1:error, msgStart:toolResult, msgEnd:toolResult:c1, turnEnd:0, turnStart:1, msgStart:assistant, textDelta:"ok", msgEnd:assistant:stop, turnEnd:1, agentEnd:stop, |
      `)
    })
    expect(called).toBe(false)
    const [result] = toolResultsOf(events)
    expect(result?.isError).toBe(true)
    expect(textOf(result!)).toBe(
      "Tool call not executed: its arguments were cut off because the response hit the output token limit (stopReason 'length').",
    )
    // The model is told, and the loop goes on.
    expect(resultOf(events).stopReason).toBe('stop')
  })

  it('a stream with a contract violation ends the run with an error; its tool calls get results', () => {
    const bad = {
      marbles: '-s-t-a-e-x-p|',
      values: { s: chunk.start(), t: chunk.toolStart('c1', 'add'), a: chunk.args('c1', '{"a":1,"b":2}'), e: chunk.toolEnd('c1'), x: chunk.args('c1', 'more'), p: chunk.stop() },
    }
    const events: AgentEvent[] = []
    runAgentMarbles(({ expectTimeline }) => {
      expectTimeline(loop([bad], [addTool]).run$.pipe(tap((e) => events.push(e)))).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user
        1 msgStart:assistant
        3 toolUseStart:c1
        5 toolUseArgsDelta:c1:{"a":1,"b":2}
        7 toolUseEnd:c1
        9 msgEnd:assistant:error, toolStart:c1, toolEnd:c1:error, msgStart:toolResult, msgEnd:toolResult:c1, turnEnd:0, agentEnd:error, |
      `)
    })
    const result = resultOf(events)
    expect(result.stopReason).toBe('error')
    expect(result.error).toBe("stream contract violated: 'toolUseArgsDelta' for tool use 'c1' after its end")
    const assistant = result.messages[1]
    expect(assistant).toMatchObject({ role: 'assistant', stopReason: 'error', content: [{ type: 'toolCall', id: 'c1', arguments: { a: 1, b: 2 } }] })
    expect(textOf(toolResultsOf(events)[0]!)).toMatch(/^Tool call not executed: the model's response ended with stopReason 'error'/)
    expect(result.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult'])
  })

  it('a provider error ends the run with the error in words', () => {
    const events = collect(loop([new Error('HTTP 529: overloaded')], []).run$)
    expect(resultOf(events)).toMatchObject({ stopReason: 'error', error: 'HTTP 529: overloaded' })
  })

  it('a throwing streamFn is an error message, not an exception', () => {
    const events = collect(
      agentLoop(hello, context(), {
        model: scriptedModel([]).model,
        streamFn: () => {
          throw new Error('no network')
        },
      }),
    )
    expect(resultOf(events)).toMatchObject({ stopReason: 'error', error: 'streamFn threw: no network' })
  })

  it('running out of script is a clear error', () => {
    const events = collect(loop([reply.toolCalls([call('c1', 'add', { a: 1, b: 1 })])], [addTool]).run$)
    expect(resultOf(events).error).toBe('scripted model: no response scripted for call #2 (the script has 1)')
  })

  it('maxTurns stops the run with maxTurns after that many turns', () => {
    const { run$, model } = loop(
      [reply.toolCalls([call('c1', 'add', { a: 1, b: 1 })]), reply.toolCalls([call('c2', 'add', { a: 1, b: 1 })]), reply.text('x')],
      [addTool],
      { maxTurns: 2 },
    )
    const result = resultOf(collect(run$))
    expect(result.stopReason).toBe('maxTurns')
    expect(result.error).toBe('stopped after 2 turns (maxTurns)')
    expect(model.requests).toHaveLength(2)
    expect(result.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant', 'toolResult'])
  })

  it('runs 10,000 turns with a synchronous model: no stack overflow, no stall', () => {
    const turns = 10_000
    const model = scriptedModel((_req, n) => (n < turns - 1 ? reply.toolCalls([call(`c${n}`, 'add', { a: n, b: 1 })]) : reply.text('done')), {
      recordRequests: false,
    })
    let count = 0
    let last: AgentEvent | undefined
    agentLoop(hello, context([addTool]), { model: model.model, streamFn: model.streamFn }).subscribe((e) => {
      if (e.type === 'turnEnd') count++
      last = e
    })
    expect(count).toBe(turns)
    expect(last?.type === 'agentEnd' && last.result.stopReason).toBe('stop')
  })

  it('is cold: nothing happens until subscribed, and each subscription is a new run', () => {
    const { run$, model } = loop([reply.text('a'), reply.text('b')], [])
    expect(model.requests).toHaveLength(0)
    collect(run$)
    collect(run$)
    expect(model.requests).toHaveLength(2)
  })

  it('passes what the model needs: system prompt, tool schemas, converted messages', () => {
    const { run$, model } = loop([reply.text('a')], [addTool])
    collect(run$)
    const request = model.requests[0]!
    expect(request.systemPrompt).toBe('You are a test.')
    expect(request.tools).toEqual([
      {
        name: 'add',
        description: 'Adds two integers.',
        parameters: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, required: ['a', 'b'], additionalProperties: false },
      },
    ])
    expect(request.messages).toEqual([hello])
  })

  it('custom messages stay in the transcript but never reach the model', () => {
    const model = scriptedModel([reply.text('a')])
    const note = { role: 'custom' as const, kind: 'note', data: { x: 1 } }
    collect(agentLoop([note, hello], context(), { model: model.model, streamFn: model.streamFn }))
    expect(model.requests[0]?.messages).toEqual([hello])
  })
})
