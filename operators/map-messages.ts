import type { AgentMessage } from '../src/types/message.js'
import { isTurnState, nextState, type TurnOperator } from '../src/turn/turn-state.js'
import { defer, map } from 'rxjs'

/**
 * Rewrites messages as they are stored: every `messageEnd` event that
 * passes this stage, the same messages in a `turnEnd` that follows, and in
 * the transcript the state carries on. Streaming updates are left alone (they
 * are what the model sent); what is kept, and what later turns send, is the
 * rewritten message. `fn` must keep the role.
 *
 * It sees only the events of the stages before it: inserted after
 * `streamLlm`, it rewrites the prompts and answers (before the tools run and
 * `turnEnd` is emitted) but not the tool results; after the whole turn, it
 * rewrites every message the turn stores.
 *
 * ```
 * source: --u--E--T--S|        E: messageEnd(m), T: turnEnd(m), S: state holding m
 * result: --u--E'-T'-S'|       E': messageEnd(fn(m)), T' and S' hold fn(m)
 * ```
 *
 * @example Redact secrets before they are stored:
 * mapMessages((m) => m.role === 'assistant' ? { ...m, content: m.content.map(redact) } : m)
 */
export function mapMessages(fn: (message: AgentMessage) => AgentMessage): TurnOperator {
  // Per subscription: one operator instance may serve many runs at once.
  return (source) =>
    defer(() => {
      const rewritten = new Map<AgentMessage, AgentMessage>()
      return source.pipe(
      map((item) => {
        if (isTurnState(item)) {
          if (rewritten.size === 0) return item
          const swap = <M extends AgentMessage>(m: M): M => (rewritten.get(m) as M | undefined) ?? m
          const messages = Object.freeze(item.context.messages.map(swap))
          const next = nextState(item, {
            context: { ...item.context, messages },
            ...(item.assistant === undefined ? {} : { assistant: swap(item.assistant) }),
            toolResults: item.toolResults.map(swap),
          })
          rewritten.clear()
          return next
        }
        if (item.type === 'turnEnd') {
          if (rewritten.size === 0) return item
          const swap = <M extends AgentMessage>(m: M): M => (rewritten.get(m) as M | undefined) ?? m
          return { ...item, toolResults: item.toolResults.map(swap), ...(item.message === undefined ? {} : { message: swap(item.message) }) }
        }
        if (item.type !== 'messageEnd') return item
        const out = fn(item.message)
        if (out === item.message) return item
        rewritten.set(item.message, out)
        return { ...item, message: out }
      }),
    )
    })
}
