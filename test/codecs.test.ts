/**
 * Codecs: lossless JSON round trips for every boundary type, readable decode
 * errors, the usage/cost arithmetic, and custom message kinds.
 */
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import * as t from 'io-ts'
import { isLeft, isRight, type Either } from 'fp-ts/lib/Either.js'
import { decode, decodeOrThrow, DecodeError } from '../src/types/codec.js'
import {
  AssistantContent,
  Content,
  ExtensionContent,
  ImageContent,
  ImageSource,
  TextContent,
  ThinkingContent,
  ToolCallContent,
  UserContent,
} from '../src/types/content.js'
import {
  AgentMessage,
  AssistantMessage,
  CustomMessage,
  LlmMessage,
  ToolResultMessage,
  UserMessage,
  agentMessageCodec,
  defineCustomMessage,
  type CustomMessageKind,
} from '../src/types/message.js'
import {
  Cost,
  CostRates,
  Usage,
  addCost,
  addUsage,
  cacheHitRate,
  costOf,
  emptyCost,
  emptyUsage,
  mergeCost,
  mergeUsage,
  usage,
} from '../src/types/usage.js'
import { ModelSpec, ThinkingBudgets } from '../src/types/model.js'
import { StopReason } from '../src/types/stop-reason.js'
import {
  ExtensionChunk,
  MessageStartChunk,
  ProviderChunk,
  StopChunk,
  TextDeltaChunk,
  ThinkingDeltaChunk,
  ThinkingRedactedChunk,
  ThinkingSignatureChunk,
  ToolUseArgsDeltaChunk,
  ToolUseEndChunk,
  ToolUseStartChunk,
  UsageChunk,
} from '../src/types/chunk.js'
import { ToolOutput, ToolSchema } from '../src/types/tool.js'
import { LlmRequest, StreamOptions } from '../src/types/request.js'
import { AgentResult } from '../src/types/result.js'
import {
  AgentEndEvent,
  AgentEvent,
  AgentStartEvent,
  MessageEndEvent,
  MessageStartEvent,
  MessageUpdateEvent,
  PolicyDecisionEvent,
  ToolApprovalEndEvent,
  ToolApprovalRequestEvent,
  ToolExecutionEndEvent,
  ToolExecutionStartEvent,
  ToolExecutionUpdateEvent,
  TurnEndEvent,
  TurnStartEvent,
} from '../src/types/event.js'
import * as arb from './arbitraries.js'

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/** `codec.encode`, through JSON text, then `codec.decode`. */
function viaJson<A, O>(codec: t.Type<A, O, unknown>, x: A): ReturnType<t.Type<A, O, unknown>['decode']> {
  return codec.decode(JSON.parse(JSON.stringify(codec.encode(x))))
}

function roundTrips<A, O>(codec: t.Type<A, O, unknown>, arbitrary: fc.Arbitrary<A>): void {
  fc.assert(
    fc.property(arbitrary, (x) => {
      expect(codec.is(x)).toBe(true)
      const decoded = viaJson(codec, x)
      if (isLeft(decoded)) throw new Error(`did not decode: ${JSON.stringify(decoded.left.map((e) => e.message ?? e.context.map((c) => c.key).join('/')))}`)
      expect(decoded.right).toStrictEqual(x)
    }),
  )
}

/** The issue messages of a decode that must fail. */
function messagesOf<A>(result: Either<DecodeError, A>): string[] {
  if (isRight(result)) throw new Error(`expected a decode failure, got ${JSON.stringify(result.right)}`)
  expect(result.left).toBeInstanceOf(DecodeError)
  return result.left.issues.map((i) => i.message)
}

const fixtureAssistant = {
  role: 'assistant',
  content: [{ type: 'text', text: 'hi' }],
  provider: 'anthropic',
  model: 'claude',
  usage: emptyUsage,
  cost: emptyCost,
  stopReason: 'stop',
  timestamp: 1,
}
const fixtureUser = { role: 'user', content: [{ type: 'text', text: 'hello' }], timestamp: 0 }

// ---------------------------------------------------------------------------
// Round trips
// ---------------------------------------------------------------------------

describe('every codec round-trips its values through JSON losslessly', () => {
  // One entry per codec: [name, codec, arbitrary]. Built through a helper so each pair is type-checked.
  const cases: [string, () => void][] = []
  const add = <A, O>(name: string, codec: t.Type<A, O, unknown>, arbitrary: fc.Arbitrary<A>): void => {
    cases.push([name, () => roundTrips(codec, arbitrary)])
  }

  add('TextContent', TextContent, arb.arbTextContent)
  add('ThinkingContent', ThinkingContent, arb.arbThinkingContent)
  add('ToolCallContent', ToolCallContent, arb.arbToolCallContent)
  add('ImageSource', ImageSource, arb.arbImageSource)
  add('ImageContent', ImageContent, arb.arbImageContent)
  add('ExtensionContent', ExtensionContent, arb.arbExtensionContent)
  add('UserContent', UserContent, arb.arbUserContent)
  add('AssistantContent', AssistantContent, arb.arbAssistantContent)
  add('Content', Content, arb.arbContent)
  add('UserMessage', UserMessage, arb.arbUserMessage)
  add('AssistantMessage', AssistantMessage, arb.arbAssistantMessage)
  add('ToolResultMessage', ToolResultMessage, arb.arbToolResultMessage)
  add('CustomMessage', CustomMessage, arb.arbCustomMessage)
  add('LlmMessage', LlmMessage, arb.arbLlmMessage)
  add('AgentMessage', AgentMessage, arb.arbAgentMessage)
  add('Usage', Usage, arb.arbUsage)
  add('Cost', Cost, arb.arbCost)
  add('CostRates', CostRates, arb.arbAnyCostRates)
  add('StopReason', StopReason, arb.arbStopReason)
  add('ThinkingBudgets', ThinkingBudgets, arb.arbThinkingBudgets)
  add('ModelSpec', ModelSpec, arb.arbModelSpec)
  add('MessageStartChunk', MessageStartChunk, arb.arbMessageStartChunk)
  add('TextDeltaChunk', TextDeltaChunk, arb.arbTextDeltaChunk)
  add('ThinkingDeltaChunk', ThinkingDeltaChunk, arb.arbThinkingDeltaChunk)
  add('ThinkingSignatureChunk', ThinkingSignatureChunk, arb.arbThinkingSignatureChunk)
  add('ThinkingRedactedChunk', ThinkingRedactedChunk, arb.arbThinkingRedactedChunk)
  add('ToolUseStartChunk', ToolUseStartChunk, arb.arbToolUseStartChunk)
  add('ToolUseArgsDeltaChunk', ToolUseArgsDeltaChunk, arb.arbToolUseArgsDeltaChunk)
  add('ToolUseEndChunk', ToolUseEndChunk, arb.arbToolUseEndChunk)
  add('ExtensionChunk', ExtensionChunk, arb.arbExtensionChunk)
  add('StopChunk', StopChunk, arb.arbStopChunk)
  add('UsageChunk', UsageChunk, arb.arbUsageChunk)
  add('ProviderChunk', ProviderChunk, arb.arbProviderChunk)
  add('ToolOutput', ToolOutput, arb.arbToolOutput)
  add('ToolSchema', ToolSchema, arb.arbToolSchema)
  add('StreamOptions', StreamOptions, arb.arbStreamOptions)
  add('LlmRequest', LlmRequest, arb.arbLlmRequest)
  add('AgentResult', AgentResult, arb.arbAgentResult)
  add('AgentStartEvent', AgentStartEvent, arb.arbAgentStartEvent)
  add('AgentEndEvent', AgentEndEvent, arb.arbAgentEndEvent)
  add('TurnStartEvent', TurnStartEvent, arb.arbTurnStartEvent)
  add('TurnEndEvent', TurnEndEvent, arb.arbTurnEndEvent)
  add('MessageStartEvent', MessageStartEvent, arb.arbMessageStartEvent)
  add('MessageUpdateEvent', MessageUpdateEvent, arb.arbMessageUpdateEvent)
  add('MessageEndEvent', MessageEndEvent, arb.arbMessageEndEvent)
  add('ToolExecutionStartEvent', ToolExecutionStartEvent, arb.arbToolExecutionStartEvent)
  add('ToolExecutionUpdateEvent', ToolExecutionUpdateEvent, arb.arbToolExecutionUpdateEvent)
  add('ToolExecutionEndEvent', ToolExecutionEndEvent, arb.arbToolExecutionEndEvent)
  add('ToolApprovalRequestEvent', ToolApprovalRequestEvent, arb.arbToolApprovalRequestEvent)
  add('ToolApprovalEndEvent', ToolApprovalEndEvent, arb.arbToolApprovalEndEvent)
  add('PolicyDecisionEvent', PolicyDecisionEvent, arb.arbPolicyDecisionEvent)
  add('AgentEvent', AgentEvent, arb.arbAgentEvent)

  it.each(cases)('%s', (_name, run) => run())

  it('the decoded value of a valid input is the input itself, not a partial copy (optional fields kept)', () => {
    const m = { ...fixtureAssistant, errorMessage: 'boom', responseId: 'r1' }
    expect(decodeOrThrow(AgentMessage, m)).toStrictEqual(m)
  })

  it('union codecs agree with their members on `is`', () => {
    fc.assert(
      fc.property(arb.arbAgentMessage, (m) => {
        expect(LlmMessage.is(m)).toBe(m.role !== 'custom')
        expect(AgentMessage.is(m)).toBe(true)
      }),
    )
    fc.assert(
      fc.property(arb.arbContent, (c) => {
        expect(UserContent.is(c)).toBe(c.type === 'text' || c.type === 'image' || c.type === 'extension')
        expect(AssistantContent.is(c)).toBe(c.type !== 'image')
      }),
    )
  })
})

// ---------------------------------------------------------------------------
// Decode errors
// ---------------------------------------------------------------------------

describe('decode errors name the path, the expected type and what was there', () => {
  it('a wrong field type inside a message names content[i].text and string', () => {
    const [first] = messagesOf(decode(AgentMessage, { ...fixtureAssistant, content: [{ type: 'text', text: 5 }] }))
    expect(first).toContain('content[0].text')
    expect(first).toContain('string')
    expect(first).toContain('got 5')
  })

  it('a wrong tag names every allowed tag', () => {
    const [first] = messagesOf(decode(AgentMessage, { ...fixtureAssistant, content: [{ type: 'txt' }] }))
    expect(first).toContain(`'type' must be one of 'text' | 'thinking' | 'toolCall' | 'extension', got "txt"`)
  })

  it('a missing field says undefined (missing)', () => {
    const { model: _model, ...noModel } = fixtureAssistant
    const [first] = messagesOf(decode(AgentMessage, noModel))
    expect(first).toContain('model')
    expect(first).toContain('expected string, got undefined (missing)')
  })

  it('negative token counts are rejected, naming usage.input', () => {
    const [first] = messagesOf(decode(AgentMessage, { ...fixtureAssistant, usage: { ...emptyUsage, input: -1 } }))
    expect(first).toContain('usage.input')
    expect(first).toContain('expected NonNegativeInteger, got -1')
  })

  it('fractional token counts and negative costs are rejected', () => {
    expect(messagesOf(decode(Usage, { ...emptyUsage, output: 1.5 }))).toEqual(['at output: expected NonNegativeInteger, got 1.5'])
    expect(messagesOf(decode(Cost, { ...emptyCost, total: -0.01 }))).toEqual(['at total: expected NonNegativeNumber, got -0.01'])
    expect(messagesOf(decode(Cost, { ...emptyCost, input: Number.POSITIVE_INFINITY }))).toEqual([
      'at input: expected NonNegativeNumber, got Infinity',
    ])
  })

  it('every property-generated bad token count is rejected', () => {
    fc.assert(
      fc.property(
        arb.arbUsage,
        fc.constantFrom('input', 'output', 'reasoning', 'cacheRead', 'cacheWrite', 'total' as const),
        fc.oneof(fc.integer({ max: -1 }), fc.double({ noInteger: true, min: 0, noNaN: true }), fc.constant(Number.NaN)),
        (u, field, bad) => {
          const [first, ...rest] = messagesOf(decode(Usage, { ...u, [field]: bad }))
          expect(rest).toEqual([])
          expect(first).toBe(`at ${field}: expected NonNegativeInteger, got ${String(bad)}`)
        },
      ),
    )
  })

  /**
   * Exact messages, locking the format `at <path>: expected <type>, got <value>`.
   * These codecs are plain `t.type`s all the way down, so their paths are right.
   */
  const exact: [string, t.Mixed, unknown, string[]][] = [
    ['wrong type in a user message', AgentMessage, { ...fixtureUser, content: [{ type: 'text', text: 5 }] }, ['at content[0].text: expected string, got 5']],
    ['wrong tag in a user message', UserMessage, { ...fixtureUser, content: [{ type: 'txt' }] }, [`at content[0]: 'type' must be one of 'text' | 'image' | 'extension', got "txt"`]],
    ['an assistant-only block in a user message', AgentMessage, { ...fixtureUser, content: [{ type: 'thinking', thinking: 'x' }] }, [`at content[0]: 'type' must be one of 'text' | 'image' | 'extension', got "thinking"`]],
    ['missing timestamp', UserMessage, { role: 'user', content: [] }, ['at timestamp: expected NonNegativeInteger, got undefined (missing)']],
    ['unknown role', AgentMessage, { role: 'bot' }, [`at (root): 'role' must be one of 'user' | 'assistant' | 'toolResult' | 'custom', got "bot"`]],
    ['missing role', AgentMessage, {}, [`at (root): 'role' must be one of 'user' | 'assistant' | 'toolResult' | 'custom', got undefined (missing)`]],
    ['custom message sent to a model', LlmMessage, { role: 'custom', kind: 'note', data: null }, [`at (root): 'role' must be one of 'user' | 'assistant' | 'toolResult', got "custom"`]],
    ['not an object', AgentMessage, 'hello', [`at (root): expected an object tagged by 'role'`]],
    ['an array is not a message', AgentMessage, [fixtureUser], [`at (root): expected an object tagged by 'role'`]],
    ['wrong text type, long value shortened', UserMessage, { ...fixtureUser, content: [{ type: 'text', text: ['a'] }] }, ['at content[0].text: expected string, got an array of 1']],
    ['image with a bad source tag', UserContent, { type: 'image', source: { type: 'file', path: '/x' } }, [`at source: 'type' must be one of 'base64' | 'url', got "file"`]],
    ['base64 image without mimeType', ImageContent, { type: 'image', source: { type: 'base64', data: 'AA==' } }, ['at source.mimeType: expected string, got undefined (missing)']],
    ['second message of a transcript', t.array(UserMessage), [fixtureUser, { ...fixtureUser, timestamp: -5 }], ['at [1].timestamp: expected NonNegativeInteger, got -5']],
    ['usage extra counter', Usage, { ...emptyUsage, extra: { webSearch: -1 } }, ['at extra.webSearch: expected NonNegativeInteger, got -1']],
    ['usage missing total', Usage, { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0, extra: {} }, ['at total: expected NonNegativeInteger, got undefined (missing)']],
    ['stop chunk with a wrong reason', ProviderChunk, { type: 'stop', reason: 'done' }, ['at reason: expected ChunkStopReason, got "done"']],
    ['unknown chunk type', ProviderChunk, { type: 'ping' }, [`at (root): 'type' must be one of 'messageStart' | 'textDelta' | 'thinkingDelta' | 'thinkingSignature' | 'thinkingRedacted' | 'toolUseStart' | 'toolUseArgsDelta' | 'toolUseEnd' | 'extension' | 'stop' | 'usage' | 'retry', got "ping"`]],
    ['turn index', AgentEvent, { type: 'turnStart', turnIndex: 1.5 }, ['at turnIndex: expected NonNegativeInteger, got 1.5']],
    ['two problems are both listed', ToolSchema, { name: 1, description: 'd' }, ['at name: expected string, got 1', 'at parameters: expected UnknownRecord, got undefined (missing)']],
  ]
  it.each(exact)('%s', (_name, codec, input, expected) => {
    expect(messagesOf(decode(codec, input))).toEqual(expected)
  })

  it('a literal field names the literal; long strings are shortened to 40 characters', () => {
    expect(messagesOf(decode(TextContent, { type: 'txt', text: 'x' }))).toEqual(['at type: expected "text", got "txt"'])
    expect(messagesOf(decode(t.type({ n: t.number }), { n: 'y'.repeat(50) }))).toEqual([
      `at n: expected number, got "${'y'.repeat(40)}…"`,
    ])
  })

  it('DecodeError.message lists every issue on its own line, under the name of what was decoded', () => {
    const result = decode(ToolSchema, { name: 1, description: 'd' }, 'tool schema')
    if (isRight(result)) throw new Error('expected a failure')
    expect(result.left.name).toBe('DecodeError')
    expect(result.left.what).toBe('tool schema')
    expect(result.left.message).toBe(
      'Invalid tool schema:\n  - at name: expected string, got 1\n  - at parameters: expected UnknownRecord, got undefined (missing)',
    )
    expect(result.left.issues[0]).toEqual({ path: 'name', expected: 'string', actual: '1', message: 'at name: expected string, got 1' })
    expect(() => decodeOrThrow(ToolSchema, { name: 1, description: 'd' })).toThrow(DecodeError)
  })

  const structPaths: [string, t.Mixed, unknown, string[]][] = [
    ['wrong type in an assistant message', AgentMessage, { ...fixtureAssistant, content: [{ type: 'text', text: 5 }] }, ['at content[0].text: expected string, got 5']],
    ['wrong tag in an assistant message', AgentMessage, { ...fixtureAssistant, content: [{ type: 'txt' }] }, [`at content[0]: 'type' must be one of 'text' | 'thinking' | 'toolCall' | 'extension', got "txt"`]],
    ['missing model', AssistantMessage, { ...fixtureAssistant, model: undefined }, ['at model: expected string, got undefined (missing)']],
    ['negative input tokens', AgentMessage, { ...fixtureAssistant, usage: { ...emptyUsage, input: -1 } }, ['at usage.input: expected NonNegativeInteger, got -1']],
    ['optional field of the wrong type', AgentMessage, { ...fixtureAssistant, errorMessage: 5 }, ['at errorMessage: expected string, got 5']],
    ['optional field inside a struct block', AgentMessage, { ...fixtureAssistant, content: [{ type: 'thinking', thinking: 'x', signature: 5 }] }, ['at content[0].signature: expected string, got 5']],
    ['custom message timestamp', AgentMessage, { role: 'custom', kind: 'note', data: null, timestamp: -1 }, ['at timestamp: expected NonNegativeInteger, got -1']],
    ['second message of a transcript', t.array(AgentMessage), [fixtureAssistant, { ...fixtureAssistant, stopReason: 'nope' }], ['at [1].stopReason: expected StopReason, got "nope"']],
    ['nested in an event', AgentEvent, { type: 'turnEnd', turnIndex: 0, message: { ...fixtureAssistant, usage: { ...emptyUsage, input: -1 } }, toolResults: [] }, ['at message.usage.input: expected NonNegativeInteger, got -1']],
    ['policy decision', AgentEvent, { type: 'policyDecision', slot: 'x', policy: 'p', action: 'stop' }, ['at slot: expected PolicySlot, got "x"']],
    ['tool output content', ToolOutput, { content: [{ type: 'text' }] }, ['at content[0].text: expected string, got undefined (missing)']],
    ['usage chunk', ProviderChunk, { type: 'usage', input: 1.5 }, ['at input: expected Integer, got 1.5']],
    ['model spec budgets', ModelSpec, { provider: 'p', modelId: 'm', thinkingLevel: 'off', thinkingBudgets: { low: -1 } }, ['at thinkingBudgets.low: expected NonNegativeInteger, got -1']],
    [
      'request',
      LlmRequest,
      { model: { provider: 'p', modelId: 'm', thinkingLevel: 'max' }, systemPrompt: '', messages: [{ ...fixtureAssistant, usage: { ...emptyUsage, input: 1.5 } }], tools: [] },
      ['at model.thinkingLevel: expected ThinkingLevel, got "max"', 'at messages[0].usage.input: expected NonNegativeInteger, got 1.5'],
    ],
  ]
  it.each(structPaths)('struct paths read like data paths: %s', (_name, codec, input, expected) => {
    expect(messagesOf(decode(codec, input))).toEqual(expected)
  })
})

// ---------------------------------------------------------------------------
// Usage and cost arithmetic
// ---------------------------------------------------------------------------

describe('usage arithmetic', () => {
  it('addUsage is commutative', () => {
    fc.assert(
      fc.property(arb.arbUsage, arb.arbUsage, (a, b) => {
        expect(addUsage(a, b)).toStrictEqual(addUsage(b, a))
      }),
    )
  })

  it('addUsage is associative', () => {
    fc.assert(
      fc.property(arb.arbUsage, arb.arbUsage, arb.arbUsage, (a, b, c) => {
        expect(addUsage(addUsage(a, b), c)).toStrictEqual(addUsage(a, addUsage(b, c)))
      }),
    )
  })

  it('emptyUsage is the identity on both sides', () => {
    fc.assert(
      fc.property(arb.arbUsage, (u) => {
        expect(addUsage(u, emptyUsage)).toStrictEqual(u)
        expect(addUsage(emptyUsage, u)).toStrictEqual(u)
      }),
    )
  })

  it('addUsage sums field-wise and merges extra key-wise', () => {
    fc.assert(
      fc.property(arb.arbUsage, arb.arbUsage, (a, b) => {
        const sum = addUsage(a, b)
        for (const field of ['input', 'output', 'reasoning', 'cacheRead', 'cacheWrite', 'total'] as const) {
          expect(sum[field]).toBe(a[field] + b[field])
        }
        const keys = new Set([...Object.keys(a.extra), ...Object.keys(b.extra)])
        expect(new Set(Object.keys(sum.extra))).toEqual(keys)
        for (const k of keys) expect(sum.extra[k]).toBe((Object.hasOwn(a.extra, k) ? a.extra[k]! : 0) + (Object.hasOwn(b.extra, k) ? b.extra[k]! : 0))
        expect(Usage.is(sum)).toBe(true)
      }),
    )
  })

  it('addUsage leaves its arguments unchanged', () => {
    fc.assert(
      fc.property(arb.arbUsage, arb.arbUsage, (a, b) => {
        const before = structuredClone([a, b])
        addUsage(a, b)
        expect([a, b]).toStrictEqual(before)
      }),
    )
  })

  it('mergeUsage is the fold of addUsage from emptyUsage', () => {
    fc.assert(
      fc.property(fc.array(arb.arbUsage, { maxLength: 5 }), (us) => {
        const merged = mergeUsage(...us)
        expect(merged).toStrictEqual(us.reduce(addUsage, emptyUsage))
        expect(merged.input).toBe(us.reduce((n, u) => n + u.input, 0))
        expect(merged.total).toBe(us.reduce((n, u) => n + u.total, 0))
      }),
    )
    expect(mergeUsage()).toStrictEqual(emptyUsage)
  })

  it('usage() fills zeros and defaults total to input + output + cacheRead + cacheWrite (reasoning is inside output)', () => {
    fc.assert(
      fc.property(arb.arbUsage, (u) => {
        const { total: _total, ...noTotal } = u
        expect(usage(noTotal)).toStrictEqual({ ...u, total: u.input + u.output + u.cacheRead + u.cacheWrite })
        expect(usage(u)).toStrictEqual(u)
      }),
    )
    expect(usage()).toStrictEqual(emptyUsage)
    expect(usage({ input: 3 })).toStrictEqual({ ...emptyUsage, input: 3, total: 3 })
  })

  it('cacheHitRate is in [0, 1]: cacheRead over all prompt tokens, 0 without prompt tokens', () => {
    fc.assert(
      fc.property(arb.arbUsage, (u) => {
        const rate = cacheHitRate(u)
        expect(rate).toBeGreaterThanOrEqual(0)
        expect(rate).toBeLessThanOrEqual(1)
        const prompt = u.input + u.cacheRead + u.cacheWrite
        expect(rate).toBe(prompt === 0 ? 0 : u.cacheRead / prompt)
      }),
    )
    expect(cacheHitRate(emptyUsage)).toBe(0)
    expect(cacheHitRate(usage({ input: 1, cacheRead: 3 }))).toBe(0.75)
  })

  it('addCost is commutative, emptyCost its identity, mergeCost its fold', () => {
    fc.assert(
      fc.property(arb.arbCost, arb.arbCost, (a, b) => {
        expect(addCost(a, b)).toStrictEqual(addCost(b, a))
        expect(addCost(a, emptyCost)).toStrictEqual(a)
        expect(addCost(emptyCost, a)).toStrictEqual(a)
        expect(mergeCost(a, b)).toStrictEqual(addCost(addCost(emptyCost, a), b))
      }),
    )
    expect(mergeCost()).toStrictEqual(emptyCost)
  })

  it('costOf prices each token kind per million and sums them; reasoning is never billed separately', () => {
    fc.assert(
      fc.property(arb.arbUsage, arb.arbCostRates, arb.arbTokenCount, (u, rates, reasoning) => {
        const cost = costOf(u, rates)
        const input = (u.input * rates.input) / 1e6
        const output = (u.output * rates.output) / 1e6
        const cacheRead = (u.cacheRead * rates.cacheRead) / 1e6
        const cacheWrite = (u.cacheWrite * rates.cacheWrite) / 1e6
        expect(cost).toStrictEqual({ input, output, cacheRead, cacheWrite, total: input + output + cacheRead + cacheWrite, extra: {} })
        expect(costOf({ ...u, reasoning }, rates)).toStrictEqual(cost)
        expect(Cost.is(cost)).toBe(true)
      }),
    )
  })

  it('costOf: concrete prices, and no rates cost nothing', () => {
    const rates = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }
    const cost = costOf(usage({ input: 1_000_000, output: 2_000_000, reasoning: 1_500_000, cacheRead: 0, cacheWrite: 1_000_000 }), rates)
    expect(cost).toStrictEqual({ input: 3, output: 30, cacheRead: 0, cacheWrite: 3.75, total: 36.75, extra: {} })
    fc.assert(
      fc.property(arb.arbUsage, (u) => {
        expect(costOf(u, undefined)).toStrictEqual(emptyCost)
      }),
    )
  })

  it.each(['toString', 'constructor', '__proto__'])('extra key %j is summed like any other', (key) => {
    const one = JSON.parse(`{"${key}": 1}`) as Record<string, number>
    const two = JSON.parse(`{"${key}": 2}`) as Record<string, number>
    const sum = addUsage(usage({ extra: one }), usage({ extra: two }))
    expect(Object.hasOwn(sum.extra, key) && sum.extra[key]).toBe(3)
    const fromEmpty = addUsage(emptyUsage, usage({ extra: one }))
    expect(Object.hasOwn(fromEmpty.extra, key) && fromEmpty.extra[key]).toBe(1)
  })
})

// ---------------------------------------------------------------------------
// Custom message kinds
// ---------------------------------------------------------------------------

describe('defineCustomMessage / agentMessageCodec', () => {
  const Note = defineCustomMessage('note', t.type({ text: t.string }))
  const Mark = defineCustomMessage('mark', t.type({ at: t.number, label: t.union([t.string, t.null]) }))
  const kinds: readonly CustomMessageKind<string, unknown>[] = [Note, Mark] as CustomMessageKind<string, unknown>[]
  const Transcript = agentMessageCodec([Note, Mark])

  const arbNote = fc.tuple(arb.arbString, fc.option(arb.arbTimestamp, { nil: undefined })).map(([text, ts]) => Note.create({ text }, ts))
  const arbMark = fc
    .tuple(fc.integer(), fc.option(arb.arbString), fc.option(arb.arbTimestamp, { nil: undefined }))
    .map(([at, label, ts]) => Mark.create({ at, label }, ts))

  it('create builds a message of its kind, with no timestamp key when none is given', () => {
    expect(Note.create({ text: 'a' })).toStrictEqual({ role: 'custom', kind: 'note', data: { text: 'a' } })
    expect('timestamp' in Note.create({ text: 'a' })).toBe(false)
    expect(Note.create({ text: 'a' }, 7)).toStrictEqual({ role: 'custom', kind: 'note', data: { text: 'a' }, timestamp: 7 })
  })

  it('registered kinds round-trip through JSON and pass `is`', () => {
    fc.assert(
      fc.property(fc.oneof(arbNote, arbMark), (m) => {
        expect(Transcript.is(m)).toBe(true)
        expect(AgentMessage.is(m)).toBe(true)
        const decoded = viaJson(Transcript, m as AgentMessage)
        expect(isRight(decoded) && decoded.right).toStrictEqual(m)
        const kind = kinds.find((k) => k.kind === m.kind)!
        expect(kind.is(m as AgentMessage)).toBe(true)
        expect(isRight(kind.codec.decode(JSON.parse(JSON.stringify(m))))).toBe(true)
      }),
    )
  })

  it('messages of other roles pass through unchanged', () => {
    fc.assert(
      fc.property(arb.arbLlmMessage, (m) => {
        expect(Transcript.is(m)).toBe(true)
        const decoded = viaJson(Transcript, m)
        expect(isRight(decoded) && decoded.right).toStrictEqual(m)
      }),
    )
  })

  it('a kind`s `is` checks the kind tag only', () => {
    expect(Note.is(Note.create({ text: 'a' }))).toBe(true)
    expect(Note.is(Mark.create({ at: 1, label: null }))).toBe(false)
    expect(Note.is({ role: 'user', content: [], timestamp: 0 })).toBe(false)
  })

  it('unknown kinds are rejected, naming the known kinds', () => {
    expect(messagesOf(decode(Transcript, { role: 'custom', kind: 'todo', data: {} }))).toEqual([
      `at (root): unknown custom message kind 'todo', expected one of 'note' | 'mark'`,
    ])
    expect(messagesOf(decode(agentMessageCodec([]), { role: 'custom', kind: 'todo', data: {} }))).toEqual([
      `at (root): unknown custom message kind 'todo', expected one of (none registered)`,
    ])
    fc.assert(
      fc.property(arb.arbCustomMessage, (m) => {
        fc.pre(m.kind !== 'note' && m.kind !== 'mark')
        expect(Transcript.is(m)).toBe(false)
        expect(isLeft(Transcript.decode(m))).toBe(true)
      }),
    )
  })

  it('the data of registered kinds is validated', () => {
    const bad = { role: 'custom', kind: 'note', data: { text: 1 } }
    expect(Transcript.is(bad)).toBe(false)
    const [first, ...rest] = messagesOf(decode(Transcript, bad))
    expect(rest).toEqual([])
    expect(first).toContain('data.text')
    expect(first).toContain('expected string, got 1')
    expect(messagesOf(decode(Transcript, { role: 'custom', kind: 'mark', data: null }))[0]).toContain('data')
  })

  it('messages that are invalid for AgentMessage already are reported as AgentMessage reports them', () => {
    const bad = { ...fixtureUser, content: [{ type: 'text', text: 5 }] }
    expect(messagesOf(decode(Transcript, bad))).toEqual(messagesOf(decode(AgentMessage, bad)))
  })

  /** Custom data errors point into `data`. */
  it('the data path reads data.text', () => {
    expect(messagesOf(decode(Transcript, { role: 'custom', kind: 'note', data: { text: 1 } }))).toEqual([
      'at data.text: expected string, got 1',
    ])
  })

  it('a transforming data codec decodes and encodes the data', () => {
    const NumberFromString = new t.Type<number, string, unknown>(
      'NumberFromString',
      (u): u is number => typeof u === 'number',
      (u, c) => (typeof u === 'string' && u.trim() !== '' && !Number.isNaN(Number(u)) ? t.success(Number(u)) : t.failure(u, c)),
      (n) => String(n),
    )
    const Counter = defineCustomMessage('counter', NumberFromString)
    const codec = agentMessageCodec([Counter])
    expect(decodeOrThrow(codec, { role: 'custom', kind: 'counter', data: '42' })).toStrictEqual(Counter.create(42))
    expect(codec.encode(Counter.create(42))).toStrictEqual({ role: 'custom', kind: 'counter', data: '42' })
  })
})
