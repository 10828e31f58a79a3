/**
 * The MCP SDK and Ajv, loaded on first use with `import()`: both are
 * optional peers, and nothing outside `rxagent/mcp` may reach them.
 */
import type * as ClientSdk from '@modelcontextprotocol/client'
import type * as ClientStdio from '@modelcontextprotocol/client/stdio'
import type * as ServerSdk from '@modelcontextprotocol/server'
import type * as ServerStdio from '@modelcontextprotocol/server/stdio'

/** The client half of the SDK: `Client` and its transports. */
export interface ClientModules {
  readonly sdk: typeof ClientSdk
  readonly stdio: typeof ClientStdio
}

/** The server half of the SDK: the low-level `Server`, `createMcpHandler` and stdio serving. */
export interface ServerModules {
  readonly sdk: typeof ServerSdk
  readonly stdio: typeof ServerStdio
}

const missing = (name: string, entry: string, cause: unknown): Error =>
  new Error(`${entry} needs the optional peer dependency ${name}: npm install ${name}`, { cause })

let client: Promise<ClientModules> | undefined
let server: Promise<ServerModules> | undefined

/** `@modelcontextprotocol/client`, or an error saying how to install it. */
export function loadClient(entry: string): Promise<ClientModules> {
  client ??= Promise.all([import('@modelcontextprotocol/client'), import('@modelcontextprotocol/client/stdio')]).then(
    ([sdk, stdio]) => ({ sdk, stdio }),
  )
  return client.catch((error: unknown) => {
    client = undefined
    throw missing('@modelcontextprotocol/client', entry, error)
  })
}

/** `@modelcontextprotocol/server`, or an error saying how to install it. */
export function loadServer(entry: string): Promise<ServerModules> {
  server ??= Promise.all([import('@modelcontextprotocol/server'), import('@modelcontextprotocol/server/stdio')]).then(
    ([sdk, stdio]) => ({ sdk, stdio }),
  )
  return server.catch((error: unknown) => {
    server = undefined
    throw missing('@modelcontextprotocol/server', entry, error)
  })
}

/** What validating arguments needs from Ajv: compile a schema to a validator. */
export interface AjvLike {
  compile(schema: object): AjvValidate
}
/** A compiled Ajv validator: `errors` is set after a failed call. */
export interface AjvValidate {
  (data: unknown): boolean
  errors?: readonly { readonly instancePath: string; readonly message?: string; readonly params?: unknown }[] | null
}

let ajv: Promise<AjvLike | undefined> | undefined

/**
 * An Ajv instance for JSON Schema 2020-12 (what MCP servers send), or
 * `undefined` when Ajv is not installed: arguments then go to the server
 * unvalidated, and the server's own validation error is the result.
 */
export function loadAjv(): Promise<AjvLike | undefined> {
  ajv ??= import('ajv/dist/2020.js').then(
    (module) => {
      // The CommonJS default export arrives as `default` (and, under some loaders, `default.default`).
      const m = module as unknown as { default: unknown }
      const inner = m.default as { default?: unknown }
      const Ajv2020 = (typeof inner === 'function' ? inner : inner.default) as new (options: object) => AjvLike
      return new Ajv2020({ strict: false, allErrors: true, validateFormats: false })
    },
    () => undefined,
  )
  return ajv
}
