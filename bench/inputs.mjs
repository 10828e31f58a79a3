// The same inputs for every runtime: deterministic, built before timing starts.

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

/** The scenarios, with the sizes `npm run bench` uses and the tiny sizes of the smoke test. */
export const scenarios = {
  text: { sizes: [10_000, 50_000, 100_000, 200_000], smoke: [200] },
  // TEXT with a consumer that counts characters instead of keeping the text: the runtime's own cost.
  // The peers run it at 10k only: at 200k they take a minute and a half and add nothing the
  // TEXT 200k row does not show, and the suite must stay well under ten minutes.
  textcount: { sizes: [10_000, 200_000], smoke: [200], peersUpTo: 10_000 },
  tools: { sizes: [200], smoke: [3] },
  long: { sizes: [5_000], smoke: [20], deltas: 10_000, smokeDeltas: 50 },
  fanout: { sizes: [1_000], smoke: [5], deltasPerRun: 50 },
  parallel: { sizes: [10], smoke: [2], toolMs: 50, smokeToolMs: 5 },
}
