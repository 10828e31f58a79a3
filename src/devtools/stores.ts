/**
 * How `rxagent devtools` opens the stores a `--store` spec names. Each
 * driver is an optional peer, imported only when its kind is asked for.
 */
import type { StoreOpeners } from './cli.js'

export const storeOpeners: StoreOpeners = {
  pglite: async () => {
    throw new Error('this build of rxagent has no PGlite session store yet')
  },
  postgres: async () => {
    throw new Error('this build of rxagent has no PostgreSQL session store yet')
  },
}
