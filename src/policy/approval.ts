/** The tool approval gate: a callback asked before a tool call runs. */
import { isAsyncAnswer } from '../rx/user-callback.js'
import { catchError, defaultIfEmpty, from, of, take, type Observable, type ObservableInput } from 'rxjs'
import type { ToolCallContent } from '../types/content.js'
import type { AgentTool } from '../types/tool.js'
import { errorText } from '../types/codec.js'

/** Run the call (optionally with other arguments), or reject it with a reason the model sees. */
export type ApprovalDecision =
  | { readonly approved: true; readonly args?: Record<string, unknown> }
  | { readonly approved: false; readonly reason?: string }

/** What the approver is asked about. */
export interface ApprovalRequest {
  readonly toolCall: ToolCallContent
  readonly tool: AgentTool
  /** The arguments as they stand after pre-dispatch policies. */
  readonly args: Record<string, unknown>
}

/**
 * Asked once per tool call, in call order, before any call of the batch runs
 * (again only if the pre-dispatch policies change arguments it rewrote: a
 * rewrite goes through them again, see `planCall`).
 */
export type ApproveTool = (request: ApprovalRequest) => ApprovalDecision | ObservableInput<ApprovalDecision>

/** Decision constructors. */
export const Approval = {
  approve: { approved: true } as const,
  approveWith: (args: Record<string, unknown>): ApprovalDecision => ({ approved: true, args }),
  reject: (reason?: string): ApprovalDecision => (reason === undefined ? { approved: false } : { approved: false, reason }),
}

/**
 * The approver's decision as exactly one value. An approver that throws,
 * errors or completes without deciding rejects the call: a gate must not
 * fail open.
 */
export function approvalOf(approve: ApproveTool, request: ApprovalRequest): Observable<ApprovalDecision> {
  const failed = (error: unknown): ApprovalDecision =>
    Approval.reject(`the approver failed: ${errorText(error)}`)
  let raw: ApprovalDecision | ObservableInput<ApprovalDecision>
  try {
    raw = approve(request)
  } catch (error) {
    return of(failed(error))
  }
  if (!isAsyncAnswer<ApprovalDecision>(raw)) return of(raw)
  return from(raw).pipe(
    take(1),
    defaultIfEmpty(Approval.reject('the approver gave no decision')),
    catchError((error: unknown) => of(failed(error))),
  )
}
