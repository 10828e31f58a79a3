/**
 * A child process for the approval-from-another-process test (run with
 * test/support/ts-register.mjs):
 *
 *   ask <dataDir>      opens session `approve` on the PGlite store in
 *                      <dataDir>, prompts; the model asks for `rm` (needs
 *                      approval) and `echo`; once the approval request is
 *                      committed prints `pending <callId>` and exits at once
 *                      (no close: its lease expires by itself)
 *   resolve <dataDir>  opens the session (waiting for that lease), prints
 *                      `found {"pending":[…],"running":…}`, approves the call,
 *                      awaits the resumed run, prints `done <transcript json>`
 *                      and the tool runs as `ran <callId>` lines
 */
import * as t from 'io-ts'
import { from } from 'rxjs'
import { Agent } from '../../../src/agent/agent.js'
import { pgliteSessionStore } from '../../../src/sessions/pglite-store.js'
import { defineTool } from '../../../src/tools/define-tool.js'
import type { StreamFn } from '../../../src/types/request.js'
import { modelSpec } from '../../../src/types/model.js'
import { reply } from '../../../marbles/chunks.js'

const [mode, dataDir] = process.argv.slice(2)
const say = (line: string): void => void process.stdout.write(`${line}\n`)
const rm = defineTool({ name: 'rm', description: 'Deletes.', parameters: t.type({ path: t.string }), needsApproval: true, execute: ({ path }, c) => (say(`ran ${c.toolCallId}`), `deleted ${path}`) })
const echo = defineTool({ name: 'echo', description: 'Echoes.', parameters: t.type({ text: t.string }), execute: ({ text }, c) => (say(`ran ${c.toolCallId}`), `echo ${text}`) })
const answers = mode === 'ask' ? [reply.toolCalls([{ id: 'x-rm1', name: 'rm', args: { path: '/tmp/x' } }, { id: 'x-e1', name: 'echo', args: { text: 'hi' } }])] : [reply.text('all done')]
let calls = 0
const streamFn: StreamFn = () => from(answers[calls++] ?? [])

const store = await pgliteSessionStore({ dataDir: dataDir! })
const agent = await Agent.open({
  store,
  sessionId: 'approve',
  systemPrompt: 'sys',
  model: modelSpec('child', 'child-1'),
  streamFn,
  tools: [rm, echo],
  approveTool: 'resolveApproval',
  holder: `${mode}:${process.pid}`,
  lease: mode === 'ask' ? { ttlMs: 1500 } : { onBusy: 'wait', waitMs: 60_000 },
})
if (mode === 'ask') {
  void agent.prompt('clean up')
  await new Promise<void>((resolve) => {
    const sub = agent.state$.subscribe((s) => s.pendingApprovals.length > 0 && (resolve(), queueMicrotask(() => sub.unsubscribe())))
  })
  await agent.session!.flush()
  say(`pending ${agent.state.pendingApprovals[0]!.toolCallId}`)
  process.exit(0)
} else {
  say(`found ${JSON.stringify({ pending: agent.state.pendingApprovals.map((p) => p.toolCallId), running: agent.state.isRunning })}`)
  if (!agent.resolveApproval('x-rm1', { approved: true })) throw new Error('x-rm1 was not pending')
  await agent.waitForIdle()
  await agent.session!.close()
  say(`done ${JSON.stringify(agent.state.messages)}`)
  await store.close()
  process.exit(0)
}
