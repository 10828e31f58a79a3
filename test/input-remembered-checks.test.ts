/**
 * The entry check remembers lists it has checked (input.ts with
 * transcript-memo.ts), so that a transcript passed again, or grown by a few
 * messages, is checked over those only. What it must still catch: a bad
 * message appended, a message replaced, and any message that is not frozen
 * and changed since, each with its path.
 */
import { describe, expect, it } from 'vitest'
import { agentLoop } from '../src/loop/agent-loop.js'
import { appendMessages } from '../src/types/growing-transcript.js'
import { InvalidInputError, decodeMessages } from '../src/types/input.js'
import { noteAppended } from '../src/types/transcript-memo.js'
import { assistantMessage, userMessage, type AgentMessage, type AssistantMessage, type UserMessage } from '../src/types/message.js'
import { reply, scriptedModel } from '../marbles/index.js'

const frozen = (m: UserMessage | AssistantMessage): AgentMessage => Object.freeze({ ...m, content: Object.freeze([...m.content]) } as AgentMessage)
const history = (n: number): AgentMessage[] => Array.from({ length: n }, (_, i) => frozen(i % 2 === 0 ? userMessage(`u${i}`) : assistantMessage(`a${i}`)))
const badMessage = { role: 'user', content: [{ type: 'text', text: 7 }], timestamp: 0 } as unknown as AgentMessage

/** The first line of what agentLoop throws for this transcript, or `undefined` when it is accepted. */
function check(messages: readonly AgentMessage[]): string | undefined {
  const model = scriptedModel([reply.text('ok')])
  try {
    agentLoop('go', { systemPrompt: 's', messages, tools: [] }, { model: model.model, streamFn: model.streamFn })
    return undefined
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError)
    return (error as Error).message.split('\n')[0]
  }
}

const at = (path: string): string => `agentLoop: invalid context at ${path}: expected string, got 7`

describe('entry checks remembered per list', () => {
  it.each([
    ['a plain array', (ms: readonly AgentMessage[], more: readonly AgentMessage[]) => [...ms, ...more]],
    ['a frozen array', (ms: readonly AgentMessage[], more: readonly AgentMessage[]) => Object.freeze([...ms, ...more])],
    ['a growing transcript', (ms: readonly AgentMessage[], more: readonly AgentMessage[]) => appendMessages(ms, more)],
  ])('a checked transcript grown by a bad message (%s) is rejected at its index', (_, grow) => {
    const base = appendMessages(Object.freeze([]), history(6))
    expect(check(base)).toBeUndefined()
    expect(check(grow(base, [frozen(userMessage('fine'))]))).toBeUndefined()
    expect(check(grow(base, [frozen(userMessage('fine')), badMessage]))).toBe(at('messages[7].content[0].text'))
  })

  it('a message replaced in a checked transcript is checked', () => {
    const base = Object.freeze(history(5))
    expect(check(base)).toBeUndefined()
    const edited = [...base]
    edited[2] = badMessage
    expect(check(edited)).toBe(at('messages[2].content[0].text'))
  })

  it('a message that is not frozen is checked again at every entry: a change since is caught', () => {
    const loose = userMessage('loose')
    /** Changes the text of `loose` in place, as a caller holding it may. */
    const setText = (value: unknown): void => {
      ;(loose.content[0] as unknown as { text: unknown }).text = value
    }
    const list = [...history(4), loose]
    expect(check(list)).toBeUndefined()
    setText(7)
    expect(check(list)).toBe(at('messages[4].content[0].text'))
    // The same in a frozen array, and in a longer transcript of the same messages.
    setText('again')
    const sealed = Object.freeze([...list])
    expect(check(sealed)).toBeUndefined()
    setText(7)
    expect(check(sealed)).toBe(at('messages[4].content[0].text'))
    expect(check([...sealed, frozen(userMessage('more'))])).toBe(at('messages[4].content[0].text'))
  })

  it('an older, shorter transcript of a checked lineage passes', () => {
    const short = appendMessages(Object.freeze([]), history(3))
    const long = appendMessages(short, history(4))
    expect(check(long)).toBeUndefined()
    expect(check(short)).toBeUndefined()
  })
})

describe('what is frozen and wrong is never remembered as checked', () => {
  it('a frozen bad message fails at every entry, alone, in a frozen list, and past a checked prefix', () => {
    const frozenBad = Object.freeze({ ...badMessage, content: Object.freeze([...(badMessage as UserMessage).content]) }) as AgentMessage
    const alone = Object.freeze([frozenBad])
    for (let i = 0; i < 3; i++) expect(check(alone)).toBe(at('messages[0].content[0].text'))
    const base = appendMessages(Object.freeze([]), history(4))
    expect(check(base)).toBeUndefined()
    const grown = appendMessages(base, [frozenBad])
    for (let i = 0; i < 2; i++) expect(check(grown)).toBe(at('messages[4].content[0].text'))
    // The same message object again, in a list that already passed up to it, is checked again.
    expect(check(Object.freeze([...base, frozenBad]))).toBe(at('messages[4].content[0].text'))
  })
})

describe('noteAppended: a transcript built by appending outside the loop', () => {
  it('is placed without a comparison, and its new messages are still checked', () => {
    const base = Object.freeze(history(4))
    expect(check(base)).toBeUndefined()
    const grown = Object.freeze([...base, frozen(userMessage('fine'))])
    noteAppended(base, grown)
    expect(check(grown)).toBeUndefined()
    const broken = Object.freeze([...grown, badMessage])
    noteAppended(grown, broken)
    expect(check(broken)).toBe(at('messages[5].content[0].text'))
  })
})

describe('noteAppended: the caller vouches for the prefix', () => {
  it('a transcript vouched for is placed by its lineage, not compared: what it says of the prefix is taken as is', () => {
    const base = Object.freeze(history(3))
    expect(check(base)).toBeUndefined()
    // Not vouched for, a list with the bad message is checked. (Checked first: once the claim below
    // is taken, a list that is a prefix of the claimed one, by identity, is taken with it.)
    expect(check(Object.freeze([badMessage, base[1]!, base[2]!]))).toBe(at('messages[0].content[0].text'))
    // A false claim, to show it is not checked: the bad first message sits where `base` had a good one.
    const claimed = Object.freeze([badMessage, base[1]!, base[2]!, frozen(userMessage('new'))])
    noteAppended(base, claimed)
    expect(check(claimed)).toBeUndefined()
  })
})

describe('normalized messages', () => {
  it('are copied as a spread copies: own data properties in order, the prototype untouched', () => {
    const raw = JSON.parse('{"role":"user","content":"hi","note":{"kept":true},"__proto__":{"polluted":true}}') as unknown
    const [m] = decodeMessages([raw], 'test', 'messages', 'messages', 42)
    expect(Object.getPrototypeOf(m)).toBe(Object.prototype)
    expect(Object.keys(m!).slice(0, 3)).toEqual(['role', 'content', 'note'])
    expect(Object.keys(m!).at(-1)).toBe('timestamp')
    expect(m).toMatchObject({ role: 'user', content: [{ type: 'text', text: 'hi' }], note: { kept: true }, timestamp: 42 })
    expect(Object.isFrozen(m)).toBe(true)
  })
})
