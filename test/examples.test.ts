import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import * as t from 'io-ts'
import { pipe } from 'rxjs'
import { redact, run$, run2$ } from '../examples/redact.js'
import { mapMessages } from '../operators/map-messages.js'
import { agentLoop, composeTurn, defaultTurn, type AgentLoopConfig } from '../src/loop/agent-loop.js'
import { defineTool } from '../src/tools/define-tool.js'
import { userMessage, type AgentMessage } from '../src/types/message.js'
import { chunk, reply, runAgentMarbles, scriptedModel } from '../marbles/index.js'
import { collect, context, hello, resultOf, textOf } from './helpers.js'
import { decodeAgentLog, type AgentLogEntry } from '../src/agent/agent-log.js'
import { pgliteSessionStore } from '../src/sessions/pglite-store.js'
import { repairTranscript } from '../src/types/settle.js'
import { Agent } from '../src/agent/agent.js'
import { demoTools, scriptedStream } from '../examples/demo-brain.js'
import { openRaw, until } from './sessions/sse-support.js'

describe('README examples', () => {
  it('an inserted operator redacts what is stored, both ways of inserting it', () => {
    for (const run of [run$, run2$]) {
      const events = collect(run)
      const stored = resultOf(events).messages.at(-1)!
      expect(textOf(stored as never)).not.toMatch(/sk-/)
      const end = events.find((e) => e.type === 'messageEnd' && e.message.role === 'assistant')
      expect(end?.type === 'messageEnd' && textOf(end.message as never)).toMatch(/\[redacted\]/)
    }
  })

  describe('the two redaction forms differ as the README says', () => {
    const secret = 'sk-abcdef123456'
    const echo = defineTool({ name: 'echo', description: 'Echoes its text.', parameters: t.type({ text: t.string }), execute: ({ text }) => `echo: ${text}` })
    const runWith = (turn: AgentLoopConfig['turn']) => {
      const model = scriptedModel([reply.toolCalls([{ id: 'c1', name: 'echo', args: { text: secret } }], { text: `calling ${secret}` }), reply.text(`done ${secret}`)])
      const events = collect(agentLoop(userMessage(`my key is ${secret}`), context([echo]), { model: model.model, streamFn: model.streamFn, ...(turn === undefined ? {} : { turn }) }))
      const stored = resultOf(events).messages
      // The example's `redact` rewrites text blocks (tool-call arguments are left as they are).
      const leaks = (m: AgentMessage) => m.role !== 'custom' && m.content.some((c) => c.type === 'text' && c.text.includes(secret))
      const turnEnds = events.flatMap((e) => (e.type === 'turnEnd' ? [e] : []))
      return { events, stored, leaks, turnEnds }
    }
    const inserted: AgentLoopConfig['turn'] = (s) =>
      composeTurn(s.preTurnPolicy, s.startTurn, s.transformContext, s.streamLlm, mapMessages(redact), s.dispatchTools, s.endTurn, s.postTurnPolicy, s.pollSteering, s.decideContinuation, s.postLoopPolicy, s.pollFollowUp)
    const wrapped: AgentLoopConfig['turn'] = (s) => pipe(defaultTurn(s), mapMessages(redact))

    it('inserted after streamLlm: what the stages before it emit is redacted (prompts, answers), tool results are stored as they are', () => {
      const { stored, leaks, turnEnds } = runWith(inserted)
      expect(stored.map((m) => [m.role, leaks(m)])).toEqual([
        ['user', false],
        ['assistant', false],
        ['toolResult', true],
        ['assistant', false],
      ])
      expect(turnEnds.map((e) => leaks(e.message!))).toEqual([false, false])
    })

    it('wrapping the whole turn: every message the turn stores is redacted, and turnEnd carries the stored messages', () => {
      const { stored, leaks, turnEnds } = runWith(wrapped)
      expect(stored.map((m) => [m.role, leaks(m)])).toEqual([
        ['user', false],
        ['assistant', false],
        ['toolResult', false],
        ['assistant', false],
      ])
      expect(turnEnds.map((e) => leaks(e.message!))).toEqual([false, false])
      expect(turnEnds[0]!.toolResults.map(leaks)).toEqual([false])
    })

    it('neither redacts the streamed deltas (messageUpdate): they are what the model sent', () => {
      for (const turn of [inserted, wrapped]) {
        const deltas = runWith(turn).events.filter((e) => e.type === 'messageUpdate' && JSON.stringify(e.chunk).includes(secret))
        expect(deltas.length).toBeGreaterThan(0)
      }
    })
  })
})

describe("the README's marble example", () => {
  it('holds as written', () => {
    runAgentMarbles(({ expectEvents, expectTimeline }) => {
      const model = scriptedModel([
        { marbles: '------s-a-b-(p|)', values: { s: chunk.start(), a: chunk.text('Hel'), b: chunk.text('lo'), p: chunk.stop() } },
      ], { whenExhausted: 'repeatLast' })
      const run$ = agentLoop(hello, context(), { model: model.model, streamFn: model.streamFn })

      expectEvents(run$).toBe('(abcd)e-f-g-(hij|)', {
        a: 'agentStart', b: 'turnStart:0', c: 'msgStart:user', d: 'msgEnd:user',
        e: 'msgStart:assistant', f: 'textDelta:"Hel"', g: 'textDelta:"lo"',
        h: 'msgEnd:assistant:stop', i: 'turnEnd:0', j: 'agentEnd:stop',
      })
      expectTimeline(run$).toBe(`
        0 agentStart, turnStart:0, msgStart:user, msgEnd:user
        6 msgStart:assistant
        8 textDelta:"Hel"
        10 textDelta:"lo"
        12 msgEnd:assistant:stop, turnEnd:0, agentEnd:stop, |
      `)
    })
  })
})

describe("the README's Agent example", () => {
  it('runs two tools, takes the steering message after the first batch, stays within budget', async () => {
    const { agent, result } = await import('../examples/chat-agent.js')
    const r = await result
    expect(r.stopReason).toBe('stop')
    const roles = agent.state.messages.map((m) => m.role)
    expect(roles).toEqual(['user', 'assistant', 'toolResult', 'user', 'assistant', 'toolResult', 'assistant'])
    expect(JSON.stringify(agent.state.messages[3])).toContain('Fahrenheit')
  })
})

describe('the demo (npm run demo): a durable session in PGlite, offline', () => {
  const repo = resolve('.')
  // The demo runs in child processes (some are killed with SIGKILL), compiled once for them under
  // node_modules, where its imports resolve (faster on a busy machine than transpiling it in every child).
  const build = join(repo, 'node_modules', '.cache', `rxagent-demo-test-${process.pid}`)
  let cwd: string
  beforeAll(() => {
    const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc')
    execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--outDir', build, '--declaration', 'false', '--declarationMap', 'false', '--sourceMap', 'false'], { cwd: repo, stdio: 'pipe' })
  }, 180_000)
  afterAll(() => rmSync(build, { recursive: true, force: true }))
  beforeEach(() => {
    cwd = mkdtempSync(join(tmpdir(), 'rxagent-demo-'))
  })
  afterEach(() => rmSync(cwd, { recursive: true, force: true }))
  const demo = (...args: string[]) => {
    const run = spawnSync(process.execPath, [join(build, 'examples', 'demo.js'), repo, ...args], { cwd, encoding: 'utf8', timeout: 120_000, env: { ...process.env, RXAGENT_OFFLINE: '1' } })
    if (run.error !== undefined) throw run.error
    return run
  }
  /** What the tools must have found: the lines of a folder's TypeScript files (as count_lines counts them). */
  const linesOf = (folder: string) =>
    readdirSync(join(repo, folder))
      .filter((f) => f.endsWith('.ts'))
      .reduce((sum, f) => sum + readFileSync(join(repo, folder, f), 'utf8').split('\n').length, 0)
  const storedSession = async () => {
    const store = await pgliteSessionStore({ dataDir: join(cwd, '.rxagent', 'demo-session') })
    try {
      const [info] = await store.list({ prefix: 'demo-' })
      const records = await store.read(info!.sessionId)
      return { info: info!, log: decodeAgentLog(records.filter((r) => r.body.type !== 'stream').map((r) => r.body), 'test') }
    } finally {
      await store.close()
    }
  }

  const crash = (killAfter: number, ...args: string[]) => {
    const crashed = demo('--kill-after', String(killAfter), ...args)
    expect(crashed.signal, crashed.stderr).toBe('SIGKILL')
    // Entries are committed in groups: the kill comes at the first commit that reaches the count.
    const committed = Number(/✂ --kill-after \d+: (\d+) log entries committed since this run started/.exec(crashed.stdout)?.[1])
    expect(committed).toBeGreaterThanOrEqual(killAfter)
    return crashed
  }
  const resumed = () => {
    const run = demo()
    expect(run.status, run.stderr).toBe(0)
    expect(run.stdout).toMatch(/not a terminal: continuing session demo-\S+ \(\d+ log entries/)
    expect(run.stdout).toMatch(/resumed session demo-/)
    return run
  }
  /** The session's state as its log folds: settled tool calls get their error results in the fold. No call may be unanswered. */
  const checkTranscript = (log: readonly AgentLogEntry[]) => {
    const transcript = Agent.fromLog(log, { tools: demoTools(repo), streamFn: scriptedStream() }).state.messages
    expect(repairTranscript(transcript).repairs).toEqual([])
    expect(log.at(-1)!.type).toBe('agentEnd')
    return transcript
  }

  it('a session across runs: it says where it is kept, a run killed with SIGKILL is settled and finished by the next, then the next question; --fresh starts another', async () => {
    const first = crash(12)
    expect(first.stdout).toContain('session store: PGlite (embedded PostgreSQL, this process) in .rxagent/demo-session/')
    expect(first.stdout).toMatch(/new session demo-\S+ · model: offline: scripted model/)
    const second = resumed()
    expect(second.stdout).toMatch(/the session holds \d+ messages/)
    expect(second.stdout).toContain('its last run was cut off')
    expect(second.stdout).toContain(`The data model in src/types has ${linesOf('src/types')} lines of TypeScript`)
    expect(checkTranscript((await storedSession()).log).filter((m) => m.role === 'user')).toHaveLength(1)

    const third = resumed()
    expect(third.stdout).toContain('> And how big is src/agent?')
    expect(third.stdout).toContain(`src/agent has ${linesOf('src/agent')} lines of TypeScript`)
    const { info, log } = await storedSession()
    expect(checkTranscript(log).filter((m) => m.role === 'user')).toHaveLength(2)
    expect(info.length).toBe(log.length)

    // A new session, killed early (in its first answer); the next run resumes the newest session.
    const fresh = crash(3, '--fresh')
    expect(fresh.stdout).toMatch(/new session demo-/)
    expect(fresh.stdout).toContain('> How big is the data model of this project (src/types)?')
    const fourth = resumed()
    expect(fourth.stdout).toContain(`The data model in src/types has ${linesOf('src/types')} lines of TypeScript`)
    const newest = await storedSession()
    expect(newest.info.sessionId).not.toBe(info.sessionId)
    expect(checkTranscript(newest.log).filter((m) => m.role === 'user')).toHaveLength(1)
  }, 300_000)

  it('--serve: readers get the session as Server-Sent Events, during the run and after it, until the demo is stopped', async () => {
    const child = spawn(process.execPath, [join(build, 'examples', 'demo.js'), repo, '--serve', '0'], { cwd, env: { ...process.env, RXAGENT_OFFLINE: '1' }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    child.stdout.on('data', (bytes: Buffer) => (stdout += bytes.toString('utf8')))
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    try {
      await until(() => /readers: (http:\/\/\S+) /.test(stdout), 'the readers URL', 60_000)
      const url = /readers: (http:\/\/\S+) /.exec(stdout)![1]!
      // The whole run, live: the reader follows the session until its agentEnd.
      const raw = await openRaw(url)
      await until(() => raw.events.some((e) => e.event === 'agentEnd'), 'the run over SSE', 120_000)
      raw.close()
      const positions = raw.events.map((e) => Number(e.id))
      expect(positions).toEqual([...positions].sort((a, b) => a - b))
      expect(new Set(positions).size).toBe(positions.length)
      expect(raw.events[0]!.event).toBe('init')
      await until(() => stdout.includes("serving the session's events"), 'the run finished', 60_000)
      // After the run: a reader that resumes from the last id gets nothing again, until the demo stops and its stream ends.
      const again = await openRaw(url, { 'Last-Event-ID': String(positions.at(-1)) })
      expect(again.status).toBe(200)
      child.kill('SIGTERM')
      expect(await exited).toBe(0)
      await again.done
      expect(again.events).toEqual([])
    } finally {
      child.kill('SIGKILL')
    }
  }, 300_000)
})
