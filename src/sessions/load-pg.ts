/** The `pg` client library, an optional peer dependency, loaded on first use by the entries that need it (`rxagent/postgres`, `rxagent/dbos`). */

/** Loads `pg`, or says how to install it, naming the `entry` that needed it. */
export async function loadPg(entry: string): Promise<typeof import('pg')> {
  try {
    const module = (await import('pg')) as typeof import('pg') & { default?: typeof import('pg') }
    return module.default ?? module
  } catch (error) {
    throw new Error(`${entry} needs the optional peer dependency pg: npm install pg`, { cause: error })
  }
}
