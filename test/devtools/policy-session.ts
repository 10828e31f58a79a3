/**
 * A real durable Agent run steered and stopped by policies, for the devtools
 * browser test: turn 0 calls `lookup` twice, a pre-dispatch policy skips one
 * call; a post-turn policy then injects a nudge; turn 1 answers, and another
 * post-turn policy stops the run.
 */
import * as t from 'io-ts'
import { map, timer } from 'rxjs'
import { Agent } from '../../src/agent/agent.js'
import type { SessionStore } from '../../src/agent/session-store.js'
import { Verdict, type Policies } from '../../src/policy/policy.js'
import { defineTool } from '../../src/tools/define-tool.js'
import { userMessage } from '../../src/types/message.js'
import { modelSpec } from '../../src/types/model.js'
import { reply } from '../../marbles/chunks.js'
import { scriptedModel } from '../../marbles/scripted-model.js'
import { spread } from './scripted-session.js'

const lookup = defineTool({ name: 'lookup', description: 'looks a term up', parameters: t.type({ term: t.string }), execute: ({ term }) => timer(40).pipe(map(() => `${term}: found`)) })

const policies: Policies = {
  preDispatch: [{ name: 'no-secrets', evaluate: ({ args }) => (args.term === 'password' ? Verdict.skip('secrets are not looked up') : Verdict.continue) }],
  postTurn: [
    { name: 'nudge', evaluate: ({ turnIndex }) => (turnIndex === 0 ? Verdict.inject(userMessage('Answer in one sentence.')) : Verdict.continue) },
    { name: 'one-answer', evaluate: ({ turnIndex }) => (turnIndex === 1 ? Verdict.stop('one answer is enough') : Verdict.continue) },
  ],
}

/** Runs the session `policy-session` to its end (stopped by `one-answer`). */
export async function policySession(store: SessionStore, sessionId = 'policy-session'): Promise<string> {
  const model = scriptedModel([
    spread(reply.toolCalls([{ id: 'l-1', name: 'lookup', args: { term: 'rxjs' } }, { id: 'l-2', name: 'lookup', args: { term: 'password' } }])),
    spread(reply.text('RxJS is a library for reactive streams.', { deltas: 3 })),
  ], { model: modelSpec('scripted', 'scripted-1') })
  const agent = await Agent.open({ store, sessionId, holder: 'test-process', id: 'policy-agent', systemPrompt: 'Be brief.', model: model.model, streamFn: model.streamFn, tools: [lookup], policies })
  await agent.prompt('What is rxjs? Also look up the password.')
  await agent.session!.close()
  return sessionId
}
