/** The words the timeline labels bars, marks and runs with. */
import type { PolicyAction, PolicySlot } from '../types/event.js'
import type { AgentMessage, AssistantMessage } from '../types/message.js'
import type { BarStatus } from './timeline-model.js'

const short = (s: string, n = 80): string => {
  const one = s.replace(/\s+/g, ' ').trim()
  return one.length > n ? `${one.slice(0, n - 1)}…` : one
}

/** The text of a message's text blocks, shortened (for labels and titles). */
export function messageGist(message: AgentMessage, n = 80): string {
  if (message.role === 'custom') return `custom: ${message.kind}`
  const texts = message.content.flatMap((c) => (c.type === 'text' ? [c.text] : []))
  return short(texts.join(' '), n)
}

/** A model bar's label: the model, what the message holds, how it stopped. */
export function assistantLabel(m: AssistantMessage): string {
  const calls = m.content.filter((c) => c.type === 'toolCall').length
  const parts = [m.model]
  if (m.content.some((c) => c.type === 'thinking')) parts.push('thinking')
  if (m.content.some((c) => c.type === 'text')) parts.push('text')
  if (calls > 0) parts.push(`${calls} tool call${calls === 1 ? '' : 's'}`)
  parts.push(m.stopReason)
  return parts.join(' · ')
}

/** How a model bar ended, by its message's stop reason. */
export const assistantStatus = (m: AssistantMessage): BarStatus => (m.stopReason === 'error' ? 'error' : m.stopReason === 'aborted' ? 'aborted' : 'ok')

/** A policy decision's mark: where (slot), who (policy), what (action), and why when it says. */
export function policyLabel(d: { readonly slot: PolicySlot; readonly policy: string; readonly action: PolicyAction; readonly reason?: string }): string {
  return `${d.slot} ${d.policy}: ${d.action}${d.reason === undefined ? '' : ` (${short(d.reason)})`}`
}
