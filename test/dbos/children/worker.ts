/**
 * A worker process of the DBOS cluster tests. Its agents' model and tools
 * record every execution in a ledger table (`dbos_ledger`): a row when an
 * execution starts and another when it completes, with this process's pid,
 * so that the test can count executions per model call and tool call and
 * find overlapping runs of one session.
 *
 * Config (argv[2], JSON): `{ pg, workerId, deadAfterMs, leaseTtlMs, concurrency }`.
 * Prints `ready <pid>` once it has joined the cluster; SIGKILLed by the test.
 */
import * as t from 'io-ts'
import pg from 'pg'
import { Observable } from 'rxjs'
import { startWorker } from '../../../src/dbos/index.js'
import { defineTool } from '../../../src/tools/define-tool.js'
import type { ProviderChunk } from '../../../src/types/chunk.js'
import type { StreamFn } from '../../../src/types/request.js'
import { modelSpec } from '../../../src/types/model.js'

const config = JSON.parse(process.argv[2]!) as { pg: string; workerId: string; deadAfterMs: number; leaseTtlMs: number; concurrency: number }
const pool = new pg.Pool({ connectionString: config.pg, max: 4 })
pool.on('error', () => undefined)

const ledger = (kind: string, sessionId: string, key: string, phase: 'start' | 'done') =>
  pool.query('INSERT INTO dbos_ledger (kind, session_id, key, phase, pid, at) VALUES ($1, $2, $3, $4, $5, clock_timestamp())', [kind, sessionId, key, phase, process.pid])

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Answers a user message with two tool calls (run in parallel) and a tool
 * result with a text of 12 deltas, each a few milliseconds apart: kills land
 * mid-stream. The call's key is the number of messages it was given.
 */
const streamFn =
  (sessionId: string): StreamFn =>
  (request) =>
    new Observable<ProviderChunk>((subscriber) => {
      const n = request.messages.length
      const last = request.messages[n - 1]!
      const key = `${sessionId}:model:${n}`
      const chunks: ProviderChunk[] =
        last.role === 'user'
          ? [
              { type: 'messageStart', id: `m${n}`, model: 'scripted-1' },
              ...[`a`, `b`].flatMap((x): ProviderChunk[] => [
                { type: 'toolUseStart', id: `c${n}${x}`, name: 'work' },
                { type: 'toolUseArgsDelta', id: `c${n}${x}`, fragment: `{"item":"${x}"}` },
                { type: 'toolUseEnd', id: `c${n}${x}` },
              ]),
              { type: 'stop', reason: 'toolUse' },
            ]
          : [{ type: 'messageStart', id: `m${n}`, model: 'scripted-1' }, ...Array.from({ length: 12 }, (_, i): ProviderChunk => ({ type: 'textDelta', text: `word${i} ` })), { type: 'stop', reason: 'endTurn' }]
      let stopped = false
      // A run prompted with 'hold' streams its answer's first deltas, then waits until it is cut (aborted).
      const lastUser = [...request.messages].reverse().find((m) => m.role === 'user')
      const hold = lastUser !== undefined && JSON.stringify(lastUser.content).includes('"hold"')
      void (async () => {
        await ledger('model', sessionId, key, 'start')
        // Sessions named `slow…` stream slowly enough for a reader to see their deltas before the message ends.
        const pause = sessionId.startsWith('slow') ? 40 : 3
        for (const [i, chunk] of chunks.entries()) {
          while (hold && last.role !== 'user' && i >= 3 && !stopped) await sleep(20)
          if (stopped) return
          await sleep(pause)
          subscriber.next(chunk)
        }
        await ledger('model', sessionId, key, 'done')
        subscriber.complete()
      })().catch((error: unknown) => subscriber.error(error))
      return () => {
        stopped = true
      }
    })

const work = (sessionId: string) =>
  defineTool({
    name: 'work',
    description: 'Does some work.',
    parameters: t.type({ item: t.string }),
    execute: async ({ item }, context) => {
      const key = `${sessionId}:tool:${context.toolCallId}`
      await ledger('tool', sessionId, key, 'start')
      await sleep(15 + Math.floor(Math.random() * 30))
      await ledger('tool', sessionId, key, 'done')
      return `worked on ${item} (${context.idempotencyKey ?? 'no key'})`
    },
  })

const deploy = (sessionId: string) =>
  defineTool({
    name: 'deploy',
    description: 'Deploys (needs approval).',
    parameters: t.type({ item: t.string }),
    needsApproval: true,
    execute: async ({ item }, context) => {
      await ledger('tool', sessionId, `${sessionId}:tool:${context.toolCallId}`, 'done')
      return `deployed ${item}`
    },
  })

/** Like `streamFn`, but the first answer calls `deploy` once. */
const gatedStreamFn =
  (sessionId: string): StreamFn =>
  (request) => {
    const n = request.messages.length
    if (request.messages[n - 1]!.role !== 'user') return streamFn(sessionId)(request)
    return new Observable<ProviderChunk>((subscriber) => {
      for (const chunk of [
        { type: 'messageStart', id: `m${n}`, model: 'scripted-1' },
        { type: 'toolUseStart', id: `d${n}`, name: 'deploy' },
        { type: 'toolUseArgsDelta', id: `d${n}`, fragment: '{"item":"site"}' },
        { type: 'toolUseEnd', id: `d${n}` },
        { type: 'stop', reason: 'toolUse' },
      ] satisfies ProviderChunk[]) subscriber.next(chunk)
      subscriber.complete()
    })
  }

const model = modelSpec('scripted', 'scripted-1')
const worker = await startWorker({
  pg: config.pg,
  workerId: config.workerId,
  deadAfterMs: config.deadAfterMs,
  leaseTtlMs: config.leaseTtlMs,
  concurrency: config.concurrency,
  pollingIntervalMs: 100,
  agents: [
    { name: 'ledger', options: (sessionId) => ({ systemPrompt: 'Work.', model, streamFn: streamFn(sessionId), tools: [work(sessionId)] }) },
    {
      name: 'gated',
      options: (sessionId) => ({ systemPrompt: 'Deploy.', model, streamFn: gatedStreamFn(sessionId), tools: [deploy(sessionId)], approveTool: 'resolveApproval' }),
    },
  ],
})
process.stdout.write(`ready ${process.pid} ${worker.workerId}\n`)
process.on('SIGTERM', () => void worker.stop({ drain: true, timeoutMs: 10_000 }).then(() => process.exit(0)))
