// Inserting an operator: redact secrets from messages before they are stored.
import { pipe } from 'rxjs'
import { agentLoop, composeTurn, defaultTurn, userMessage, type AgentMessage } from '../src/index.js'
import { mapMessages } from '../operators/index.js'
import { reply, scriptedModel } from '../marbles/index.js'

const SECRET = /sk-[A-Za-z0-9]{8,}/g

/** Replaces API keys in every text block of a message (tool-call arguments are left as they are). */
export const redact = (m: AgentMessage): AgentMessage =>
  m.role === 'custom'
    ? m
    : ({ ...m, content: m.content.map((c) => (c.type === 'text' ? { ...c, text: c.text.replace(SECRET, '[redacted]') } : c)) } as AgentMessage)

const { model, streamFn } = scriptedModel([reply.text('Your key is sk-abcdef123456, keep it safe.')])

export const run$ = agentLoop(userMessage('What is my key?'), { systemPrompt: '', messages: [], tools: [] }, {
  model,
  streamFn,
  // The default stages, with redaction right after the model's answer is streamed: the prompts and
  // answers are redacted before the tools run and `turnEnd` is emitted; tool results are not.
  turn: (s) =>
    composeTurn(
      s.preTurnPolicy, s.startTurn, s.transformContext, s.streamLlm,
      mapMessages(redact),
      s.dispatchTools, s.endTurn, s.postTurnPolicy, s.pollSteering, s.decideContinuation, s.postLoopPolicy, s.pollFollowUp,
    ),
})

// Not the same: wrapping the default turn redacts every message the turn stores, tool results
// included, but only after the tools ran on the answer as it was.
export const run2$ = agentLoop(userMessage('What is my key?'), { systemPrompt: '', messages: [], tools: [] }, {
  model: scriptedModel([reply.text('sk-abcdef123456')]).model,
  streamFn: scriptedModel([reply.text('sk-abcdef123456')]).streamFn,
  turn: (s) => pipe(defaultTurn(s), mapMessages(redact)),
})

if (import.meta.url === `file://${process.argv[1]}`) {
  run$.subscribe((e) => e.type === 'agentEnd' && console.log(JSON.stringify(e.result.messages.at(-1))))
}
