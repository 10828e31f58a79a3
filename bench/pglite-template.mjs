// Makes a PGlite session store's data directory once per bench run (`node bench/pglite-template.mjs <dir>`):
// PGlite's initdb (PostgreSQL's, in WASM) and the store's migrations take 4-10 s, which every DURABLE
// PGlite worker paid before its untimed set-up was done. The workers copy this directory instead
// (`RXAGENT_BENCH_PGLITE_TEMPLATE`, ~0.4 s), then open it as a user reopens a session directory.
const dir = process.argv[2]
if (dir === undefined) throw new Error('usage: node bench/pglite-template.mjs <empty directory>')
const { pgliteSessionStore } = await import('../dist/src/sessions/pglite-store.js')
const store = await pgliteSessionStore({ dataDir: dir })
await store.close()
