// The same inputs for every runtime: deterministic, built before timing starts.

/**
 * The one asynchronous source every runtime's mock model reads, in its own mock facility:
 * an async generator over the pre-built script, one item per `for await` step (a few
 * microtasks each, no timers), like a provider's SSE event iterator.
 */
export async function* asyncSource(items) {
  const sample = heapSampler
  if (sample === undefined) {
    for (const item of items) yield item
    return
  }
  for (const item of items) {
    if ((++sourceItems & (SAMPLE_EVERY - 1)) === 0) sample()
    yield item
  }
}

/**
 * The memory run's heap sampler (worker.mjs sets it for that run only, never for a timed one):
 * called every SAMPLE_EVERY items that any source yields. A run made only of microtasks never
 * lets a timer fire, so a sampler on a timer saw only the heap at the run's end; the shared
 * source is where every runtime's run passes, at the same pace for all.
 */
let heapSampler
let sourceItems = 0
const SAMPLE_EVERY = 64

/** Sets (or, `undefined`, removes) the sampler `asyncSource` calls while it streams. */
export function sampleWhileStreaming(sampler) {
  heapSampler = sampler
  sourceItems = 0
}

/**
 * What a UI reads on every change of the streamed message: the length of its text. Both
 * rxagent's and pi's assistant messages hold `content: [{ type: 'text', text }, …]`.
 */
/** The same for the last assistant message of a transcript: what a run ended with. */
export function lastAnswerLength(messages) {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].role === 'assistant') return streamedTextLength(messages[i])
  return 0
}

export function streamedTextLength(message) {
  if (message === undefined || message === null || message.role !== 'assistant') return 0
  let length = 0
  for (const block of message.content) if (block.type === 'text') length += block.text.length
  return length
}

/** TEXT/LONG: `n` text deltas of 4 characters. */
export function textDeltas(n) {
  const deltas = new Array(n)
  for (let i = 0; i < n; i++) deltas[i] = `ab${i % 10} `
  return deltas
}

/** TOOLS: the script of one tool turn: 20 text deltas, then 3 calls whose JSON arguments arrive in 10 fragments each. */
export function toolTurn(turn, { textDeltaCount = 20, calls = 3, fragments = 10 } = {}) {
  const text = textDeltas(textDeltaCount)
  const toolCalls = []
  for (let k = 0; k < calls; k++) {
    const args = { value: `turn ${turn} call ${k}`, n: k, tags: ['a', 'b', 'c'] }
    const json = JSON.stringify(args)
    const size = Math.ceil(json.length / fragments)
    const parts = []
    for (let i = 0; i < fragments; i++) parts.push(json.slice(i * size, (i + 1) * size))
    toolCalls.push({ id: `call_${turn}_${k}`, name: 'echo', args, fragments: parts })
  }
  return { text, toolCalls }
}

/** LONG: `count` prior messages, alternating user/assistant, about 200 characters each. */
export function history(count) {
  const out = []
  for (let i = 0; i < count; i++) {
    out.push({ role: i % 2 === 0 ? 'user' : 'assistant', text: `message ${i}: ${'lorem ipsum dolor sit amet '.repeat(7)}`.slice(0, 200) })
  }
  return out
}

const all = ['rxagent', 'pi', 'aisdk', 'bare', 'rx-floor']
/** The stores of the DURABLE rows, as the scenarios run by rxagent in the same rounds. */
export const durableStores = ['memory', 'pglite', 'postgres']
const durable = (what) => durableStores.map((store) => `durable-${what}-${store}`)
const agents = ['rxagent', 'pi']

/**
 * The scenarios: the sizes `npm run bench` uses, the tiny sizes of the smoke test, and the runtimes
 * that run them. `rounds` (default 3): interleaved rounds, each runtime once per round in a fresh
 * process; `runs` (default 3): timed runs per process at least (short ones keep sampling for half
 * a second). `peersSlowFrom`: from that size on pi and the AI SDK
 * take seconds per run (pi's event queue and the AI SDK's streams degrade with N: 10–30 µs a
 * delta at 100k–200k), so they run in the first round only, with one timed run after the warm-up — the
 * suite must stay under ten minutes. `memoryAt`: the sizes whose heap is measured (one more run).
 * `with`: other scenarios run by rxagent in the same rounds, for ratios from one run.
 */
export const scenarios = {
  text: { sizes: [10_000, 100_000, 200_000], smoke: [200], runtimes: all, peersSlowFrom: 100_000, memoryAt: [100_000] },
  // TEXT with a consumer that counts characters instead of keeping the text: rxagent's own cost
  // against the floors' (the peers' TEXT rows already show theirs; the suite must stay under ten minutes).
  // (200k too until 2026-11-29: 12 s of a suite over its ten minutes, for a row no target reads.)
  textcount: { sizes: [10_000], smoke: [200], runtimes: ['rxagent', 'bare', 'rx-floor'] },
  // TEXT with rxagent's mock playing the script synchronously (`from(array)`): an extra, labelled row.
  textsync: { sizes: [10_000], smoke: [200], runtimes: ['rxagent'], rounds: 2 },
  // TEXT with rxagent reading the async source through RxJS's `from()` instead of `fromAsyncIterable`: extra, labelled.
  textfrom: { sizes: [10_000, 100_000], smoke: [200], runtimes: ['rxagent'], rounds: 2 },
  tools: { sizes: [200], smoke: [3], runtimes: all },
  // The first 30 tool turns of a fresh process: one timed run, no warm-up; 5 processes per runtime.
  coldtools: { sizes: [30], smoke: [3], runtimes: all, rounds: 5 },
  long: { sizes: [5_000], smoke: [20], deltas: 10_000, smokeDeltas: 50, runtimes: all },
  // The AI SDK is left out: 1,000 concurrent streamText runs take it about 11 s a run (325 MB peak),
  // a minute per process, and no target concerns it.
  fanout: { sizes: [1_000], smoke: [5], deltasPerRun: 50, runtimes: ['rxagent', 'pi', 'bare'], memoryAt: [1_000] },
  parallel: { sizes: [10], smoke: [2], toolMs: 50, smokeToolMs: 5, runtimes: ['rxagent', 'pi', 'aisdk', 'bare'], rounds: 2 },
  // The Agents, each with a UI reader of the streamed message on every change, and in the same
  // rounds (`with`) rxagent's `agentLoop` with the same reader, fed by its `messageUpdate` events.
  'agent-text': { sizes: [10_000, 100_000, 200_000], smoke: [200], runtimes: agents, with: ['reader-text'], peersSlowFrom: 100_000, memoryAt: [200_000] },
  'agent-tools': { sizes: [200], smoke: [3], runtimes: agents, with: ['reader-tools'] },
  'agent-long': { sizes: [5_000], smoke: [20], runtimes: agents, with: ['reader-long'] },
  // A restored conversation of N messages, then one short prompt (20 deltas).
  'agent-restore': { sizes: [1_000, 60_000], smoke: [20, 200], runtimes: agents },
  // DURABLE (issue 15): the in-memory Agent and, in the same rounds, `Agent.open` with its log in the
  // memory store, PGlite (a temp directory) and PostgreSQL (a throwaway cluster run.mjs starts; skipped
  // without the binaries): a tool turn, streaming, and opening a stored session (in memory: `Agent.fromLog`).
  'durable-tools': { sizes: [100], smoke: [3], runtimes: ['rxagent'], with: durable('tools') },
  'durable-text': { sizes: [10_000, 100_000], smoke: [200], runtimes: ['rxagent'], with: durable('text') },
  'durable-open': { sizes: [10_000], smoke: [200], runtimes: ['rxagent'], with: durable('open') },
  // Parameters shared by the scenarios of a kind (see worker.mjs).
  restore: { deltas: 20 },
}
