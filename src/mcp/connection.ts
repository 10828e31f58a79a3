/**
 * One MCP server, connected: its client, its current tools, and the calls
 * made to them. A server that exits or drops the connection fails the calls
 * in flight (the SDK rejects them) and every later call, naming the server.
 */
import type { Client } from '@modelcontextprotocol/client'
import { errorText } from '../types/codec.js'
import { redactText, secretsOf } from '../providers/redact.js'
import type { McpHttpServer, McpServerConfig, McpStdioServer } from './config.js'
import type { ClientModules } from './sdk.js'

/** A tool as the server lists it (the parts rxagent reads). */
export interface McpToolInfo {
  readonly name: string
  readonly title?: string
  readonly description?: string
  readonly inputSchema: Readonly<Record<string, unknown>>
}

/** A progress notification of one call. */
export interface McpProgress {
  readonly progress: number
  readonly total?: number
  readonly message?: string
}

/** The longest timer Node accepts: calls are bounded by the tool's own timeout, not the SDK's default of 60 s. */
const NO_SDK_TIMEOUT = 2 ** 31 - 1
const DEFAULT_CONNECT_TIMEOUT = 30_000

/** Values of the configuration that must never appear in an error: credential headers, credential query parameters, `env` values. */
export function secretsOfConfig(config: McpServerConfig): readonly string[] {
  if ('url' in config) return secretsOf(undefined, { url: config.url, headers: config.headers ?? {}, body: undefined })
  return Object.values(config.env ?? {})
    .filter((v) => v.length >= 8)
    .sort((a, b) => b.length - a.length)
}

/** A connected server. */
export class ServerConnection {
  private closedWith: string | undefined
  private listeners = new Set<() => void>()
  tools: readonly McpToolInfo[] = []

  constructor(
    readonly name: string,
    readonly config: McpServerConfig,
    private readonly client: Client,
    private readonly terminate: () => Promise<void>,
    private readonly secrets: readonly string[],
  ) {
    client.onclose = () => {
      this.closedWith ??= 'the connection closed (the server exited or dropped it)'
    }
  }

  /** `text` with this server's secrets replaced by `[redacted]`. */
  redact(text: string): string {
    return redactText(text, this.secrets)
  }

  /** Calls `fn` after each refresh of the tool list (list_changed). */
  onToolsChanged(fn: () => void): () => void {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  /** Replaces the tool list (from the SDK's list_changed refresh or our own listing). */
  setTools(tools: readonly McpToolInfo[]): void {
    this.tools = tools
    for (const fn of this.listeners) fn()
  }

  /** Fetches the tool list. */
  async listTools(): Promise<readonly McpToolInfo[]> {
    const { tools } = await this.client.listTools(undefined, { timeout: this.config.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT })
    return tools as readonly McpToolInfo[]
  }

  /** Why calls fail from now on, once the server is gone. */
  get closedReason(): string | undefined {
    return this.closedWith
  }

  /**
   * Calls `tool`. Resolves with the server's result (an `isError` result
   * included); rejects with an Error naming server and tool for a protocol
   * error, a dead server, or the abort of `signal` (which sends MCP
   * cancellation).
   */
  async call(tool: string, args: Readonly<Record<string, unknown>>, signal: AbortSignal, onProgress: (p: McpProgress) => void) {
    if (this.closedWith !== undefined) throw new Error(`MCP server '${this.name}' cannot run '${tool}': ${this.closedWith}.`)
    try {
      return await this.client.callTool(
        { name: tool, arguments: { ...args } },
        { signal, timeout: NO_SDK_TIMEOUT, onprogress: (p) => onProgress(p) },
      )
    } catch (error) {
      if (signal.aborted) throw new Error(`MCP call '${tool}' on server '${this.name}' was cancelled: ${errorText(signal.reason)}`, { cause: error })
      const closed = this.closedWith !== undefined || (error as { code?: unknown }).code === 'CONNECTION_CLOSED'
      const why = closed
        ? `the server closed the connection during the call (it exited or dropped it)`
        : this.redact(errorText(error))
      throw new Error(`MCP server '${this.name}' failed to run '${tool}': ${why}`)
    }
  }

  /** Closes the connection: ends the HTTP session, stops the child process. Idempotent. */
  async close(): Promise<void> {
    this.closedWith ??= 'the connection was closed'
    this.listeners.clear()
    await this.terminate()
  }
}

/**
 * Connects to `config` as `name`. Rejects with an Error naming the server
 * (secrets redacted) when the server cannot be started or reached.
 */
export async function connectServer(
  name: string,
  config: McpServerConfig,
  modules: ClientModules,
  clientInfo: { readonly name: string; readonly version: string },
): Promise<ServerConnection> {
  const secrets = secretsOfConfig(config)
  let connection: ServerConnection | undefined
  // Streamable HTTP probes for the 2026 protocol (per-request cancellation, list changes on a listen stream) and
  // falls back to the 2025 handshake; stdio and SSE use the 2025 handshake (a probe would spawn a second process).
  const newClient = (era: 'auto' | 'legacy'): Client =>
    new modules.sdk.Client(
      { name: clientInfo.name, version: clientInfo.version },
      {
        versionNegotiation: { mode: era },
        listChanged: {
          tools: {
            debounceMs: 0,
            onChanged: (error, tools) => {
              if (error === null && tools !== null) connection?.setTools(tools as readonly McpToolInfo[])
            },
          },
        },
      },
    )
  const timeout = config.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT
  try {
    const { client, terminate } = 'command' in config ? await connectStdio(config, modules, newClient, timeout) : await connectHttp(config, modules, newClient, timeout)
    connection = new ServerConnection(name, config, client, terminate, secrets)
    connection.setTools(await connection.listTools())
    return connection
  } catch (error) {
    await connection?.close().catch(() => undefined)
    const text = redactText(errorText(error), secrets)
    throw new Error(`MCP server '${name}' could not be connected: ${text}`)
  }
}

type Connected = { client: Client; terminate: () => Promise<void> }

/**
 * Delivers each response to the client a little after the messages read
 * before it. The SDK's client dispatches a notification a microtask late but
 * a response at once, and forgets a call's progress handler with its
 * response: progress that arrives together with the result (a quick tool's
 * last update) would be dropped. Called once the client is connected (it
 * has set `onmessage` then); order among responses is kept.
 */
export function deferResponses(transport: { onmessage?: ((message: never, extra?: never) => void) | undefined }): void {
  const deliver = transport.onmessage
  if (deliver === undefined) return
  transport.onmessage = (message, extra) => {
    const m = message as { id?: unknown; method?: unknown }
    if (m.id !== undefined && m.method === undefined) setImmediate(() => deliver(message, extra))
    else deliver(message, extra)
  }
}

async function connectStdio(config: McpStdioServer, modules: ClientModules, newClient: (era: 'auto' | 'legacy') => Client, timeout: number): Promise<Connected> {
  const transport = new modules.stdio.StdioClientTransport({
    command: config.command,
    ...(config.args !== undefined && { args: [...config.args] }),
    env: { ...modules.stdio.getDefaultEnvironment(), ...config.env },
    ...(config.cwd !== undefined && { cwd: config.cwd }),
    stderr: config.stderr ?? 'inherit',
  })
  const client = newClient('legacy')
  try {
    await client.connect(transport, { timeout })
  } catch (error) {
    await client.close().catch(() => undefined)
    throw error
  }
  deferResponses(transport)
  return { client, terminate: () => client.close() }
}

async function connectHttp(config: McpHttpServer, modules: ClientModules, newClient: (era: 'auto' | 'legacy') => Client, timeout: number): Promise<Connected> {
  const url = new URL(config.url)
  const requestInit: RequestInit = { headers: { ...config.headers } }
  const mode = config.transport ?? 'auto'
  let first: unknown
  if (mode !== 'sse') {
    const transport = new modules.sdk.StreamableHTTPClientTransport(url, { requestInit })
    const client = newClient('auto')
    try {
      await client.connect(transport, { timeout })
      deferResponses(transport)
      return {
        client,
        terminate: async () => {
          await transport.terminateSession().catch(() => undefined)
          await client.close()
        },
      }
    } catch (error) {
      await client.close().catch(() => undefined)
      if (mode === 'streamable-http') throw error
      first = error
    }
  }
  // The older HTTP+SSE transport: a GET event stream and POSTed messages.
  const headers = { ...config.headers }
  const transport = new modules.sdk.SSEClientTransport(url, {
    requestInit,
    eventSourceInit: { fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }) },
  })
  const client = newClient('legacy')
  try {
    await client.connect(transport, { timeout })
  } catch (error) {
    await client.close().catch(() => undefined)
    if (first === undefined) throw error
    throw new Error(`streamable HTTP failed (${errorText(first)}), and so did SSE (${errorText(error)})`)
  }
  deferResponses(transport)
  return { client, terminate: () => client.close() }
}

