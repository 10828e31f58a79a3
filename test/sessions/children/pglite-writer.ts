/**
 * A child process for the PGlite store tests (run with test/support/ts-register.mjs):
 *
 *   hold <dataDir>    opens the store, prints `open <pid>`, waits to be killed
 *   append <dataDir>  opens the store, prints what it found of session `crash` as
 *                     `found {"length":…,"problems":[…]}` (the log read back, decoded and checked),
 *                     then appends to it until killed, printing `committed <length>` after each
 *                     append resolved: alternately a batch of stream records, and a batch ending
 *                     the message (compacting them) with a note
 */
import { pgliteSessionStore } from '../../../src/sessions/pglite-store.js'
import { messageEnd, note, stream, init } from '../fixtures.js'

const [mode, dataDir] = process.argv.slice(2)
const store = await pgliteSessionStore({ dataDir: dataDir! })
process.stdout.write(`open ${process.pid}\n`)
if (mode === 'hold') {
  setInterval(() => {}, 60_000)
} else {
  const records = await store.read('crash')
  let length = (await store.info('crash'))?.length ?? 0
  const problems: string[] = []
  const logged = records.flatMap((r) => (r.body.type === 'stream' ? [] : [r.body.seq]))
  if (logged.some((seq, i) => seq !== i)) problems.push(`seqs not contiguous: ${logged.join(',')}`)
  if (logged.length !== length) problems.push(`info says length ${length}, the log holds ${logged.length} entries`)
  const lastEnd = records.map((r) => r.body.type).lastIndexOf('messageEnd')
  if (records.slice(0, Math.max(lastEnd, 0)).some((r) => r.body.type === 'stream')) problems.push('stream records before the last message end')
  process.stdout.write(`found ${JSON.stringify({ length, problems })}\n`)
  if (length === 0) {
    await store.append('crash', { expectedSeq: 0, records: [init('crash-agent')] })
    length = 1
    process.stdout.write(`committed ${length}\n`)
  }
  for (let i = 0; ; i++) {
    const records = i % 2 === 0 ? [stream(length, 20, `${i}`), stream(length, 20)] : [stream(length, 5), messageEnd(length, `m${i}`), note(length + 1)]
    length = (await store.append('crash', { expectedSeq: length, records })).length
    process.stdout.write(`committed ${length}\n`)
  }
}
