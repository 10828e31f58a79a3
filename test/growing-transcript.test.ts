import { describe, expect, it } from 'vitest'
import * as t from 'io-ts'
import { Agent } from '../src/agent/index.js'
import { defineTool } from '../src/tools/define-tool.js'
import { appendMessages, emptyTranscript, hasNoCustomMessages, knownNoCustomMessages, lineageOf, messagesFrom, noteNoCustomMessages } from '../src/types/growing-transcript.js'
import { slidingWindow } from '../src/context/sliding-window.js'
import { assistantMessage, userMessage, type AgentMessage } from '../src/types/message.js'
import { reply, scriptedModel } from '../marbles/index.js'

const u = (text: string): AgentMessage => userMessage(text)
const note: AgentMessage = { role: 'custom', kind: 'note', data: null }
/** Each message's first text, or its role when it has none. */
const texts = (ms: readonly AgentMessage[]): string[] =>
  ms.map((m) => (m.role === 'user' && m.content[0]?.type === 'text' ? m.content[0].text : m.role))

describe('growing transcripts', () => {
  it('every snapshot stays as it was, frozen, while later ones grow', () => {
    const s0 = Object.freeze([u('a')])
    const s1 = appendMessages(s0, [u('b')])
    const s2 = appendMessages(s1, [u('c'), u('d')])
    expect(texts(s0)).toEqual(['a'])
    expect(texts(s1)).toEqual(['a', 'b'])
    expect(texts(s2)).toEqual(['a', 'b', 'c', 'd'])
    expect(Object.isFrozen(s1) && Object.isFrozen(s2)).toBe(true)
    expect(appendMessages(s2, [])).toBe(s2)
  })

  it('appending to an older snapshot branches off without touching the newer one', () => {
    const s1 = appendMessages([], [u('a'), u('b')])
    const main = appendMessages(s1, [u('main')])
    const branch = appendMessages(s1, [u('branch')])
    const further = appendMessages(main, [u('more')])
    expect(texts(main)).toEqual(['a', 'b', 'main'])
    expect(texts(branch)).toEqual(['a', 'b', 'branch'])
    expect(texts(further)).toEqual(['a', 'b', 'main', 'more'])
    expect(texts(appendMessages(branch, [u('x')]))).toEqual(['a', 'b', 'branch', 'x'])
  })

  it('an empty transcript of its own: holders appending the same messages to it share their snapshots', () => {
    const empty = emptyTranscript()
    expect(empty).toEqual([])
    expect(Object.isFrozen(empty)).toBe(true)
    expect(emptyTranscript()).not.toBe(empty)
    const [a, b] = [u('a'), u('b')]
    // One holder appends a message at a time, then the other the same messages at once (an Agent's state and its run's loop).
    const one = appendMessages(empty, [a])
    expect(appendMessages(empty, [a])).toBe(one)
    const two = appendMessages(one, [b])
    expect(appendMessages(empty, [a, b])).toBe(two)
    // On a plain empty array, each starts its own copy.
    const plain = Object.freeze([]) as readonly AgentMessage[]
    expect(appendMessages(plain, [a])).not.toBe(appendMessages(plain, [a]))
  })

  it("an Agent's first run from an empty transcript shares its transcript with the loop's: one lineage", async () => {
    const model = scriptedModel([reply.toolCalls([{ id: 'c1', name: 'echo', args: { text: 'hi' } }]), reply.text('done')])
    const echo = defineTool({ name: 'echo', description: 'Echoes.', parameters: t.type({ text: t.string }), execute: ({ text }) => text })
    const agent = new Agent({ systemPrompt: '', model: model.model, streamFn: model.streamFn, tools: [echo] })
    await agent.prompt('go')
    expect(agent.state.messages).toHaveLength(4)
    expect(lineageOf(agent.state.messages)).toBeDefined()
    expect(lineageOf(model.requests[1]!.messages)).toBe(lineageOf(agent.state.messages))
  })

  it('looks like a plain array: nothing extra to iteration, keys, JSON or equality', () => {
    const s = appendMessages([u('a')], [assistantMessage('b')])
    expect(Object.keys(s)).toEqual(['0', '1'])
    expect(JSON.parse(JSON.stringify(s))).toEqual([...s])
    expect(s).toEqual([u('a'), assistantMessage('b')])
    expect(Array.isArray(s)).toBe(true)
  })

  it('knows which snapshots hold a custom message', () => {
    const plain = appendMessages([u('a')], [u('b')])
    const withNote = appendMessages(plain, [note, u('c')])
    expect(hasNoCustomMessages(plain)).toBe(true)
    expect(hasNoCustomMessages(withNote)).toBe(false)
    // `plain` is a prefix of the backing that now holds the note; it still has none.
    expect(hasNoCustomMessages(plain)).toBe(true)
    expect(hasNoCustomMessages(appendMessages([note], [u('x')]))).toBe(false)
    expect(hasNoCustomMessages([u('x'), note])).toBe(false)
    expect(hasNoCustomMessages([u('x')])).toBe(true)
  })

  it('knows a frozen list noted free of custom messages, and nothing it cannot know in O(1)', () => {
    const frozen = Object.freeze([u('a'), u('b')])
    expect(knownNoCustomMessages(frozen)).toBe(false)
    noteNoCustomMessages(frozen)
    expect(knownNoCustomMessages(frozen)).toBe(true)
    expect(hasNoCustomMessages(frozen)).toBe(true)
    // A list that is not frozen may change: a note about it is ignored.
    const loose = [u('a')]
    noteNoCustomMessages(loose)
    expect(knownNoCustomMessages(loose)).toBe(false)
    loose.push(note)
    expect(hasNoCustomMessages(loose)).toBe(false)
    expect(knownNoCustomMessages(appendMessages([u('a')], [u('b')]))).toBe(true)
    expect(knownNoCustomMessages(appendMessages([u('a')], [note]))).toBe(false)
  })

  it("a sliding window's cut of a transcript without custom messages is known free of them; of one with a note, not", () => {
    const window = slidingWindow({ maxTokens: 30, keepFirst: 1 })
    const plain = appendMessages(Object.freeze([]), Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? u(`question ${i}`) : assistantMessage(`answer ${i}`))))
    const cut = window.compact(plain)
    expect(cut.report).toBeDefined()
    expect(Object.isFrozen(cut.messages)).toBe(true)
    expect(knownNoCustomMessages(cut.messages)).toBe(true)
    const noted = appendMessages(plain, [note, u('last')])
    const cutNoted = window.compact(noted)
    expect(cutNoted.report).toBeDefined()
    expect(knownNoCustomMessages(cutNoted.messages)).toBe(false)
    expect(hasNoCustomMessages(cutNoted.messages)).toBe(!cutNoted.messages.includes(note))
  })

  it('messagesFrom is slice, for built and for plain transcripts', () => {
    const built = appendMessages(Object.freeze([u('a'), u('b')]), [u('c')])
    appendMessages(built, [u('later')])
    expect(texts(messagesFrom(built, 1))).toEqual(['b', 'c'])
    expect(texts(messagesFrom(Object.freeze([u('a'), u('b')]), 1))).toEqual(['b'])
    expect(messagesFrom(built, 3)).toEqual([])
  })
})
