// serveMcp over stdio, started as a child process by test/mcp/serve.test.ts:
// argv[2] is the transpiled sources' root (see test/mcp/transpile.ts).
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { concatMap, from, map, Observable, timer } from 'rxjs'

const root = process.argv[2]
const load = (path) => import(pathToFileURL(join(root, path)).href)
const { serveMcp } = await load('src/mcp/index.js')
const { Agent, defineTool } = await load('src/index.js')
const { reply, scriptedModel } = await load('marbles/index.js')
const t = await import('io-ts')

const aborts = []
const tools = [
  defineTool({ name: 'add', description: 'Adds two integers', parameters: t.type({ a: t.Int, b: t.Int }), execute: ({ a, b }) => String(a + b) }),
  defineTool({
    name: 'steps',
    description: 'Counts to n, one progress update per step',
    parameters: t.type({ n: t.Int }),
    execute: ({ n }) =>
      new Observable((subscriber) => {
        let i = 0
        const timer = setInterval(() => {
          i += 1
          if (i < n) subscriber.next(`step ${i}`)
          else {
            subscriber.next(`counted to ${n}`)
            subscriber.complete()
          }
        }, 5)
        return () => clearInterval(timer)
      }),
  }),
  defineTool({
    name: 'wait',
    description: 'Waits until aborted',
    parameters: t.type({}),
    execute: (_args, { signal }) =>
      new Promise((resolve) => signal.addEventListener('abort', () => (aborts.push(String(signal.reason)), resolve('aborted')), { once: true })),
  }),
  defineTool({ name: 'aborts', description: 'The aborts seen', parameters: t.type({}), execute: () => JSON.stringify(aborts) }),
]

const agent = () => {
  const { model, streamFn } = scriptedModel([() => from(reply.text('The answer is 42.', { deltas: 3 })).pipe(concatMap((c) => timer(1).pipe(map(() => c))))])
  return new Agent({ systemPrompt: 'Answer.', model, streamFn })
}

await serveMcp({ tools, agent: { agent, name: 'oracle', description: 'Asks the oracle' }, transport: 'stdio', serverInfo: { name: 'served', version: '1.0.0' } })
