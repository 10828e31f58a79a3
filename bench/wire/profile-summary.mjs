// Summarizes a V8 .cpuprofile (from `node --cpu-prof`): self time by function and by file.
//   node bench/wire/profile-summary.mjs <file.cpuprofile> [top=30]
import { readFileSync } from 'node:fs'

const [file, topArg] = process.argv.slice(2)
const top = Number(topArg ?? 30)
const profile = JSON.parse(readFileSync(file, 'utf8'))
const byId = new Map(profile.nodes.map((n) => [n.id, n]))
const self = new Map()
// Samples are node ids; timeDeltas[i] is the time before sample i.
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)))
const total = [...self.values()].reduce((a, b) => a + b, 0)
const short = (url) => url.replace(/^file:\/\//, '').replace(/.*\/node_modules\//, 'nm:').replace(/.*\/bench-wire\//, '')
const fns = new Map()
const files = new Map()
for (const [id, us] of self) {
  const { functionName, url, lineNumber } = byId.get(id).callFrame
  const key = `${functionName || '(anonymous)'}  ${short(url)}:${lineNumber + 1}`
  fns.set(key, (fns.get(key) ?? 0) + us)
  const f = short(url) || `(${functionName})`
  files.set(f, (files.get(f) ?? 0) + us)
}
const print = (title, map) => {
  console.log(`\n${title} (total ${(total / 1000).toFixed(1)} ms)`)
  for (const [k, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(1).padStart(8)} ms  ${k}`)
}
print('self time by function', fns)
print('self time by file', files)
