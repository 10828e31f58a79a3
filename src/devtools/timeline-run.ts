/**
 * One run of a session's timeline, built record by record (`timeline.ts`
 * splits the records into runs): its lanes, bars and marks, turns, messages,
 * pending approvals and policy decisions (a stream's marks: `timeline-stream.ts`).
 */
import type { AgentLogEntry } from '../agent/agent-log.js'
import type { AgentMessage } from '../types/message.js'
import { assistantLabel, assistantStatus, messageGist, policyLabel } from './timeline-labels.js'
import type { BarStatus, MarkKind, MessageItem, PendingApprovalView, PolicyDecisionView, RunTimeline, TimelineBar, TimelineLane, TimelineMark, TurnSummary } from './timeline-model.js'
import { drawStreamMarks } from './timeline-stream.js'

type MutableBar = { -readonly [K in keyof TimelineBar]: TimelineBar[K] }
/** `firstTokenAt`: when its first chunk came; `retriesDrawn`: its stream records drew its retries and fallbacks. */
type MutableTurn = { -readonly [K in keyof TurnSummary]: TurnSummary[K] } & { firstTokenAt?: number; retriesDrawn?: boolean }
interface Lane {
  readonly id: string
  readonly kind: TimelineLane['kind']
  label: string
  readonly bars: MutableBar[]
  readonly marks: TimelineMark[]
}

/** A run as its records arrive; `build()` gives its {@link RunTimeline}. */
export class RunBuilder {
  end: number | undefined
  status: RunTimeline['status'] = 'running'
  stopReason: string | undefined
  error: string | undefined
  title = ''
  from: number
  to: number
  readonly inputs: Lane = { id: 'inputs', kind: 'inputs', label: 'inputs', bars: [], marks: [] }
  readonly model: Lane = { id: 'model', kind: 'model', label: 'model', bars: [], marks: [] }
  readonly tools = new Map<string, Lane>()
  readonly turns: MutableTurn[] = []
  readonly messages: MessageItem[] = []
  readonly pending = new Map<string, PendingApprovalView>()
  readonly decisions: PolicyDecisionView[] = []
  turn: MutableTurn | undefined
  modelBar: MutableBar | undefined

  constructor(
    readonly runId: string,
    readonly index: number,
    readonly start: number,
    /** Tool names by call id, for the whole session: a resumed run executes calls an earlier run's message made. */
    readonly callNames: Map<string, string>,
  ) {
    this.from = start
    this.to = start
  }

  see(at: number): void {
    this.from = Math.min(this.from, at)
    this.to = Math.max(this.to, at)
  }

  mark(lane: Lane, kind: MarkKind, at: number, label: string, position: number): void {
    lane.marks.push({ kind, at, label, position })
  }

  tool(toolCallId: string): Lane {
    let lane = this.tools.get(toolCallId)
    if (lane === undefined) {
      lane = { id: `tool:${toolCallId}`, kind: 'tool', label: this.toolLabel(toolCallId), bars: [], marks: [] }
      this.tools.set(toolCallId, lane)
    }
    return lane
  }

  toolLabel(toolCallId: string): string {
    return `${this.callNames.get(toolCallId) ?? 'tool'} ${toolCallId}`
  }

  /** Open bars end with the run. */
  close(at: number, status: BarStatus): void {
    for (const lane of [this.model, ...this.tools.values()])
      for (const bar of lane.bars)
        if (bar.end === undefined) {
          bar.end = at
          bar.status = status
        }
    if (this.turn !== undefined && this.turn.end === undefined) this.turn.end = at
    this.modelBar = undefined
    this.pending.clear()
  }

  /** A later run started while this one was open: it ends at its last record. */
  interrupt(): void {
    this.end = this.to
    this.status = 'interrupted'
    this.close(this.to, 'aborted')
  }

  build(): RunTimeline {
    const lanes: TimelineLane[] = [this.inputs, this.model, ...this.tools.values()]
    return {
      runId: this.runId,
      index: this.index,
      start: this.start,
      end: this.end,
      status: this.status,
      stopReason: this.stopReason,
      error: this.error,
      title: this.title,
      from: this.from,
      to: this.to,
      lanes: lanes.map((l) => ({ id: l.id, kind: l.kind, label: l.label, bars: l.bars.map((b) => ({ ...b })), marks: [...l.marks] })),
      turns: this.turns.map(({ firstTokenAt: _, retriesDrawn: __, ...t }) => t),
      messages: [...this.messages],
      pendingApprovals: [...this.pending.values()],
      policyDecisions: [...this.decisions],
    }
  }

  message(message: AgentMessage, at: number, position: number): void {
    this.messages.push({ position, at, message })
    switch (message.role) {
      case 'assistant': {
        for (const c of message.content) if (c.type === 'toolCall') this.callNames.set(c.id, c.name)
        const bar = this.modelBar
        if (bar !== undefined) {
          bar.end = at
          bar.status = assistantStatus(message)
          bar.label = assistantLabel(message)
          bar.position = position
          this.modelBar = undefined
        } else {
          this.model.bars.push({ id: `message-${position}`, kind: 'model', start: at, end: at, status: assistantStatus(message), label: assistantLabel(message), position })
        }
        const turn = this.turn
        if (turn !== undefined) {
          turn.model = message.model
          turn.modelMs = at - turn.start
          turn.inputTokens += message.usage.input
          turn.outputTokens += message.usage.output
          turn.cacheReadTokens += message.usage.cacheRead
          turn.cacheWriteTokens += message.usage.cacheWrite
          turn.totalTokens += message.usage.total
          turn.cost += message.cost.total
          turn.toolCalls += message.content.filter((c) => c.type === 'toolCall').length
        }
        break
      }
      case 'toolResult': {
        this.callNames.set(message.toolCallId, message.toolName)
        const lane = this.tool(message.toolCallId)
        lane.label = this.toolLabel(message.toolCallId)
        const bar = [...lane.bars].reverse().find((b) => b.kind === 'tool')
        if (bar !== undefined) {
          bar.position = position
          if (message.isError) bar.status = 'error'
        }
        break
      }
      case 'user':
        if (this.title === '') this.title = messageGist(message)
        this.mark(this.inputs, 'user', at, messageGist(message), position)
        break
      case 'custom':
        this.mark(this.inputs, 'command', at, `custom message: ${message.kind}`, position)
        break
    }
  }

  entry(e: AgentLogEntry, at: number, position: number): void {
    switch (e.type) {
      case 'turnStart': {
        this.turn = { turnIndex: e.turnIndex, start: at, end: undefined, model: undefined, modelMs: undefined, ttftMs: undefined, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, totalTokens: 0, cost: 0, toolCalls: 0 }
        this.turns.push(this.turn)
        this.modelBar = { id: `turn-${e.turnIndex}`, kind: 'model', start: at, end: undefined, status: 'running', label: `turn ${e.turnIndex}` }
        this.model.bars.push(this.modelBar)
        break
      }
      case 'turnEnd':
        if (this.turn !== undefined) this.turn.end = at
        break
      case 'messageEnd':
        this.message(e.message, at, position)
        if (e.stream !== undefined && e.message.role === 'assistant') drawStreamMarks(this, e.stream, position)
        break
      case 'toolExecutionStart': {
        const lane = this.tool(e.toolCallId)
        lane.label = this.toolLabel(e.toolCallId)
        lane.bars.push({ id: `tool-${e.toolCallId}`, kind: 'tool', start: at, end: undefined, status: 'running', label: lane.label })
        break
      }
      case 'toolExecutionEnd': {
        const bar = this.tool(e.toolCallId).bars.find((b) => b.kind === 'tool' && b.end === undefined)
        if (bar !== undefined) {
          bar.end = at
          if (bar.status === 'running') bar.status = 'ok'
        }
        break
      }
      case 'approvalRequested': {
        this.callNames.set(e.toolCallId, e.toolName)
        const lane = this.tool(e.toolCallId)
        lane.label = this.toolLabel(e.toolCallId)
        lane.bars.push({ id: `approval-${e.toolCallId}`, kind: 'approval', start: at, end: undefined, status: 'waiting', label: `${e.toolName} waits for approval` })
        this.mark(lane, 'approvalRequested', at, `approval requested for ${e.toolName}`, position)
        this.pending.set(e.toolCallId, { runId: this.runId, toolCallId: e.toolCallId, toolName: e.toolName, args: e.args, at })
        break
      }
      case 'approvalDecided': {
        const lane = this.tool(e.toolCallId)
        const bar = lane.bars.find((b) => b.kind === 'approval' && b.end === undefined)
        const approved = e.decision.approved
        if (bar !== undefined) {
          bar.end = at
          bar.status = approved ? 'ok' : 'rejected'
          bar.label = `${approved ? 'approved' : 'rejected'} by ${e.by}`
        }
        const why = e.decision.approved ? '' : `: ${e.decision.reason}`
        this.mark(lane, 'approvalDecided', at, `${approved ? 'approved' : 'rejected'} by ${e.by}${why}`, position)
        this.pending.delete(e.toolCallId)
        break
      }
      case 'enqueue':
        this.mark(this.inputs, e.queue, at, `${e.queue === 'steering' ? 'steering' : 'follow-up'}: ${messageGist(e.message)}`, position)
        break
      case 'dequeue':
        this.mark(this.inputs, 'dequeue', at, `took ${e.count} ${e.queue === 'steering' ? 'steering' : 'follow-up'} message${e.count === 1 ? '' : 's'}`, position)
        break
      case 'policyDecision': {
        const { slot, policy, action, reason, toolCallId } = e
        this.decisions.push({ position, at, slot, policy, action, ...(reason === undefined ? {} : { reason }), ...(toolCallId === undefined ? {} : { toolCallId }) })
        this.mark(toolCallId === undefined ? this.model : this.tool(toolCallId), 'policy', at, policyLabel(e), position)
        break
      }
      case 'agentEnd':
        this.end = at
        this.status = 'done'
        this.stopReason = e.stopReason
        this.error = e.error
        // A log written before `policyDecision` entries: the stop is drawn from the run's end.
        if ((e.stopReason === 'policyStop' || e.stopReason === 'maxTurns') && !this.decisions.some((d) => d.action === 'stop')) {
          this.mark(this.model, 'policy', at, `stopped: ${e.stopReason}${e.error === undefined ? '' : ` (${e.error})`}`, position)
        }
        this.close(at, e.stopReason === 'aborted' ? 'aborted' : e.stopReason === 'error' ? 'error' : 'ok')
        break
      case 'runFailed':
        this.end = at
        this.status = 'failed'
        this.error = e.error
        this.close(at, 'error')
        break
      case 'model':
        this.mark(this.inputs, 'command', at, `model set to ${e.model.modelId}`, position)
        break
      case 'tools':
      case 'systemPrompt':
      case 'planMode':
      case 'clearQueue':
      case 'reset':
        this.mark(this.inputs, 'command', at, e.type, position)
        break
      default:
        break
    }
  }
}

