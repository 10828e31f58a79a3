/**
 * The SSE helper over the PostgreSQL store, on a throwaway cluster
 * (test/support/postgres-cluster.ts; skipped with the install command when
 * PostgreSQL is not installed): a fresh database per test, tails fed by
 * NOTIFY.
 */
import { postgresSessionStore } from '../../src/sessions/postgres-store.js'
import { describePostgres } from '../support/postgres-cluster.js'
import { sseSuite } from './sse-suite.js'

describePostgres('SSE readers on PostgreSQL', (cluster) => {
  sseSuite('postgres', async () => {
    const store = await postgresSessionStore({ connectionString: await cluster().createDatabase() })
    return { store, cleanup: () => store.close() }
  })
})
