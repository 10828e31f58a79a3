/**
 * Pending approvals as state: a tool call that needs approval is logged
 * (`approvalRequested`, so it is in `state.pendingApprovals`) and waits for
 * the first of two answers — the `approveTool` callback's, or
 * `agent.resolveApproval(callId, decision)` — which is logged
 * (`approvalDecided`); the other answer is ignored (`resolveApproval` says
 * so by returning `false`). A run that ends first (an abort) decides it as a
 * rejection by `abort`.
 */
import { Observable, type Subscription } from 'rxjs'
import { Approval, approvalOf, type ApprovalDecision, type ApprovalRequest, type ApproveTool } from '../policy/approval.js'
import type { AgentLogCommand } from './agent-log.js'

type Decider = 'approveTool' | 'resolveApproval' | 'abort'

/** The calls waiting for a decision and how to decide them. */
export class Approvals {
  private readonly waiting = new Map<string, (decision: ApprovalDecision, by: Decider) => boolean>()
  /** Decisions logged while no run waited (a suspended run of a durable session): the resumed run's gate answers with them. */
  private readonly decided = new Map<string, ApprovalDecision>()

  constructor(private readonly append: (command: AgentLogCommand) => void) {}

  /**
   * The approver a run asks: logs the request, then waits for `approver`
   * (when there is one) or {@link resolve}, whichever answers first.
   */
  gate(approver: ApproveTool | undefined): ApproveTool {
    return (request: ApprovalRequest) =>
      new Observable<ApprovalDecision>((subscriber) => {
        const toolCallId = request.toolCall.id
        const logged = this.decided.get(toolCallId)
        if (logged !== undefined) {
          // Requested and decided in the log already: not asked nor logged again.
          this.decided.delete(toolCallId)
          subscriber.next(logged)
          subscriber.complete()
          return
        }
        let decided = false
        let asking: Subscription | undefined
        const decide = (decision: ApprovalDecision, by: Decider): boolean => {
          if (decided) return false
          decided = true
          this.waiting.delete(toolCallId)
          asking?.unsubscribe()
          this.append({ type: 'approvalDecided', toolCallId, decision: normalized(decision), by })
          subscriber.next(decision)
          subscriber.complete()
          return true
        }
        this.waiting.set(toolCallId, decide)
        this.append({ type: 'approvalRequested', toolCallId, toolName: request.tool.name, args: request.args })
        if (approver !== undefined) {
          const answer = approvalOf(approver, request).subscribe((decision) => decide(decision, 'approveTool'))
          if (decided) answer.unsubscribe()
          else asking = answer
        }
        return () => {
          asking?.unsubscribe()
          if (!decided) {
            decided = true
            this.waiting.delete(toolCallId)
            this.append({ type: 'approvalDecided', toolCallId, decision: Approval.reject('the run ended before a decision'), by: 'abort' })
          }
        }
      })
  }

  /** Remembers a decision logged for a call no run waits on now: the run that resumes it gets `decision` without asking. */
  predecide(toolCallId: string, decision: ApprovalDecision): void {
    this.decided.set(toolCallId, decision)
  }

  /** Decides a waiting call; `false` when none with this id waits (unknown, or decided already). */
  resolve(toolCallId: string, decision: ApprovalDecision): boolean {
    return this.waiting.get(toolCallId)?.(decision, 'resolveApproval') ?? false
  }
}

/** Only the fields a decision has: what is logged must decode again. */
export function normalized(decision: ApprovalDecision): ApprovalDecision {
  if (decision.approved) return decision.args === undefined ? { approved: true } : { approved: true, args: decision.args }
  return decision.reason === undefined ? { approved: false } : { approved: false, reason: decision.reason }
}
