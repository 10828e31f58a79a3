/**
 * The MCP SDK, loaded on first use with `import()`: it is an optional peer,
 * and nothing outside `rxagent/mcp` may reach it.
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
