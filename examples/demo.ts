/**
 * The demo: an agent run over this project's files.
 *
 * Offline by default: the model is scripted (no network, no key), but it
 * reads the tool results it gets back and decides its next step from them, so
 * every number it prints was computed by the tools during this run. With a
 * key in the environment it talks to a real model instead (same tools, same
 * loop):
 *
 *   npm run demo                                   # offline, scripted
 *   ANTHROPIC_API_KEY=… npm run demo               # claude-sonnet-5-5
 *   OPENAI_API_KEY=… npm run demo                  # gpt-6-luna (Responses API)
 *   GEMINI_API_KEY=… npm run demo                  # gemini-3.8-flash
 *   OPENAI_COMPATIBLE_BASE_URL=http://localhost:11434/v1 OPENAI_COMPATIBLE_MODEL=qwen3:8b npm run demo   # Ollama, vLLM, …
 *   RXAGENT_MODEL=anthropic/claude-haiku-4-5 …     # any catalog model;  RXAGENT_OFFLINE=1 forces the scripted model
 */
import { readdir, readFile, stat } from 'node:fs/promises'
import { join, relative, resolve } from 'node:path'
import * as t from 'io-ts'
import { concat, defer, from, Observable, type SchedulerLike, asyncScheduler, concatMap, delay, of } from 'rxjs'
import {
  agentLoop,
  defineTool,
  modelSpec,
  userMessage,
  type LlmMessage,
  type LlmRequest,
  type ProviderChunk,
  type ToolResultMessage,
} from '../src/index.js'
import { chunk, splitText, toolCallChunks } from '../marbles/index.js'
import { model as catalogModel, providers } from '../src/providers/index.js'
import type { ModelSpec, StreamFn } from '../src/index.js'

const root = resolve(process.argv[2] ?? '.')

// --- Tools: they really read this project. ----------------------------------

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
const counts = new Map<string, number>()

const calculate = defineTool({
  name: 'calculate',
  label: 'Calculate',
  description: 'Evaluates an arithmetic expression with + - * / and parentheses.',
  parameters: t.type({ expression: t.string }),
  execute: ({ expression }) => String(evaluate(expression)),
})

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

// --- The scripted model: decides from what the tools returned. --------------

const model = modelSpec('scripted', 'demo-brain', { cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } })

const lastResults = (messages: readonly LlmMessage[]): ToolResultMessage[] => {
  const results: ToolResultMessage[] = []
  for (let i = messages.length - 1; i >= 0 && messages[i]!.role === 'toolResult'; i--) results.unshift(messages[i] as ToolResultMessage)
  return results
}
const textOf = (m: ToolResultMessage): string => m.content.map((c) => (c.type === 'text' ? c.text : '')).join('')

/** What the model "decides" on each call, from the conversation so far. */
function decide(request: LlmRequest, call: number): { say: string; tools: { name: string; args: Record<string, unknown> }[] } {
  const results = lastResults(request.messages)
  switch (call) {
    case 0:
      return { say: "I'll look at the project's type definitions first.\n", tools: [{ name: 'list_files', args: { dir: 'src/types' } }] }
    case 1: {
      const files = textOf(results[0]!)
        .split('\n')
        .map((line) => line.split(' ')[0]!)
        .filter((p) => p.endsWith('.ts'))
      return { say: `There are ${files.length} TypeScript files. Counting their lines.\n`, tools: [{ name: 'count_lines', args: { paths: files } }] }
    }
    case 2: {
      const lines = textOf(results[0]!).split('\n').map((line) => Number(line.split(' ').at(-1)))
      return {
        say: 'Now the total and the average.\n',
        tools: [
          { name: 'calculate', args: { expression: lines.join(' + ') } },
          { name: 'calculate', args: { expression: `(${lines.join(' + ')}) / ${lines.length}` } },
        ],
      }
    }
    default: {
      const [total, average] = results.map(textOf)
      return {
        say: `The data model in src/types has ${total} lines of TypeScript, ${Number(average).toFixed(1)} lines per file on average: every boundary type is an io-ts codec there.`,
        tools: [],
      }
    }
  }
}

/** Streams a decision as a provider would: words, then tool calls in fragments, with a little latency. */
function scriptedStream(scheduler: SchedulerLike = asyncScheduler) {
  let call = 0
  return (request: LlmRequest): Observable<ProviderChunk> => {
    const { say, tools } = decide(request, call++)
    const input = Math.ceil(JSON.stringify(request.messages).length / 4)
    const chunks: ProviderChunk[] = [
      chunk.start(`msg_${call}`, 'demo-brain'),
      ...splitText(say, Math.ceil(say.length / 4)).map(chunk.text),
      ...tools.flatMap((tool, i) => toolCallChunks(`call_${call}_${i}`, tool.name, tool.args, 4)),
      chunk.stop(tools.length > 0 ? 'toolUse' : 'endTurn'),
      chunk.usage({ input, output: Math.ceil(say.length / 4) + tools.length * 20, cacheRead: call > 1 ? Math.floor(input / 2) : 0 }),
    ]
    return from(chunks).pipe(concatMap((c) => of(c).pipe(delay(c.type === 'textDelta' ? 12 : 2, scheduler))))
  }
}

// --- Which model: a real one when the environment has a key. ----------------

function chooseModel(): { model: ModelSpec; streamFn: StreamFn; label: string } {
  const env = process.env
  const scripted = { model, streamFn: scriptedStream(), label: 'offline: scripted model (set ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY or OPENAI_COMPATIBLE_BASE_URL for a real one)' }
  if (env['RXAGENT_OFFLINE'] === '1' || process.argv.includes('--offline')) return scripted
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

// --- The run. ----------------------------------------------------------------

const chosen = chooseModel()

const out = process.stdout
const dim = (s: string): string => (out.isTTY ? `\x1b[2m${s}\x1b[0m` : s)

agentLoop(
  userMessage('How big is the data model of this project?'),
  { systemPrompt: 'You are a careful code analyst. Use the tools.', messages: [], tools: [listFiles, countLines, calculate] },
  { model: chosen.model, streamFn: chosen.streamFn, toolTimeoutMs: 10_000, maxTurns: 12 },
).subscribe({
  next: (event) => {
    switch (event.type) {
      case 'agentStart':
        out.write(dim(`model: ${chosen.label}\n`))
        break
      case 'streamRetry':
        out.write(dim(`\n  ↻ ${event.error.message} — retrying in ${(event.delayMs / 1000).toFixed(1)} s (the partial answer above is discarded)\n`))
        break
      case 'messageEnd':
        if (event.message.role === 'user') out.write(`> ${textOfUser(event.message.content)}\n\n`)
        break
      case 'messageUpdate':
        if (event.chunk.type === 'textDelta') out.write(event.chunk.text)
        break
      case 'toolExecutionStart':
        out.write(dim(`  → ${event.toolName} ${JSON.stringify(event.args)}\n`))
        break
      case 'toolExecutionUpdate':
        out.write(dim(`    … ${textOfUser(event.partialResult.content)}\n`))
        break
      case 'toolExecutionEnd': {
        const lines = textOfUser(event.result.content).split('\n')
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
  },
  error: (error: unknown) => {
    console.error('demo failed:', error)
    process.exitCode = 1
  },
})

function textOfUser(content: readonly { type: string; text?: string }[]): string {
  return content.map((c) => c.text ?? '').join('')
}
