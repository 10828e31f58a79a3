/** The timeline model: records → runs of lanes, bars and marks (pure), checked as marble strings. */
import { describe, expect, it } from 'vitest'
import type { SessionRecord, SessionRecordBody } from '../../src/agent/session-store.js'
import { sessionTimeline } from '../../src/devtools/timeline.js'
import { timelineMarbles } from '../../src/devtools/timeline-marbles.js'
import { assistantMessage, userMessage, type AgentMessage } from '../../src/types/message.js'
import type { ProviderChunk } from '../../src/types/chunk.js'
import { emptyCost, emptyUsage } from '../../src/types/usage.js'

type Body = SessionRecordBody extends infer B ? (B extends { readonly seq: number } ? Omit<B, 'seq'> : B) : never

/** Records at the given times (`[at, body]`), positions 1, 2…, log entries numbered from seq 0. */
function records(items: readonly (readonly [number, Body])[]): SessionRecord[] {
  let seq = 0
  return items.map(([at, body], i) => ({ position: i + 1, at, body: (body.type === 'stream' ? body : { ...body, seq: seq++ }) as SessionRecordBody }))
}
const init: Body = { type: 'init', version: 1, agentId: 'a1', systemPrompt: '', model: { provider: 'p', modelId: 'm', thinkingLevel: 'off' }, availableModels: [], tools: [], messages: [] }
const stream = (afterSeq: number, ...chunks: ProviderChunk[]): Body => ({ type: 'stream', afterSeq, chunks })
const end = (message: AgentMessage): Body => ({ type: 'messageEnd', message })
const toolCalls = (...ids: string[]) =>
  assistantMessage(ids.map((id) => ({ type: 'toolCall' as const, id, name: id.startsWith('r') ? 'read' : 'write', arguments: { path: id } })), {
    stopReason: 'toolUse',
    usage: { ...emptyUsage, input: 100, output: 20, total: 120 },
    cost: { ...emptyCost, total: 0.5 },
  })
const result = (id: string, isError = false): AgentMessage => ({ role: 'toolResult', toolCallId: id, toolName: 'read', content: [{ type: 'text', text: 'ok' }], isError, timestamp: 0 })
/** Run 'a' suspended for the approval of its call w1, decided at 90 (the start of the resumed-run cases). */
const suspendedRun: readonly (readonly [number, Body])[] = [
  [0, init],
  [10, { type: 'runStart', runId: 'a', prompts: [] }],
  [10, { type: 'turnStart', turnIndex: 0 }],
  [20, end(toolCalls('w1'))],
  [30, { type: 'approvalRequested', toolCallId: 'w1', toolName: 'write', args: {} }],
  [90, { type: 'approvalDecided', toolCallId: 'w1', decision: { approved: true }, by: 'resolveApproval' }],
]

describe('sessionTimeline', () => {
  it('draws a run with parallel tools as overlapping bars, one lane per call', () => {
    const tl = sessionTimeline('s1', records([
      [0, init],
      [1000, { type: 'runStart', runId: 'r-1', prompts: [userMessage('read both files')] }],
      [1000, { type: 'agentStart' }],
      [1000, end(userMessage('read both files'))],
      [1000, { type: 'turnStart', turnIndex: 0 }],
      [1020, stream(5, { type: 'messageStart', id: 'x', model: 'm' }, { type: 'thinkingDelta', text: 'hm' })],
      [1030, stream(5, { type: 'toolUseStart', id: 'r1', name: 'read' }, { type: 'toolUseArgsDelta', id: 'r1', fragment: '{}' })],
      [1040, end(toolCalls('r1', 'r2'))],
      [1040, { type: 'toolExecutionStart', toolCallId: 'r1' }],
      [1050, { type: 'toolExecutionStart', toolCallId: 'r2' }],
      [1070, { type: 'toolExecutionEnd', toolCallId: 'r2' }],
      [1070, end(result('r2', true))],
      [1090, { type: 'toolExecutionEnd', toolCallId: 'r1' }],
      [1090, end(result('r1'))],
      [1090, { type: 'turnEnd', turnIndex: 0 }],
      [1090, { type: 'turnStart', turnIndex: 1 }],
      [1110, end(assistantMessage('done', { usage: { ...emptyUsage, input: 200, output: 5, total: 205 }, cost: { ...emptyCost, total: 0.25 } }))],
      [1110, { type: 'turnEnd', turnIndex: 1 }],
      [1110, { type: 'agentEnd', stopReason: 'stop' }],
    ]))
    expect(tl.agentId).toBe('a1')
    expect(tl.lastPosition).toBe(19)
    expect(tl.runs).toHaveLength(1)
    const run = tl.runs[0]!
    expect(run).toMatchObject({ runId: 'r-1', status: 'done', stopReason: 'stop', start: 1000, end: 1110, title: 'read both files' })
    expect(timelineMarbles(run, 10)).toEqual({
      inputs: 'u-----------',
      model: '==ka-----==-',
      'read r1': '----=====---',
      'read r2': '-----==-----',
    })
    const [r1, r2] = run.lanes.slice(2).map((l) => l.bars[0]!)
    expect(r1).toMatchObject({ status: 'ok', start: 1040, end: 1090, position: 14 })
    expect(r2).toMatchObject({ status: 'error', start: 1050, end: 1070, position: 12 })
    expect(run.lanes[1]!.bars.map((b) => [b.label, b.status, b.position])).toEqual([
      ['unknown · 2 tool calls · toolUse', 'ok', 8],
      ['unknown · text · stop', 'ok', 17],
    ])
    expect(run.turns.map((t) => [t.turnIndex, t.modelMs, t.ttftMs, t.totalTokens, t.cost, t.toolCalls])).toEqual([
      [0, 40, 20, 120, 0.5, 2],
      [1, 20, undefined, 205, 0.25, 0],
    ])
    expect(run.messages.map((m) => m.message.role)).toEqual(['user', 'assistant', 'toolResult', 'toolResult', 'assistant'])
    expect(tl.pendingApprovals).toEqual([])
  })

  it('shows an approval waiting, then decided, and the waiting one as pending while the run is open', () => {
    const base: (readonly [number, Body])[] = [
      [0, init],
      [100, { type: 'runStart', runId: 'r-2', prompts: [] }],
      [100, { type: 'turnStart', turnIndex: 0 }],
      [110, end(toolCalls('w1'))],
      [120, { type: 'approvalRequested', toolCallId: 'w1', toolName: 'write', args: { path: 'w1' } }],
    ]
    const waiting = sessionTimeline('s', records(base))
    expect(waiting.pendingApprovals).toEqual([{ runId: 'r-2', toolCallId: 'w1', toolName: 'write', args: { path: 'w1' }, at: 120 }])
    expect(waiting.runs[0]!.status).toBe('running')
    expect(timelineMarbles(waiting.runs[0]!, 10)).toEqual({ inputs: '---', model: '=--', 'write w1': '--?' })

    const decided = sessionTimeline('s', records([
      ...base,
      [150, { type: 'approvalDecided', toolCallId: 'w1', decision: { approved: true }, by: 'resolveApproval' }],
      [150, { type: 'toolExecutionStart', toolCallId: 'w1' }],
      [170, { type: 'toolExecutionEnd', toolCallId: 'w1' }],
      [170, { type: 'agentEnd', stopReason: 'aborted' }],
    ]))
    expect(decided.pendingApprovals).toEqual([])
    expect(timelineMarbles(decided.runs[0]!, 10)).toEqual({ inputs: '--------', model: '=-------', 'write w1': '--?~~!=-' })
    expect(decided.runs[0]!.lanes[2]!.bars.map((b) => [b.kind, b.status, b.label])).toEqual([
      ['approval', 'ok', 'approved by resolveApproval'],
      ['tool', 'ok', 'write w1'],
    ])
  })

  it('draws a streaming run open-ended, with retries, fallbacks, steering and follow-ups', () => {
    const tl = sessionTimeline('s', records([
      [0, init],
      [50, { type: 'enqueue', queue: 'followUp', message: userMessage('and then?') }],
      [100, { type: 'runStart', runId: 'r-3', prompts: [] }],
      [100, { type: 'turnStart', turnIndex: 0 }],
      [110, stream(3, { type: 'messageStart', id: 'x', model: 'm' }, { type: 'textDelta', text: 'Hel' })],
      [120, stream(3, { type: 'retry', attempt: 1, delayMs: 5, error: { kind: 'overloaded', message: 'busy', retryable: true } } as ProviderChunk)],
      [130, stream(3, { type: 'retry', attempt: 2, delayMs: 5, error: { kind: 'overloaded', message: 'busy', retryable: true }, model: { provider: 'p', modelId: 'm2', thinkingLevel: 'off' } } as ProviderChunk)],
      [140, { type: 'enqueue', queue: 'steering', message: userMessage('faster') }],
      [150, stream(3, { type: 'textDelta', text: 'lo' })],
    ]))
    const run = tl.runs[0]!
    expect(run.from).toBe(50)
    expect(run.end).toBeUndefined()
    expect(run.lanes[1]!.bars[0]).toMatchObject({ status: 'running', end: undefined })
    expect(timelineMarbles(run, 10)).toEqual({ inputs: 'f--------s-', model: '-----=trF=t' })
    expect(run.turns[0]!.ttftMs).toBe(10)
    expect(run.lanes[1]!.marks.find((m) => m.kind === 'fallback')!.label).toBe('fallback to m2: busy')
  })

  it('draws a finished message from the marks its messageEnd carries: time to first token, retries, fallbacks', () => {
    const busy = 'overloaded (529)'
    const marked: Body = {
      type: 'messageEnd',
      message: assistantMessage('Hello'),
      stream: { startedAt: 100, firstChunkAt: 130, endedAt: 190, retries: [{ at: 120, attempt: 1, delayMs: 5, error: busy }], fallbacks: [{ at: 150, provider: 'p', modelId: 'm2', error: busy }] },
    }
    const finished: (readonly [number, Body])[] = [
      [0, init],
      [100, { type: 'runStart', runId: 'r-4', prompts: [] }],
      [100, { type: 'turnStart', turnIndex: 0 }],
      [190, marked],
      [190, { type: 'turnEnd', turnIndex: 0 }],
      [190, { type: 'agentEnd', stopReason: 'stop' }],
    ]
    const run = sessionTimeline('s', records(finished)).runs[0]!
    expect(run.turns[0]!.ttftMs).toBe(30)
    expect(timelineMarbles(run, 10)).toEqual({ inputs: '----------', model: '==r==F===-' })
    expect(run.lanes[1]!.marks.map((m) => [m.kind, m.label, m.position])).toEqual([
      ['retry', 'retry 1 in 5 ms: overloaded (529)', 4],
      ['fallback', 'fallback to m2: overloaded (529)', 4],
    ])

    // Watched live, its stream records drew the retries already: not twice; the time to first token is the entry's.
    const live = sessionTimeline('s', records([
      ...finished.slice(0, 3),
      [110, stream(3, { type: 'messageStart', id: 'x', model: 'm' })],
      [120, stream(3, { type: 'retry', attempt: 1, delayMs: 5, error: { kind: 'overloaded', message: busy, retryable: true } } as ProviderChunk)],
      [140, stream(3, { type: 'textDelta', text: 'Hel' })],
      ...finished.slice(3),
    ])).runs[0]!
    expect(live.turns[0]!.ttftMs).toBe(30)
    expect(live.lanes[1]!.marks.map((m) => m.kind)).toEqual(['retry', 'text'])
  })

  it('ends open bars with a failed run, and starts a new run after it', () => {
    const tl = sessionTimeline('s', records([
      [0, init],
      [10, { type: 'runStart', runId: 'a', prompts: [] }],
      [10, { type: 'turnStart', turnIndex: 0 }],
      [20, { type: 'runFailed', error: 'boom' }],
      [30, { type: 'runStart', runId: 'b', prompts: [] }],
      [40, { type: 'agentEnd', stopReason: 'policyStop', error: 'budget' }],
    ]))
    expect(tl.runs.map((r) => [r.runId, r.status, r.error])).toEqual([['a', 'failed', 'boom'], ['b', 'done', 'budget']])
    expect(tl.runs[0]!.lanes[1]!.bars[0]).toMatchObject({ status: 'error', end: 20 })
    expect(tl.runs[1]!.lanes[1]!.marks.map((m) => [m.kind, m.label])).toEqual([['policy', 'stopped: policyStop (budget)']])
  })

  it('ends a run left open when a later run starts (a resumed run), and names calls an earlier run made', () => {
    const tl = sessionTimeline('s', records([
      ...suspendedRun,
      [100, { type: 'runStart', runId: 'b', prompts: [] }],
      [100, { type: 'toolExecutionStart', toolCallId: 'w1' }],
    ]))
    expect(tl.runs.map((r) => [r.runId, r.status, r.end])).toEqual([['a', 'interrupted', 90], ['b', 'running', undefined]])
    expect(timelineMarbles(tl.runs[0]!, 10)).toEqual({ inputs: '---------', model: '=--------', 'write w1': '--?~~~~~!' })
    expect(tl.runs[1]!.lanes[2]).toMatchObject({ label: 'write w1', bars: [{ kind: 'tool', status: 'running' }] })
  })

  it('draws a resumed run (runResumed) as the same run, which finishes; the turn it was suspended in ends where it stopped', () => {
    const tl = sessionTimeline('s', records([
      ...suspendedRun,
      [100, { type: 'runResumed', runId: 'a' }],
      [100, { type: 'turnStart', turnIndex: 0 }],
      [100, { type: 'toolExecutionStart', toolCallId: 'w1' }],
      [120, { type: 'toolExecutionEnd', toolCallId: 'w1' }],
      [120, end({ role: 'toolResult', toolCallId: 'w1', toolName: 'write', content: [{ type: 'text', text: 'ok' }], isError: false, timestamp: 0 })],
      [120, { type: 'turnEnd', turnIndex: 0 }],
      [130, { type: 'agentEnd', stopReason: 'stop' }],
    ]))
    expect(tl.runs.map((r) => [r.runId, r.status, r.stopReason, r.end])).toEqual([['a', 'done', 'stop', 130]])
    const run = tl.runs[0]!
    expect(run.turns.map((t) => [t.turnIndex, t.start, t.end])).toEqual([[0, 10, 90], [0, 100, 120]])
    expect(run.lanes[0]!.marks.map((m) => [m.kind, m.label, m.at])).toEqual([['command', 'resumed', 100]])
    expect(timelineMarbles(run, 10)).toEqual({ inputs: '---------c---', model: '=------------', 'write w1': '--?~~~~~!==--' })
  })

  it('draws policy decisions where they were made: model lane, or the call a pre-dispatch one was about; the stop once', () => {
    const tl = sessionTimeline('s', records([
      [0, init],
      [10, { type: 'runStart', runId: 'p', prompts: [] }],
      [10, { type: 'turnStart', turnIndex: 0 }],
      [30, end(toolCalls('r1'))],
      [40, { type: 'policyDecision', slot: 'preDispatch', policy: 'deny', action: 'skip', reason: 'not r1', toolCallId: 'r1' }],
      [40, end(result('r1', true))],
      [40, { type: 'turnEnd', turnIndex: 0 }],
      [50, { type: 'policyDecision', slot: 'postTurn', policy: 'nudge', action: 'inject' }],
      [60, { type: 'turnStart', turnIndex: 1 }],
      [60, end(userMessage('keep going'))],
      [80, end(assistantMessage('done'))],
      [80, { type: 'turnEnd', turnIndex: 1 }],
      [90, { type: 'policyDecision', slot: 'postLoop', policy: 'judge', action: 'stop', reason: 'good enough' }],
      [90, { type: 'agentEnd', stopReason: 'policyStop', error: 'good enough' }],
    ]))
    const run = tl.runs[0]!
    expect(timelineMarbles(run, 10)).toEqual({ inputs: '-----u---', model: '==--P==-P', 'read r1': '---P-----' })
    expect(run.lanes.flatMap((l) => l.marks.filter((m) => m.kind === 'policy').map((m) => [l.id, m.label, m.position]))).toEqual([
      ['model', 'postTurn nudge: inject', 8],
      ['model', 'postLoop judge: stop (good enough)', 13],
      ['tool:r1', 'preDispatch deny: skip (not r1)', 5],
    ])
    expect(run.policyDecisions).toEqual([
      { position: 5, at: 40, slot: 'preDispatch', policy: 'deny', action: 'skip', reason: 'not r1', toolCallId: 'r1' },
      { position: 8, at: 50, slot: 'postTurn', policy: 'nudge', action: 'inject' },
      { position: 13, at: 90, slot: 'postLoop', policy: 'judge', action: 'stop', reason: 'good enough' },
    ])
  })

  it('rejects a unit that is not positive', () => {
    const run = sessionTimeline('s', records([[0, init], [1, { type: 'runStart', runId: 'a', prompts: [] }]])).runs[0]!
    expect(() => timelineMarbles(run, 0)).toThrow(/unitMs must be a positive/)
  })
})
