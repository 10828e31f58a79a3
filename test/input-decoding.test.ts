/**
 * Issue 12, point 5: every public entry decodes its input once. What other
 * runtimes' users write (a string prompt, `content: 'text'`) is normalized;
 * anything else wrong is an `InvalidInputError` naming the path, never a
 * silent drop or a message sent in the wrong role.
 */
import { describe, expect, it } from 'vitest'
import * as t from 'io-ts'
import { lastValueFrom, of, toArray } from 'rxjs'
import { agentLoop, agentLoopContinue } from '../src/loop/agent-loop.js'
import { Agent, InMemoryCheckpointStore, type Checkpoint } from '../src/agent/index.js'
import { defineTool } from '../src/tools/define-tool.js'
import { InvalidInputError } from '../src/index.js'
import { assistantMessage, userMessage, type AgentMessage, type UserMessage } from '../src/types/message.js'
import { decodeContext, decodePrompts } from '../src/types/input.js'
import type { AgentTool } from '../src/types/tool.js'
import { reply, scriptedModel } from '../marbles/index.js'
import { addTool, hello } from './helpers.js'

const noop = () => 'ok'

/** The thrown error, which must be an InvalidInputError. */
function thrown(f: () => unknown): InvalidInputError {
  try {
    f()
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError)
    return error as InvalidInputError
  }
  throw new Error('expected the call to throw an InvalidInputError, it returned')
}

async function rejected(p: Promise<unknown>): Promise<InvalidInputError> {
  try {
    await p
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError)
    return error as InvalidInputError
  }
  throw new Error('expected the promise to reject with an InvalidInputError, it resolved')
}

const bad = <T>(value: unknown): T => value as T

function loopOf(messages: readonly unknown[] = [], tools: readonly unknown[] = []) {
  const model = scriptedModel([reply.text('ok'), reply.text('ok')])
  return { model, ctx: { systemPrompt: 's', messages: bad<AgentMessage[]>(messages), tools: bad<AgentTool[]>(tools) }, config: { model: model.model, streamFn: model.streamFn } }
}

const userText = (m: AgentMessage | undefined) => (m?.role === 'user' ? m.content : undefined)

describe('agentLoop: prompts are decoded and normalized', () => {
  it("sends { role: 'user', content: 'hello' } as a user message with one text block", async () => {
    const { model, ctx, config } = loopOf()
    await lastValueFrom(agentLoop(bad({ role: 'user', content: 'hello' }), ctx, config).pipe(toArray()))
    expect(model.requests[0]?.messages).toHaveLength(1)
    expect(userText(model.requests[0]?.messages[0])).toEqual([{ type: 'text', text: 'hello' }])
    expect(model.requests[0]?.messages[0]?.timestamp).toEqual(expect.any(Number))
  })

  it("accepts a plain string prompt ('hello') and a list mixing strings and messages", async () => {
    const { model, ctx, config } = loopOf()
    await lastValueFrom(agentLoop(bad('hello'), ctx, config).pipe(toArray()))
    expect(userText(model.requests[0]?.messages[0])).toEqual([{ type: 'text', text: 'hello' }])
    const second = loopOf()
    await lastValueFrom(agentLoop(bad(['a', hello]), second.ctx, second.config).pipe(toArray()))
    expect(second.model.requests[0]?.messages.map((m) => userText(m))).toEqual([[{ type: 'text', text: 'a' }], hello.content])
  })

  it('fills in a missing timestamp on a user message whose content is canonical, leaving the caller\'s content list unfrozen', async () => {
    const { model, ctx, config } = loopOf()
    const content = [{ type: 'text', text: 'hi' }]
    await lastValueFrom(agentLoop(bad({ role: 'user', content }), ctx, config).pipe(toArray()))
    expect(model.requests[0]?.messages[0]).toMatchObject({ role: 'user', content, timestamp: expect.any(Number) })
    expect(Object.isFrozen(content)).toBe(false)
  })

  it("normalizes content: 'text' on a tool result in the context", async () => {
    const call = assistantMessage([{ type: 'toolCall', id: 'c1', name: 'add', arguments: { a: 1, b: 2 } }], { stopReason: 'toolUse' })
    const { model, ctx, config } = loopOf([hello, call, { role: 'toolResult', toolCallId: 'c1', toolName: 'add', content: '3', isError: false }])
    await lastValueFrom(agentLoopContinue(ctx, config).pipe(toArray()))
    expect(model.requests[0]?.messages[2]).toMatchObject({ role: 'toolResult', content: [{ type: 'text', text: '3' }], timestamp: expect.any(Number) })
  })

  it('keeps custom messages (role custom) and the transcript array itself when everything is canonical', async () => {
    const note = { role: 'custom', kind: 'note', data: { x: 1 } }
    const messages = Object.freeze([hello, note])
    const { ctx, config } = loopOf(messages)
    const events = await lastValueFrom(agentLoop(userMessage('again'), ctx, config).pipe(toArray()))
    expect(events.at(-1)).toMatchObject({ type: 'agentEnd', result: { stopReason: 'stop' } })
  })

  it.each([
    ['a role other runtimes use', { role: 'human', content: 'hi' }, `agentLoop: invalid prompt at prompt: 'role' must be one of 'user' | 'assistant' | 'toolResult' | 'custom', got "human"`],
    ['a number as content', { role: 'user', content: 5 }, 'agentLoop: invalid prompt at prompt.content: expected string | ReadonlyArray<UserContent>, got 5'],
    ['an unknown content block', { role: 'user', content: [{ type: 'video', url: 'x' }] }, `agentLoop: invalid prompt at prompt.content[0]: 'type' must be one of 'text' | 'image' | 'extension', got "video"`],
    ['a number', 5, `agentLoop: invalid prompt at prompt: expected an object tagged by 'role', got 5`],
  ])('rejects %s as a prompt, naming the path', (_, prompt, message) => {
    const { model, ctx, config } = loopOf()
    const error = thrown(() => agentLoop(bad(prompt), ctx, config))
    expect(error.message).toBe(message)
    expect(error.entry).toBe('agentLoop')
    expect(model.requests).toHaveLength(0)
  })

  it('names the index in a list of prompts and lists every problem in errors', () => {
    const { ctx, config } = loopOf()
    const error = thrown(() => agentLoop(bad([hello, { role: 'user', content: [{ type: 'text' }] }, { role: 'bot' }]), ctx, config))
    expect(error.message).toMatch(/^agentLoop: invalid prompts at prompts\[1\]\.content\[0\]\.text: expected string, got undefined \(missing\)/)
    expect(error.errors.map((e) => e.path)).toEqual(['prompts[1].content[0].text', 'prompts[2]'])
    expect(error.errors[0]).toMatchObject({ expected: 'string', actual: 'undefined (missing)' })
  })

  it('truncates a long value in the message', () => {
    const { ctx, config } = loopOf()
    const error = thrown(() => agentLoop(bad({ role: 'x'.repeat(5000), content: 'hi' }), ctx, config))
    expect(error.message.length).toBeLessThan(200)
    expect(error.message).toContain(`got "${'x'.repeat(40)}…"`)
  })
})

describe('agentLoop / agentLoopContinue: the context is decoded', () => {
  it.each([
    ['content 5', [{ role: 'user', content: 5, timestamp: 0 }], 'agentLoop: invalid context at messages[0].content: expected string | ReadonlyArray<UserContent>, got 5'],
    ['a human role', [hello, { role: 'human', content: 'x' }], `agentLoop: invalid context at messages[1]: 'role' must be one of 'user' | 'assistant' | 'toolResult' | 'custom', got "human"`],
    ['an unknown block in an assistant message', [hello, { ...assistantMessage('a'), content: [{ type: 'citation', url: 'u' }] }], `agentLoop: invalid context at messages[1].content[0]: 'type' must be one of 'text' | 'thinking' | 'toolCall' | 'extension', got "citation"`],
    ['an assistant message without usage', [hello, { role: 'assistant', content: [] }], 'agentLoop: invalid context at messages[1].provider: expected string, got undefined (missing)'],
    ['a string in the transcript', ['hello'], 'agentLoop: invalid context at messages[0]: expected a message object, got "hello"'],
  ])('agentLoop rejects %s', (_, messages, message) => {
    const { ctx, config } = loopOf(messages)
    expect(thrown(() => agentLoop(hello, ctx, config)).message.split('\n')[0]).toBe(message)
  })

  it.each([
    ['a tool without a name', [{ description: 'd', schema: {}, decodeArguments: () => null, execute: noop }], /^agentLoop: invalid context at tools\[0\]\.name: expected ToolName, got undefined \(missing\)/],
    ['a tool whose execute is not a function', [{ ...addTool, execute: 'run' }], /^agentLoop: invalid context at tools\[0\]\.execute: expected Function, got "run"/],
    ['two tools with one name', [addTool, addTool], /^agentLoop: invalid context at tools\[1\]\.name: the tool at index 0 is also named "add"/],
    ['no messages list', undefined, /^agentLoop: invalid context at messages: expected ReadonlyArray<AgentMessage>, got undefined/],
  ])('agentLoop rejects %s', (_, tools, message) => {
    const { ctx, config } = loopOf()
    const c = tools === undefined ? { ...ctx, messages: undefined } : { ...ctx, tools }
    expect(thrown(() => agentLoop(hello, bad(c), config)).message).toMatch(message)
  })

  it('agentLoopContinue rejects a bad tool, naming the path', () => {
    const { ctx, config } = loopOf([hello], [{ ...addTool, name: 'has space' }])
    expect(thrown(() => agentLoopContinue(ctx, config)).message).toBe(
      `agentLoopContinue: invalid context at tools[0].name: Invalid tool name "has space": it must be 1 to 64 characters of letters, digits, '_' or '-'`,
    )
  })

  it('agentLoopContinue rejects a bad transcript, naming the path', () => {
    const { ctx, config } = loopOf([{ role: 'user', content: [{ type: 'text', text: 1 }] }])
    const error = thrown(() => agentLoopContinue(ctx, config))
    expect(error.message).toBe('agentLoopContinue: invalid context at messages[0].content[0].text: expected string, got 1')
    expect(error.entry).toBe('agentLoopContinue')
  })
})

describe('the entries decode a valid input without io-ts, and what they return is what io-ts returns', () => {
  /** The io-ts path's answer for a text prompt: the same text as `content: 'text'`, which only io-ts normalizes. */
  const viaCodec = (text: string, now: number) => decodePrompts({ role: 'user', content: text }, 'test', now)[0]

  it("a text prompt is the user message { content: 'text' } decodes to, frozen with its content list", () => {
    for (const prompt of ['hello', '', 'x'.repeat(1000)]) {
      const [direct] = decodePrompts(prompt, 'test', 7)
      expect(direct).toEqual(viaCodec(prompt, 7))
      expect(Object.keys(direct!)).toEqual(Object.keys(viaCodec(prompt, 7)!))
      expect(Object.isFrozen(direct)).toBe(true)
      expect(Object.isFrozen((direct as UserMessage).content)).toBe(true)
    }
    expect(decodePrompts(['a', 'b'], 'test', 3)).toEqual([viaCodec('a', 3), viaCodec('b', 3)])
  })

  it('a canonical context comes back as the same object; one with a message to normalize as a copy, other fields kept', () => {
    const messages = [userMessage('u'), assistantMessage('a')]
    const context = { systemPrompt: 's', messages, tools: [addTool] }
    expect(decodeContext(context, 'test', 0)).toBe(context)
    const loose = { systemPrompt: 's', messages: [userMessage('u'), { role: 'user', content: 'v' }], tools: [], extra: 1 }
    const decoded = decodeContext(bad<typeof context>(loose), 'test', 9)
    expect(decoded).not.toBe(loose)
    expect(decoded).toEqual({ ...loose, messages: [loose.messages[0], { role: 'user', content: [{ type: 'text', text: 'v' }], timestamp: 9 }] })
    // The caller's context and list are left as they were.
    expect(loose.messages[1]).toEqual({ role: 'user', content: 'v' })
  })

  it('a bad context or prompt still gets the same error with its path (decoded again through io-ts)', () => {
    const messages = [userMessage('u'), { role: 'user', content: [{ type: 'text', text: 7 }], timestamp: 0 }]
    expect(thrown(() => decodeContext(bad({ systemPrompt: 's', messages, tools: [] }), 'test', 0)).message).toBe('test: invalid context at messages[1].content[0].text: expected string, got 7')
    expect(thrown(() => decodeContext(bad({ systemPrompt: 1, messages: [], tools: [] }), 'test', 0)).message).toBe('test: invalid context at systemPrompt: expected string, got 1')
    expect(thrown(() => decodeContext(bad({ systemPrompt: 's', messages: [], tools: [{}] }), 'test', 0)).errors.map((e) => e.path)).toContain('tools[0].name')
    expect(thrown(() => decodeContext(bad([]), 'test', 0)).message).toMatch(/^test: invalid context at \(root\): expected AgentContext/)
    expect(thrown(() => decodePrompts(['ok', 5], 'test', 0)).message).toBe(`test: invalid prompts at prompts[1]: expected an object tagged by 'role', got 5`)
  })
})

describe('Agent entries', () => {
  const model = () => scriptedModel([reply.text('ok'), reply.text('ok')])

  it('new Agent rejects bad messages and tools, naming the path', () => {
    const m = model()
    expect(thrown(() => new Agent({ systemPrompt: 's', model: m.model, streamFn: m.streamFn, messages: bad([hello, { role: 'user', content: 5 }]) })).message).toBe(
      'new Agent: invalid options at messages[1].content: expected string | ReadonlyArray<UserContent>, got 5',
    )
    expect(thrown(() => new Agent({ systemPrompt: 's', model: m.model, streamFn: m.streamFn, tools: bad([{ name: 'x' }]) })).message).toMatch(/^new Agent: invalid options at tools\[0\]\.description: expected string/)
    expect(thrown(() => new Agent({ systemPrompt: bad(3), model: m.model, streamFn: m.streamFn })).message).toBe('new Agent: invalid options at systemPrompt: expected string, got 3')
  })

  it("new Agent normalizes content: 'text' in its starting transcript", () => {
    const m = model()
    const agent = new Agent({ systemPrompt: 's', model: m.model, streamFn: m.streamFn, messages: bad([{ role: 'user', content: 'hi' }]) })
    expect(agent.state.messages[0]).toMatchObject({ role: 'user', content: [{ type: 'text', text: 'hi' }] })
  })

  it('prompt rejects a bad prompt, and normalizes a user message with string content', async () => {
    const m = model()
    const agent = new Agent({ systemPrompt: 's', model: m.model, streamFn: m.streamFn })
    expect(thrown(() => agent.prompt(bad({ role: 'human', content: 'hi' }))).message).toMatch(/^Agent\.prompt: invalid prompt at prompt: 'role' must be one of/)
    expect(thrown(() => agent.prompt(bad([hello, 7]))).message).toBe(`Agent.prompt: invalid prompts at prompts[1]: expected an object tagged by 'role', got 7`)
    expect(thrown(() => agent.prompt(hello, [bad({ type: 'image', source: { type: 'file' } })])).message).toMatch(/^Agent\.prompt: invalid images at images\[0\]\.source: 'type' must be one of 'base64' \| 'url'/)
    expect(thrown(() => agent.prompt(hello, [{ type: 'image', source: { type: 'url', url: 'u' } }])).message).toMatch(/^Agent\.prompt: invalid images at images: images join a text prompt/)
    expect(agent.isRunning).toBe(false)
    await agent.prompt(bad({ role: 'user', content: 'hello' }))
    expect(agent.state.messages[0]).toMatchObject({ role: 'user', content: [{ type: 'text', text: 'hello' }] })
    expect(userText(m.requests[0]?.messages[0])).toEqual([{ type: 'text', text: 'hello' }])
  })

  it('steer and followUp reject a bad message, naming the path', () => {
    const m = model()
    const agent = new Agent({ systemPrompt: 's', model: m.model, streamFn: m.streamFn })
    const steer = thrown(() => agent.steer(bad({ role: 'assistant', content: [] })))
    expect(steer.message).toBe(
      [
        'Agent.steer: invalid message at message.provider: expected string, got undefined (missing)',
        '  and at message.model: expected string, got undefined (missing)',
        '  and at message.usage: expected Usage, got undefined (missing)',
        '  and at message.cost: expected Cost, got undefined (missing)',
        '  and at message.stopReason: expected StopReason, got undefined (missing)',
        '  and 1 more (see .errors)',
      ].join('\n'),
    )
    expect(steer.errors.at(-1)?.path).toBe('message.timestamp')
    expect(thrown(() => agent.followUp(bad(5))).message).toBe(`Agent.followUp: invalid message at message: expected an object tagged by 'role', got 5`)
    expect(agent.pendingSteering).toEqual([])
    agent.followUp(bad({ role: 'user', content: 'later' }))
    expect(agent.pendingFollowUps[0]).toMatchObject({ content: [{ type: 'text', text: 'later' }] })
  })

  it('structured rejects a bad prompt, naming the path', () => {
    const m = model()
    const agent = new Agent({ systemPrompt: 's', model: m.model, streamFn: m.streamFn })
    expect(thrown(() => agent.structured(t.type({ n: t.number }), bad({ role: 'user', content: [{ type: 'text', text: null }] }))).message).toBe(
      'Agent.structured: invalid prompt at prompt.content[0].text: expected string, got null',
    )
    expect(agent.isRunning).toBe(false)
  })

  it('setTools rejects a tool whose execute is not a function', () => {
    const m = model()
    const agent = new Agent({ systemPrompt: 's', model: m.model, streamFn: m.streamFn })
    expect(thrown(() => agent.setTools(bad([{ ...addTool, execute: 1 }]))).message).toMatch(/^Agent\.setTools: invalid tools at tools\[0\]\.execute: expected Function, got 1/)
  })
})

describe('checkpoints: decoded on load and restore, with a format version', () => {
  const model = () => scriptedModel([reply.text('ok')])
  const base = (m: ReturnType<typeof model>): Record<string, unknown> => ({
    id: 'a:1', agentId: 'a', seq: 1, createdAt: 0, systemPrompt: 's', model: m.model,
    messages: [hello], steering: [], followUp: [], planMode: false, midRun: false,
  })

  it('a checkpoint carries version 2 and its position in the log', async () => {
    const m = model()
    const agent = new Agent({ systemPrompt: 's', model: m.model, streamFn: m.streamFn })
    await agent.prompt('hi')
    const checkpoint = await agent.checkpoint()
    expect(checkpoint).toMatchObject({ version: 2, position: agent.log.length - 1 })
  })

  it('a version 1 checkpoint (no position) still restores', () => {
    const m = model()
    const restored = Agent.restore(bad({ ...base(m), version: 1, steering: [hello] }), { streamFn: m.streamFn })
    expect(restored.state.messages).toEqual([hello])
    expect(restored.pendingSteering).toEqual([hello])
  })

  it('a store reports the decode path instead of "corrupt"', async () => {
    const m = model()
    const store = new InMemoryCheckpointStore()
    await store.save(bad<Checkpoint>({ ...base(m), messages: [hello, { role: 'human', content: 'x' }] }))
    const error = await rejected(store.load('a:1'))
    expect(error.message).toBe(`InMemoryCheckpointStore.load: invalid checkpoint 'a:1' at messages[1]: 'role' must be one of 'user' | 'assistant' | 'toolResult' | 'custom', got "human"`)
  })

  it('an absent version is read as format 1 (what stores held before)', async () => {
    const m = model()
    const store = new InMemoryCheckpointStore()
    await store.save(bad<Checkpoint>(base(m)))
    expect(await store.load('a:1')).toMatchObject({ version: 1, messages: [hello] })
  })

  it('a newer or unknown format is a clear error, from a store and from Agent.restore', async () => {
    const m = model()
    const store = new InMemoryCheckpointStore()
    await store.save(bad<Checkpoint>({ ...base(m), version: 7 }))
    expect((await rejected(store.load('a:1'))).message).toBe(`InMemoryCheckpointStore.load: invalid checkpoint 'a:1' at version: checkpoint format 7 is newer than this rxagent understands (2)`)
    expect(thrown(() => Agent.restore(bad({ ...base(m), version: 7 }), { streamFn: m.streamFn })).message).toBe(
      'Agent.restore: invalid checkpoint at version: checkpoint format 7 is newer than this rxagent understands (2)',
    )
    expect(thrown(() => Agent.restore(bad({ ...base(m), version: 'one' }), { streamFn: m.streamFn })).message).toBe(
      'Agent.restore: invalid checkpoint at version: unknown checkpoint format "one" (this rxagent understands 2)',
    )
  })

  it('Agent.restore rejects a bad checkpoint, naming the path, and normalizes queued messages', () => {
    const m = model()
    expect(thrown(() => Agent.restore(bad({ ...base(m), steering: [{ role: 'user', content: 5 }] }), { streamFn: m.streamFn })).message).toBe(
      'Agent.restore: invalid checkpoint at steering[0].content: expected string | ReadonlyArray<UserContent>, got 5',
    )
    expect(thrown(() => Agent.restore(bad({ ...base(m), planMode: 'yes' }), { streamFn: m.streamFn })).message).toBe('Agent.restore: invalid checkpoint at planMode: expected boolean, got "yes"')
    const agent = Agent.restore(bad({ ...base(m), followUp: [{ role: 'user', content: 'next' }] }), { streamFn: m.streamFn })
    expect(agent.pendingFollowUps[0]).toMatchObject({ role: 'user', content: [{ type: 'text', text: 'next' }] })
  })
})

describe('defineTool: the definition is decoded', () => {
  it.each([
    ['no name', { description: 'd', parameters: t.type({}), execute: noop }, /^defineTool: invalid tool definition at name: expected ToolName, got undefined \(missing\)/],
    ['an execute that is not a function', { name: 'x', description: 'd', parameters: t.type({}), execute: 'run' }, /^defineTool: invalid tool definition at execute: expected Function, got "run"/],
    ['parameters of no known kind', { name: 'x', description: 'd', parameters: new Date(0), execute: noop }, /^defineTool: invalid tool definition at parameters: expected an io-ts codec, a Standard Schema or a JSON Schema object, got an instance of Date/],
    ['a negative timeout', { name: 'x', description: 'd', parameters: t.type({}), execute: noop, timeoutMs: -1 }, /^defineTool: invalid tool definition at timeoutMs: expected NonNegativeNumber, got -1/],
    ['no description', { name: 'x', parameters: t.type({}), execute: noop }, /^defineTool: invalid tool definition at description: expected string, got undefined/],
  ])('rejects %s, naming the field', (_, def, message) => {
    expect(thrown(() => defineTool(bad<Parameters<typeof defineTool>[0]>(def))).message).toMatch(message)
  })
})

describe('agentLoop: steering and follow-up sources are decoded as their messages are taken', () => {
  it('a bad steering message fails the run with the path; nothing is sent in the wrong role', async () => {
    const call = reply.toolCalls([{ id: 'c1', name: 'add', args: { a: 1, b: 2 } }])
    const model = scriptedModel([call, reply.text('ok')])
    const steering = () => [bad<AgentMessage>({ role: 'human', content: 'stop' })]
    const end = await lastValueFrom(agentLoop(hello, { systemPrompt: 's', messages: [], tools: [addTool] }, { model: model.model, streamFn: model.streamFn, steering }))
    // A source's bad message is that callback's failure: a run error naming the source and the path (see callback-guards).
    expect(end.type === 'agentEnd' && end.result.stopReason).toBe('error')
    expect(end.type === 'agentEnd' && end.result.error).toBe(
      `steering source sent an invalid message: agentLoop: invalid steering message at steering[0]: 'role' must be one of 'user' | 'assistant' | 'toolResult' | 'custom', got "human"`,
    )
    expect(model.requests).toHaveLength(1)
  })

  it("a follow-up { role: 'user', content: 'more' } is normalized", async () => {
    const model = scriptedModel([reply.text('one'), reply.text('two')])
    let sent = false
    const followUp = () => (sent ? [] : ((sent = true), [bad<AgentMessage>({ role: 'user', content: 'more' })]))
    await lastValueFrom(agentLoop(hello, { systemPrompt: 's', messages: [], tools: [] }, { model: model.model, streamFn: model.streamFn, followUp }).pipe(toArray()))
    expect(userText(model.requests[1]?.messages[2])).toEqual([{ type: 'text', text: 'more' }])
  })
})

describe('Agent.feed: a bad message from the source', () => {
  it('is reported as a listenerError naming the path (not thrown out of the subscriber), and the feed goes on', () => {
    const m = scriptedModel([reply.text('ok')])
    const agent = new Agent({ systemPrompt: 's', model: m.model, streamFn: m.streamFn })
    const reported: unknown[] = []
    agent.subscribe((e) => e.type === 'listenerError' && reported.push(e))
    agent.feed('steering', of(bad<AgentMessage>({ role: 'human', content: 'x' }), 'fine'))
    expect(reported).toEqual([
      expect.objectContaining({ listener: 'feed(steering)', eventType: 'feed', error: expect.stringMatching(/^Agent\.steer: invalid message at message: 'role' must be one of/) }),
    ])
    expect(agent.pendingSteering).toMatchObject([{ role: 'user', content: [{ type: 'text', text: 'fine' }] }])
  })
})
