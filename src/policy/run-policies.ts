/** Runs one slot's policies in order and sums up what they decided. */
import { concatMap, from, map, Observable, of, reduce, takeWhile } from 'rxjs'
import type { PolicyDecisionEvent, PolicySlot } from '../types/event.js'
import type { AgentMessage } from '../types/message.js'
import { verdictOf, type Policy, type PolicyVerdict } from './policy.js'

/** What a slot decided: the events to emit, a stop (the first one wins), messages to inject. */
export interface SlotOutcome {
  readonly decisions: readonly PolicyDecisionEvent[]
  readonly stop?: { readonly reason: string; readonly by: string }
  readonly inject: readonly AgentMessage[]
}

const nothing: SlotOutcome = { decisions: [], inject: [] }

/**
 * Evaluates `policies` one after another (a later one sees nothing of an
 * earlier one's injection, but never runs after a stop).
 */
export function runPolicies<View>(
  slot: PolicySlot,
  policies: readonly Policy<View, PolicyVerdict>[],
  view: View,
): Observable<SlotOutcome> {
  if (policies.length === 0) return of(nothing)
  return from(policies).pipe(
    concatMap((policy) => verdictOf(policy, view).pipe(map((verdict) => ({ policy, verdict })))),
    takeWhile(({ verdict }) => verdict.action !== 'stop', true),
    reduce<{ policy: Policy<View, PolicyVerdict>; verdict: PolicyVerdict }, SlotOutcome>((outcome, { policy, verdict }) => {
      switch (verdict.action) {
        case 'continue':
          return outcome
        case 'stop':
          return {
            ...outcome,
            decisions: [...outcome.decisions, { type: 'policyDecision', slot, policy: policy.name, action: 'stop', reason: verdict.reason }],
            stop: { reason: verdict.reason, by: policy.name },
          }
        case 'inject':
          return {
            ...outcome,
            decisions: [...outcome.decisions, { type: 'policyDecision', slot, policy: policy.name, action: 'inject' }],
            inject: [...outcome.inject, ...verdict.messages],
          }
      }
    }, nothing),
  )
}
