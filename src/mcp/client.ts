/**
 * `connectMcp` and `mcpTools`: MCP servers' tools as `AgentTool`s.
 *
 * Ownership: `connectMcp` returns a connection the caller owns and closes
 * with `close()` (child processes stopped, HTTP sessions ended).
 * `mcpTools` is the same as an Observable that owns its connection: it
 * connects on subscribe, emits the tool list (again on each
 * `tools/list_changed`), and closes everything on unsubscribe.
 */
import { BehaviorSubject, Observable, skip, type Subscription } from 'rxjs'
import { decodeInput } from '../types/input.js'
import type { JsonObject } from '../types/codec.js'
import type { AgentTool, ToolExecuteContext, ToolOutput } from '../types/tool.js'
import { McpClientOptions } from './config.js'
import { connectServer, type McpToolInfo, type ServerConnection } from './connection.js'
import { jsonSchemaArguments } from './json-schema-arguments.js'
import { toolNameFor, uniqueNames } from './names.js'
import { errorTextOf, progressOutput, toolOutputOf } from './result-content.js'
import { loadAjv, loadClient, type AjvLike } from './sdk.js'

/** Connected MCP servers and their tools. */
export interface McpConnection {
  /** The servers' tools now, in the order the servers were configured, each server's in its listing order. */
  readonly tools: readonly AgentTool[]
  /** The tool list now, and again after each `tools/list_changed`; completes on `close()`. */
  readonly tools$: Observable<readonly AgentTool[]>
  /** Closes every server: child processes stopped, HTTP sessions ended. Calls in flight fail. Idempotent. */
  close(): Promise<void>
}

const ENTRY = 'connectMcp'

/**
 * Connects to every server in `options.servers` (all at once) and lists
 * their tools. If one cannot be connected, the others are closed again and
 * the promise rejects with an Error naming it.
 *
 * @throws InvalidInputError naming the path of a bad option (`servers.files.command`).
 */
export async function connectMcp(options: McpClientOptions): Promise<McpConnection> {
  decodeInput(McpClientOptions, options, ENTRY, 'options')
  const [modules, ajv] = await Promise.all([loadClient(ENTRY), loadAjv()])
  const clientInfo = options.clientInfo ?? { name: 'rxagent', version: '0' }
  const entries = Object.entries(options.servers)
  const settled = await Promise.allSettled(entries.map(([name, config]) => connectServer(name, config, modules, clientInfo)))
  const servers = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []))
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected')
  if (failed !== undefined) {
    await Promise.all(servers.map((s) => s.close().catch(() => undefined)))
    throw failed.reason
  }
  return new Connection(servers, ajv)
}

class Connection implements McpConnection {
  private readonly list: BehaviorSubject<readonly AgentTool[]>
  private closing: Promise<void> | undefined

  constructor(
    private readonly servers: readonly ServerConnection[],
    private readonly ajv: AjvLike | undefined,
  ) {
    this.list = new BehaviorSubject(this.build())
    for (const server of servers) server.onToolsChanged(() => this.list.next(this.build()))
  }

  get tools(): readonly AgentTool[] {
    return this.list.value
  }

  get tools$(): Observable<readonly AgentTool[]> {
    return this.list.asObservable()
  }

  close(): Promise<void> {
    this.closing ??= Promise.all(this.servers.map((s) => s.close().catch(() => undefined))).then(() => this.list.complete())
    return this.closing
  }

  /** Every server's tools, named and made unique. */
  private build(): readonly AgentTool[] {
    const pairs = this.servers.flatMap((server) => server.tools.map((info) => ({ server, info })))
    const names = uniqueNames(pairs.map(({ server, info }) => toolNameFor(server.name, info.name, server.config.prefix ?? true)))
    return pairs.map(({ server, info }, i) => mcpAgentTool(server, info, names[i]!, this.ajv))
  }
}

/** One MCP tool as an `AgentTool` named `name`. */
function mcpAgentTool(server: ServerConnection, info: McpToolInfo, name: string, ajv: AjvLike | undefined): AgentTool<JsonObject> {
  const { $schema: _dialect, ...schema } = info.inputSchema
  const { timeoutMs, needsApproval } = server.config
  return Object.freeze({
    name,
    description: info.description ?? info.title ?? `${info.name} (from the MCP server ${server.name})`,
    schema: { type: 'object', ...schema },
    decodeArguments: jsonSchemaArguments(info.inputSchema, ajv),
    execute: (args: JsonObject, context: ToolExecuteContext) => callOnServer(server, info.name, args, context),
    label: info.title ?? info.name,
    ...(timeoutMs !== undefined && { timeoutMs }),
    ...(needsApproval !== undefined && { needsApproval }),
  })
}

/** A call as an Observable: progress updates, then the result; an error for an error result. */
function callOnServer(server: ServerConnection, tool: string, args: JsonObject, context: ToolExecuteContext): Observable<ToolOutput> {
  return new Observable<ToolOutput>((subscriber) => {
    server
      .call(tool, args, context.signal, (p) => subscriber.next(progressOutput(p, server.name, tool)))
      .then(
        (result) => {
          if (result.isError === true) subscriber.error(new Error(server.redact(errorTextOf(result))))
          else {
            subscriber.next(toolOutputOf(result, server.name, tool))
            subscriber.complete()
          }
        },
        (error: unknown) => subscriber.error(error),
      )
  })
}

/**
 * The tools of `options.servers` as an Observable that owns the connections:
 * subscribing connects, each tool list is emitted (the first once every
 * server is connected, then one per `tools/list_changed`), and unsubscribing
 * closes every server. A server that cannot be connected errors the Observable.
 */
export function mcpTools(options: McpClientOptions): Observable<readonly AgentTool[]> {
  decodeInput(McpClientOptions, options, 'mcpTools', 'options')
  return new Observable<readonly AgentTool[]>((subscriber) => {
    let connection: McpConnection | undefined
    let inner: Subscription | undefined
    let done = false
    connectMcp(options).then(
      (c) => {
        if (done) return void c.close()
        connection = c
        inner = c.tools$.subscribe(subscriber)
      },
      (error: unknown) => subscriber.error(error),
    )
    return () => {
      done = true
      inner?.unsubscribe()
      void connection?.close()
    }
  })
}

/** What `syncMcpTools` needs of an agent. */
export interface ToolsTarget {
  setTools(tools: readonly AgentTool[]): void
}

/**
 * Keeps `agent`'s tools equal to `keep` followed by `mcp`'s tools, now and
 * after each `tools/list_changed`. An Agent takes its tools when a run starts,
 * so a change reaches the model from the next run on. Unsubscribe to stop
 * (the connection stays open: its owner closes it).
 *
 * @throws InvalidInputError from `agent.setTools` when the first list is
 * refused (say, a tool of `keep` has the name of an MCP tool). A later list
 * that is refused leaves the agent's tools as they were and goes to `onError`.
 */
export function syncMcpTools(
  agent: ToolsTarget,
  mcp: Pick<McpConnection, 'tools' | 'tools$'>,
  keep: readonly AgentTool[] = [],
  onError: (error: unknown) => void = () => undefined,
): Subscription {
  agent.setTools([...keep, ...mcp.tools])
  return mcp.tools$.pipe(skip(1)).subscribe((tools) => {
    try {
      agent.setTools([...keep, ...tools])
    } catch (error) {
      onError(error)
    }
  })
}
