/**
 * The demo: an agent run over this project's files, in a durable session.
 *
 * Offline by default: the model is scripted (no network, no key), but it
 * reads the tool results it gets back and decides its next step from them, so
 * every number it prints was computed by the tools during this run. With a
 * key in the environment it talks to a real model instead (same tools, same
 * agent).
 *
 * The session is kept in PGlite (PostgreSQL compiled to WebAssembly, in this
 * process) under `.rxagent/demo-session/` of the current directory: every
 * log entry is committed as it happens. Running the demo again offers to
 * continue that session (without a terminal it continues, and says so);
 * `--kill-after <n>` kills the demo's own process with SIGKILL once n more
 * log entries are committed, so that the next run shows what survived and
 * goes on from there. `--serve <port>` serves the session to readers as
 * Server-Sent Events while it runs, and after, until Ctrl-C.
 *
 *   npm run demo                                   # offline, scripted; continues the last session
 *   npm run demo -- --fresh                        # a new session
 *   npm run demo -- --kill-after 12                # crash (SIGKILL) after 12 log entries; run again to resume
 *   npm run demo -- --session-dir /tmp/demo        # keep the session elsewhere
 *   npm run demo -- --serve 8080                   # also serve the session as Server-Sent Events (curl -N the printed URL)
 *   ANTHROPIC_API_KEY=… npm run demo               # claude-sonnet-5-5
 *   OPENAI_API_KEY=… npm run demo                  # gpt-6-luna (Responses API)
 *   GEMINI_API_KEY=… npm run demo                  # gemini-3.8-flash
 *   OPENAI_COMPATIBLE_BASE_URL=http://localhost:11434/v1 OPENAI_COMPATIBLE_MODEL=qwen3:8b npm run demo   # Ollama, vLLM, …
 *   RXAGENT_MODEL=anthropic/claude-haiku-4-5 …     # any catalog model;  RXAGENT_OFFLINE=1 (or --offline) forces the scripted model
 */
import { relative, resolve } from 'node:path'
import { createInterface } from 'node:readline/promises'
import { parseArgs } from 'node:util'
import { Agent, SessionLeaseError, type AgentMessage, type AgentRunEvent } from '../src/index.js'
import { pgliteSessionStore } from '../src/sessions/pglite-store.js'
import { serveSessions } from '../src/sessions/serve-sessions.js'
import { DEFAULT_DEVTOOLS_PORT, devtoolsSessionUrl } from '../src/devtools/index.js'
import { chooseModel, demoTools, questionOf } from './demo-brain.js'

/** The session's lease: renewed every third of it while the demo runs; after a crash the next run waits at most this long. */
const LEASE_MS = 5_000
const usage = 'usage: npm run demo -- [project dir] [--fresh] [--kill-after <n>] [--session-dir <dir>] [--serve <port>] [--offline]'
const { values: flags, positionals } = (() => {
  try {
    return parseArgs({
      allowPositionals: true,
      options: { fresh: { type: 'boolean' }, 'kill-after': { type: 'string' }, 'session-dir': { type: 'string' }, offline: { type: 'boolean' }, serve: { type: 'string' } },
    })
  } catch (error) {
    console.error(`${(error as Error).message}\n${usage}`)
    process.exit(2)
  }
})()
const killAfter = flags['kill-after'] === undefined ? undefined : Number(flags['kill-after'])
if (killAfter !== undefined && !(Number.isInteger(killAfter) && killAfter > 0)) {
  console.error(`--kill-after takes a whole number of log entries ≥ 1, got ${JSON.stringify(flags['kill-after'])}\n${usage}`)
  process.exit(2)
}

const servePort = flags.serve === undefined ? undefined : Number(flags.serve)
if (servePort !== undefined && !(Number.isInteger(servePort) && servePort >= 0 && servePort <= 65_535)) {
  console.error(`--serve takes a port (0: any free one), got ${JSON.stringify(flags.serve)}\n${usage}`)
  process.exit(2)
}

const root = resolve(positionals[0] ?? '.')
const dataDir = resolve(flags['session-dir'] ?? resolve('.rxagent', 'demo-session'))
const out = process.stdout
const dim = (s: string): string => (out.isTTY ? `\x1b[2m${s}\x1b[0m` : s)
const shown = (path: string): string => (relative('.', path).startsWith('..') ? path : relative('.', path) || '.')

const chosen = chooseModel(flags.offline === true)
out.write(dim(`session store: PGlite (embedded PostgreSQL, this process) in ${shown(dataDir)}/ — kept between runs; --fresh starts a new session\n`))
const store = await pgliteSessionStore({ dataDir })

// --- Which session: the last one, or a new one. ------------------------------

const [previous] = flags.fresh === true ? [] : await store.list({ prefix: 'demo-', limit: 1 })
let resume = previous !== undefined
if (previous !== undefined) {
  const what = `session ${previous.sessionId} (${previous.length} log entries, last written ${new Date(previous.updatedAt).toLocaleString()})`
  if (process.stdin.isTTY && out.isTTY) {
    const rl = createInterface({ input: process.stdin, output: out })
    resume = !/^n/i.test((await rl.question(`Continue ${what}? [Y/n] `)).trim())
    rl.close()
  } else {
    out.write(dim(`not a terminal: continuing ${what} (\`npm run demo -- --fresh\` starts a new one)\n`))
  }
}
const sessionId = resume ? previous!.sessionId : `demo-${new Date().toISOString().replace(/[-:.]/g, '').slice(0, 15)}-${process.pid}`
const options = {
  store,
  sessionId,
  systemPrompt: 'You are a careful code analyst. Use the tools.',
  model: chosen.model,
  streamFn: chosen.streamFn,
  tools: demoTools(root),
  toolTimeoutMs: 10_000,
  maxTurns: 12,
  holder: `demo:${process.pid}`,
  // One writer per session: a lease renewed while the demo runs. A process killed with SIGKILL keeps it until it expires.
  lease: { ttlMs: LEASE_MS },
} as const
const agent = await Agent.open(options).catch(async (error: unknown) => {
  if (!(error instanceof SessionLeaseError) || error.heldBy === undefined) throw error
  out.write(dim(`the session's lease is still held by ${error.heldBy.holder} (a run that was killed?) until ${new Date(error.heldBy.expiresAt).toLocaleTimeString()}: waiting for it to expire…\n`))
  return Agent.open({ ...options, lease: { ttlMs: LEASE_MS, onBusy: 'wait', waitMs: 2 * LEASE_MS } })
})
const session = agent.session!
if (agent.state.model.provider !== chosen.model.provider || agent.state.model.modelId !== chosen.model.modelId) agent.setModel(chosen.model)
out.write(dim(`${resume ? 'resumed' : 'new'} session ${sessionId} · model: ${chosen.label}\n`))
if (resume) showSettled(agent)
// Readers: the session as Server-Sent Events, resumable after Last-Event-ID (rxagent/sessions' serveSessions).
const server = servePort === undefined ? undefined : await serveSessions(store, { port: servePort })
if (server !== undefined) out.write(dim(`readers: ${server.url}/sessions/${encodeURIComponent(sessionId)}/events (Server-Sent Events; try curl -N)\n`))

// --- The run: go on with an interrupted one, or ask the next question. -------

const last = lastLlmMessage(agent.state.messages)
const interrupted = last !== undefined && last.role !== 'assistant'
const cutOff = last?.role === 'assistant' && last.stopReason === 'aborted'
const asked = agent.state.messages.filter((m) => m.role === 'user' && /how big is/i.test(textOf(m))).length
agent.subscribe(print)
if (killAfter !== undefined) {
  const from = session.durableSeq
  session.durable$.subscribe((seq) => {
    if (seq - from < killAfter) return
    out.write(`\n✂ --kill-after ${killAfter}: ${seq - from} log entries committed since this run started (${seq} in all) — SIGKILL now. Run the demo again to see what survived and go on.\n`)
    process.kill(process.pid, 'SIGKILL')
  })
}
try {
  if (interrupted) {
    out.write(dim('continuing the interrupted run (continue())\n\n'))
    await agent.continue()
  } else if (cutOff) {
    await agent.prompt('Go on from where you were cut off.')
  } else {
    await agent.prompt(questionOf(asked))
  }
  await session.close()
  out.write(dim(`— session ${sessionId}: ${agent.log.length} log entries committed in ${shown(dataDir)}/. \`npm run demo\` continues it with the next question; \`npm run demo -- --fresh\` starts another.\n`))
  // PGlite serves one process per directory: devtools opens the store once this demo has closed it.
  const devtoolsStore = flags['session-dir'] === undefined ? '' : ` -- --store pglite:${shown(dataDir)}`
  out.write(dim(`see this run drawn as a timeline: \`npm run devtools${devtoolsStore}\`, then open ${devtoolsSessionUrl(`http://127.0.0.1:${DEFAULT_DEVTOOLS_PORT}/`, sessionId)}\n`))
  if (server !== undefined) {
    out.write(dim(`serving the session's events at ${server.url} until Ctrl-C\n`))
    await new Promise<void>((stop) => ['SIGINT', 'SIGTERM'].forEach((signal) => process.once(signal, () => stop())))
  }
} catch (error) {
  console.error('demo failed:', error)
  process.exitCode = 1
} finally {
  await session.close().catch(() => {})
  await server?.close()
  await store.close()
}

// --- Printing. -----------------------------------------------------------------

function print(event: AgentRunEvent): void {
  switch (event.type) {
    case 'streamRetry':
      out.write(dim(`\n  ↻ ${event.error.message} — retrying in ${(event.delayMs / 1000).toFixed(1)} s (the partial answer above is discarded)\n`))
      break
    case 'messageEnd':
      if (event.message.role === 'user') out.write(`> ${textOf(event.message)}\n\n`)
      break
    case 'messageUpdate':
      if (event.chunk.type === 'textDelta') out.write(event.chunk.text)
      break
    case 'toolExecutionStart':
      out.write(dim(`  → ${event.toolName} ${JSON.stringify(event.args)}\n`))
      break
    case 'toolExecutionUpdate':
      out.write(dim(`    … ${textOf({ content: event.partialResult.content })}\n`))
      break
    case 'toolExecutionEnd': {
      const lines = textOf({ content: event.result.content }).split('\n')
      out.write(dim(`    ${event.isError ? '✗' : '✓'} ${lines[0]}${lines.length > 1 ? ` (+${lines.length - 1} lines)` : ''}\n`))
      break
    }
    case 'turnEnd':
      out.write('\n')
      break
    case 'agentEnd': {
      const { usage, cost, stopReason, messages } = event.result
      out.write(
        `\n${dim('—')} stop: ${stopReason}, ${messages.length} messages, ` +
          `tokens: ${usage.input} in + ${usage.output} out + ${usage.cacheRead} cached = ${usage.total}, ` +
          `cost: $${cost.total.toFixed(6)}\n`,
      )
      if (event.result.error !== undefined) out.write(`${dim('—')} ${event.result.error}\n`)
      break
    }
  }
}

/** What the session's log holds now, as the process that crashed left it and `Agent.open` settled it. */
function showSettled(resumed: Agent): void {
  const messages = resumed.state.messages
  const log = resumed.log
  let lastRun = log.length - 1
  while (lastRun >= 0 && log[lastRun]!.type !== 'runStart') lastRun--
  const failed = lastRun < 0 ? undefined : log.slice(lastRun).find((e) => e.type === 'runFailed')
  out.write(dim(`the session holds ${messages.length} messages (${resumed.log.length} log entries); the last ones:\n`))
  for (const m of messages.slice(-8)) out.write(dim(`  ${summary(m)}\n`))
  if (failed?.type === 'runFailed') {
    out.write(dim(`its last run was cut off (${failed.error}): settled on open: what had streamed of an answer is kept as 'aborted', every unanswered tool call has an error result\n`))
  }
  out.write('\n')
}

function summary(m: AgentMessage): string {
  const first = (s: string) => (s.split('\n')[0] ?? '').slice(0, 90)
  switch (m.role) {
    case 'user':
      return `user: ${first(textOf(m))}`
    case 'assistant': {
      const calls = m.content.flatMap((c) => (c.type === 'toolCall' ? [`${c.name}(…)`] : []))
      return `assistant${m.stopReason === 'aborted' ? ' [aborted: cut off]' : ''}: ${first(textOf(m))}${calls.length > 0 ? ` → ${calls.join(', ')}` : ''}`
    }
    case 'toolResult':
      return `${m.isError ? '✗' : '✓'} ${m.toolName}: ${first(textOf(m))}`
    default:
      return m.role
  }
}

function lastLlmMessage(messages: readonly AgentMessage[]): Exclude<AgentMessage, { role: 'custom' }> | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!
    if (m.role !== 'custom') return m
  }
  return undefined
}

function textOf(m: { readonly content: readonly { readonly type: string; readonly text?: string }[] | string }): string {
  return typeof m.content === 'string' ? m.content : m.content.map((c) => (c.type === 'text' ? (c.text ?? '') : '')).join('')
}
