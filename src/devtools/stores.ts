/**
 * How `rxagent devtools` opens the stores a `--store` spec names. Each
 * driver is an optional peer, imported only when its kind is asked for.
 */
import { existsSync } from 'node:fs'
import type { StoreOpeners } from './cli.js'

/** The openers `rxagent devtools` uses: the PGlite store for `pglite:<dir>`, the PostgreSQL store for `postgres://…`. */
export const storeOpeners: StoreOpeners = {
  pglite: async (dataDir) => {
    // Opening a directory that is not there would create an empty store: say what is missing instead.
    if (!existsSync(dataDir)) throw new Error(`no PGlite session store at '${dataDir}' (run the demo, npm run demo, to make one there, or pass --store pglite:<dir>)`)
    const { pgliteSessionStore } = await import('../sessions/pglite-store.js')
    return pgliteSessionStore({ dataDir })
  },
  postgres: async (connectionString) => {
    const { postgresSessionStore } = await import('../sessions/postgres-store.js')
    return postgresSessionStore({ connectionString })
  },
}
