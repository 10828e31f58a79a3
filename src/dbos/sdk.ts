/**
 * DBOS Transact, loaded on first use with `import()`: it is an optional
 * peer, and nothing outside `rxagent/dbos` may reach it. The rest of the
 * module talks to it through {@link DbosApi}, the few calls a workflow makes.
 */
import type * as Sdk from '@dbos-inc/dbos-sdk'
import type * as Executor from '@dbos-inc/dbos-sdk/internal/dbos-executor'

/** What the workflow uses of DBOS (inside a workflow only). */
export interface DbosApi {
  runStep<R>(fn: () => Promise<R>, config: { readonly name: string }): Promise<R>
  recv<T>(topic: string, timeoutSeconds: number): Promise<T | null>
}

/** The SDK and the executor (for recovering a dead worker's workflows). */
export interface DbosModules {
  readonly sdk: typeof Sdk
  readonly executor: typeof Executor
}

let modules: Promise<DbosModules> | undefined

/** `@dbos-inc/dbos-sdk`, or an error saying how to install it. */
export function loadDbos(entry: string): Promise<DbosModules> {
  modules ??= Promise.all([import('@dbos-inc/dbos-sdk'), import('@dbos-inc/dbos-sdk/internal/dbos-executor')]).then(([sdk, executor]) => ({ sdk, executor }))
  return modules.catch((error: unknown) => {
    modules = undefined
    throw new Error(`${entry} needs the optional peer dependencies @dbos-inc/dbos-sdk and pg: npm install @dbos-inc/dbos-sdk pg`, { cause: error })
  })
}

/** The calls a workflow makes, bound to the SDK's `DBOS`. */
export function dbosApi(sdk: typeof Sdk): DbosApi {
  const { DBOS } = sdk
  return {
    runStep: (fn, config) => DBOS.runStep(fn, { name: config.name }),
    recv: (topic, timeoutSeconds) => DBOS.recv(topic, timeoutSeconds),
  }
}
