/**
 * The demo's tools and models (`demo.ts` runs them in a durable session).
 *
 * The tools really read the project. Offline, the model is scripted, but it
 * decides its next step from the conversation it is sent — the question, the
 * tool results so far — and from nothing else, so that a session resumed in
 * a new process (after a crash, say) goes on from where its log is, and every
 * number it prints was computed by the tools. With a key in the environment
 * a real model takes its place (same tools, same agent).
 */
import { readdir, readFile, stat } from 'node:fs/promises'
import { join, relative, resolve } from 'node:path'
import * as t from 'io-ts'
import { concat, defer, from, Observable, type SchedulerLike, asyncScheduler, concatMap, delay, of } from 'rxjs'
import { defineTool, modelSpec, type LlmMessage, type LlmRequest, type ProviderChunk, type ToolResultMessage } from '../src/index.js'
import { chunk, splitText, toolCallChunks } from '../marbles/index.js'
import { model as catalogModel, providers } from '../src/providers/index.js'
import type { ModelSpec, StreamFn } from '../src/index.js'

// --- Tools: they really read the project under `root`. -----------------------

/** The demo's three tools over the project at `root`. */
export function demoTools(root: string) {
  const counts = new Map<string, number>()
  const listFiles = defineTool({
    name: 'list_files',
    label: 'List files',
    description: 'Lists the files of a folder of the project, one per line with its size in bytes.',
    parameters: t.type({ dir: t.string }),
    execute: async ({ dir }) => {
      const folder = resolve(root, dir)
      if (!folder.startsWith(root)) throw new Error(`${dir} is outside the project`)
      const entries = await readdir(folder, { withFileTypes: true })
      const lines = await Promise.all(
        entries
          .filter((e) => e.isFile())
          .sort((a, b) => a.name.localeCompare(b.name))
          .map(async (e) => `${relative(root, join(folder, e.name))} ${(await stat(join(folder, e.name))).size}`),
      )
      return lines.join('\n')
    },
  })
  const countLines = defineTool({
    name: 'count_lines',
    label: 'Count lines',
    description: 'Counts the lines of each given file. Reports progress file by file.',
    parameters: t.type({ paths: t.array(t.string) }),
    // An Observable: each value before the last is a progress update.
    execute: ({ paths }, { signal }) =>
      concat(
        from(paths).pipe(
          concatMap(async (path, i) => {
            if (signal.aborted) throw new Error('aborted')
            const text = await readFile(resolve(root, path), 'utf8')
            counts.set(path, text.split('\n').length)
            return `counted ${i + 1}/${paths.length}: ${path}`
          }),
          // Slow enough to watch the progress.
          concatMap((progress) => of(progress).pipe(delay(120))),
        ),
        defer(() => of(paths.map((p) => `${p} ${counts.get(p) ?? 0}`).join('\n'))),
      ),
  })
  const calculate = defineTool({
    name: 'calculate',
    label: 'Calculate',
    description: 'Evaluates an arithmetic expression with + - * / and parentheses.',
    parameters: t.type({ expression: t.string }),
    execute: ({ expression }) => String(evaluate(expression)),
  })
  return [listFiles, countLines, calculate]
}

/** A small recursive-descent evaluator: no `eval`. */
function evaluate(expression: string): number {
  const tokens = expression.match(/\d+(?:\.\d+)?|[-+*/()]/g) ?? []
  let i = 0
  const peek = (): string | undefined => tokens[i]
  const atom = (): number => {
    const token = tokens[i++]
    if (token === '(') {
      const value = sum()
      if (tokens[i++] !== ')') throw new Error('missing )')
      return value
    }
    if (token === '-') return -atom()
    const value = Number(token)
    if (token === undefined || Number.isNaN(value)) throw new Error(`unexpected ${token ?? 'end'}`)
    return value
  }
  const product = (): number => {
    let value = atom()
    while (peek() === '*' || peek() === '/') value = tokens[i++] === '*' ? value * atom() : value / atom()
    return value
  }
  const sum = (): number => {
    let value = product()
    while (peek() === '+' || peek() === '-') value = tokens[i++] === '+' ? value + product() : value - product()
    return value
  }
  const value = sum()
  if (i !== tokens.length) throw new Error(`unexpected ${tokens[i]}`)
  return value
}

// --- The questions, one per run of a session. ----------------------------------

const FOLDERS = ['src/types', 'src/agent', 'src/loop', 'src/providers', 'src/sessions', 'src/tools']

/** The question of a session's `n`-th run (0, 1, …): about one folder of the project each. */
export function questionOf(n: number): string {
  const folder = FOLDERS[n % FOLDERS.length]!
  return n === 0 ? `How big is the data model of this project (${folder})?` : `And how big is ${folder}?`
}

// --- The scripted model: decides from the conversation it is sent. ------------

/** The scripted model (priced like a mid-size model, so that the demo prints a cost). */
export const demoBrain = modelSpec('scripted', 'demo-brain', { cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } })

const textOf = (m: ToolResultMessage): string => m.content.map((c) => (c.type === 'text' ? c.text : '')).join('')

/** The results of the latest successful call(s) of `tool` since the last question, newest last. */
function latest(messages: readonly LlmMessage[], since: number, tool: string): ToolResultMessage[] {
  const found: ToolResultMessage[] = []
  for (let i = messages.length - 1; i > since; i--) {
    const m = messages[i]!
    if (m.role === 'toolResult' && m.toolName === tool && !m.isError) found.unshift(m)
    else if (found.length > 0) break
  }
  return found
}

type Decision = { say: string; tools: { name: string; args: Record<string, unknown> }[] }

/** What the model "decides" on a call, from the conversation so far: the next step after the last one that worked. */
export function decide(request: LlmRequest): Decision {
  const messages = request.messages
  let asked = messages.length - 1
  while (asked >= 0 && !(messages[asked]!.role === 'user' && /\((src\/\w+)\)\?|how big is (src\/\w+)\?/i.test(userText(messages[asked]!)))) asked--
  const folder = /(src\/\w+)/.exec(asked >= 0 ? userText(messages[asked]!) : '')?.[1] ?? 'src/types'
  const sums = latest(messages, asked, 'calculate')
  if (sums.length >= 2) {
    const [total, average] = sums.slice(-2).map(textOf)
    const what = folder === 'src/types' ? 'The data model in src/types' : folder
    return { say: `${what} has ${total} lines of TypeScript, ${Number(average).toFixed(1)} lines per file on average.`, tools: [] }
  }
  const counted = latest(messages, asked, 'count_lines')
  if (counted.length > 0) {
    const lines = textOf(counted.at(-1)!).split('\n').map((line) => Number(line.split(' ').at(-1)))
    return {
      say: 'Now the total and the average.\n',
      tools: [
        { name: 'calculate', args: { expression: lines.join(' + ') } },
        { name: 'calculate', args: { expression: `(${lines.join(' + ')}) / ${lines.length}` } },
      ],
    }
  }
  const listed = latest(messages, asked, 'list_files')
  if (listed.length > 0) {
    const files = textOf(listed.at(-1)!)
      .split('\n')
      .map((line) => line.split(' ')[0]!)
      .filter((p) => p.endsWith('.ts'))
    return { say: `There are ${files.length} TypeScript files. Counting their lines.\n`, tools: [{ name: 'count_lines', args: { paths: files } }] }
  }
  return { say: `I'll list ${folder} first.\n`, tools: [{ name: 'list_files', args: { dir: folder } }] }
}

function userText(m: LlmMessage): string {
  return m.role === 'user' ? m.content.map((c) => (c.type === 'text' ? c.text : '')).join('') : ''
}

/** Streams a decision as a provider would: words, then tool calls in fragments, with a little latency. */
export function scriptedStream(scheduler: SchedulerLike = asyncScheduler): StreamFn {
  let call = 0
  return (request: LlmRequest): Observable<ProviderChunk> => {
    const { say, tools } = decide(request)
    call++
    const input = Math.ceil(JSON.stringify(request.messages).length / 4)
    const chunks: ProviderChunk[] = [
      chunk.start(`msg_${call}`, 'demo-brain'),
      ...splitText(say, Math.ceil(say.length / 4)).map(chunk.text),
      ...tools.flatMap((tool, i) => toolCallChunks(`call_${Date.now().toString(36)}_${call}_${i}`, tool.name, tool.args, 4)),
      chunk.stop(tools.length > 0 ? 'toolUse' : 'endTurn'),
      chunk.usage({ input, output: Math.ceil(say.length / 4) + tools.length * 20, cacheRead: call > 1 ? Math.floor(input / 2) : 0 }),
    ]
    return from(chunks).pipe(concatMap((c) => of(c).pipe(delay(c.type === 'textDelta' ? 12 : 2, scheduler))))
  }
}

// --- Which model: a real one when the environment has a key. ----------------

/** The model to use: `offline` or no key → the scripted one. */
export function chooseModel(offline: boolean): { model: ModelSpec; streamFn: StreamFn; label: string } {
  const env = process.env
  const scripted = { model: demoBrain, streamFn: scriptedStream(), label: 'offline: scripted model (set ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY or OPENAI_COMPATIBLE_BASE_URL for a real one)' }
  if (offline || env['RXAGENT_OFFLINE'] === '1') return scripted
  const compatibleUrl = env['OPENAI_COMPATIBLE_BASE_URL']
  const pick =
    env['RXAGENT_MODEL'] ??
    (env['ANTHROPIC_API_KEY'] ? 'anthropic/claude-sonnet-5-5'
      : env['OPENAI_API_KEY'] ? 'openai/gpt-6-luna'
      : env['GEMINI_API_KEY'] || env['GOOGLE_API_KEY'] ? 'google/gemini-3.8-flash'
      : undefined)
  if (pick !== undefined) {
    const chosen = catalogModel(pick)
    return { model: chosen, streamFn: providers(), label: `${chosen.provider}/${chosen.modelId}` }
  }
  if (compatibleUrl !== undefined && compatibleUrl !== '') {
    const id = env['OPENAI_COMPATIBLE_MODEL'] ?? 'llama3.2'
    const local = modelSpec('local', id, { contextWindow: 32_768 })
    return { model: local, streamFn: providers({ compatible: { local: { baseUrl: compatibleUrl } } }), label: `${compatibleUrl} (${id})` }
  }
  return scripted
}
