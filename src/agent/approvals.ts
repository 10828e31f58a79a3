/**
 * Pending approvals as state: a tool call that needs approval is logged
 * (`approvalRequested`, so it is in `state.pendingApprovals`) and waits for
 * the first of two answers — the `approveTool` callback's, or
 * `agent.resolveApproval(callId, decision)` — which is logged
 * (`approvalDecided`); the other answer is ignored (`resolveApproval` says
 * so by returning `false`). A run that ends first (an abort) decides it as a
 * rejection by `abort`.
 *
 * Write-ahead for a durable session (`Agent.open`): an approval is answered
 * to the run only once its `approvalDecided` entry is committed (the
 * session's `durable$` has passed it), so a process killed after the tool
 * started cannot leave the call pending for the next one to ask, and run,
 * again. A rejection runs nothing: it is answered at once. An agent without a
 * session answers every decision at once, as it is logged.
 */
import { filter, Observable, take, type Subscriber, type Subscription } from 'rxjs'
import { Approval, approvalOf, type ApprovalDecision, type ApprovalRequest, type ApproveTool } from '../policy/approval.js'
import type { AgentLogCommand, AgentLogEntry } from './agent-log.js'

type Decider = 'approveTool' | 'resolveApproval' | 'abort'

/** The calls waiting for a decision and how to decide them. */
export class Approvals {
  private readonly waiting = new Map<string, (decision: ApprovalDecision, by: Decider) => boolean>()
  /** Decisions logged while no run waited (a suspended run of a durable session), with their log positions: the resumed run's gate answers with them. */
  private readonly decided = new Map<string, { readonly decision: ApprovalDecision; readonly seq: number }>()

  /**
   * @param append logs a command, giving back its entry.
   * @param durable$ the committed log length of the agent's durable session (see the module comment); `undefined` for an agent without one.
   */
  constructor(
    private readonly append: (command: AgentLogCommand) => AgentLogEntry,
    private readonly durable$: () => Observable<number> | undefined = () => undefined,
  ) {}

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
          return this.answer(subscriber, logged.decision, logged.seq)
        }
        let decided = false
        let asking: Subscription | undefined
        let committing: Subscription | undefined
        const decide = (decision: ApprovalDecision, by: Decider): boolean => {
          if (decided) return false
          decided = true
          this.waiting.delete(toolCallId)
          asking?.unsubscribe()
          const entry = this.append({ type: 'approvalDecided', toolCallId, decision: normalized(decision), by })
          committing = this.answer(subscriber, decision, entry.seq)
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
          committing?.unsubscribe()
          if (!decided) {
            decided = true
            this.waiting.delete(toolCallId)
            this.append({ type: 'approvalDecided', toolCallId, decision: Approval.reject('the run ended before a decision'), by: 'abort' })
          }
        }
      })
  }

  /** Remembers a decision logged (at `seq`) for a call no run waits on now: the run that resumes it gets `decision` without asking. */
  predecide(toolCallId: string, decision: ApprovalDecision, seq: number): void {
    this.decided.set(toolCallId, { decision, seq })
  }

  /**
   * Answers `decision` (logged at `seq`) to the run: at once, or — an approval
   * in a durable session — once the entry is committed (see the module
   * comment). A failed append never answers: the session's failure ends the
   * run. Gives back the wait, if any, for the run's teardown.
   */
  private answer(subscriber: Subscriber<ApprovalDecision>, decision: ApprovalDecision, seq: number): Subscription | undefined {
    const wait = committed(this.durable$(), decision, seq)
    if (wait === undefined) {
      subscriber.next(decision)
      subscriber.complete()
      return undefined
    }
    return wait.subscribe(() => {
      subscriber.next(decision)
      subscriber.complete()
    })
  }

  /** Decides a waiting call; `false` when none with this id waits (unknown, or decided already). */
  resolve(toolCallId: string, decision: ApprovalDecision): boolean {
    return this.waiting.get(toolCallId)?.(decision, 'resolveApproval') ?? false
  }
}

/** What {@link Approvals.answer} waits on, if anything: nothing for a rejection or an agent without a session. */
function committed(durable$: Observable<number> | undefined, decision: ApprovalDecision, seq: number): Observable<number> | undefined {
  if (durable$ === undefined || !decision.approved) return undefined
  return durable$.pipe(
    filter((length) => length > seq),
    take(1),
  )
}

/** Only the fields a decision has: what is logged must decode again. */
export function normalized(decision: ApprovalDecision): ApprovalDecision {
  if (decision.approved) return decision.args === undefined ? { approved: true } : { approved: true, args: decision.args }
  return decision.reason === undefined ? { approved: false } : { approved: false, reason: decision.reason }
}
