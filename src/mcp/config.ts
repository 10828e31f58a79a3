/**
 * What `connectMcp` and `mcpTools` accept: named servers, each a child
 * process (stdio) or a URL (streamable HTTP, with the SSE fallback).
 */
import * as t from 'io-ts'
import { NonNegativeNumber, describeValue, struct } from '../types/codec.js'

/** Options every server accepts. */
const common = {
  /** Name tools `<server>__<tool>` (default `true`); `false` keeps the server's names (made unique if two servers collide). */
  prefix: t.boolean,
  /** Milliseconds before a call of this server's tools is abandoned (sent as the tools' `timeoutMs`; cancellation is sent to the server). */
  timeoutMs: NonNegativeNumber,
  /** Milliseconds `connect` may take before it fails (default 30 000). */
  connectTimeoutMs: NonNegativeNumber,
  /** Mark every tool of this server as needing approval. */
  needsApproval: t.boolean,
}

const Stderr = t.keyof({ inherit: null, ignore: null, pipe: null }, "'inherit' | 'ignore' | 'pipe'")

/** A server started as a child process, spoken to over its stdin and stdout. */
export const McpStdioServer = struct(
  'McpStdioServer',
  { command: t.string },
  {
    args: t.readonlyArray(t.string),
    /** Added to the SDK's default environment (`HOME`, `PATH`…, not the whole of `process.env`). */
    env: t.record(t.string, t.string),
    cwd: t.string,
    /** The child's stderr (default `'inherit'`). */
    stderr: Stderr,
    ...common,
  },
)
export type McpStdioServer = t.TypeOf<typeof McpStdioServer>

/** An absolute `http:` or `https:` URL. */
const HttpUrl = new t.Type<string, string, unknown>(
  'HttpUrl',
  (u): u is string => typeof u === 'string',
  (u, c) => {
    if (typeof u !== 'string') return t.failure(u, c)
    try {
      const url = new URL(u)
      if (url.protocol === 'http:' || url.protocol === 'https:') return t.success(u)
    } catch {
      // Reported below.
    }
    return t.failure(u, c, `expected an http(s) URL, got ${describeValue(u)}`)
  },
  t.identity,
)

/** The transports an HTTP server may be reached with. */
const HttpTransport = t.keyof({ auto: null, 'streamable-http': null, sse: null }, "'auto' | 'streamable-http' | 'sse'")

/** A server reached over HTTP. */
export const McpHttpServer = struct(
  'McpHttpServer',
  { url: HttpUrl },
  {
    /** Sent with every request (e.g. `Authorization`). Credential values are redacted from every error text. */
    headers: t.record(t.string, t.string),
    /** `'auto'` (default): streamable HTTP, then the older HTTP+SSE transport if that fails. */
    transport: HttpTransport,
    ...common,
  },
)
export type McpHttpServer = t.TypeOf<typeof McpHttpServer>

/** One server: `command` for a child process, `url` for HTTP. */
export const McpServerConfig = t.union([McpStdioServer, McpHttpServer], 'McpServerConfig')
export type McpServerConfig = McpStdioServer | McpHttpServer

const SERVER_NAME = /^[a-zA-Z0-9_-]{1,64}$/
/** A server's name: it prefixes its tools' names, so it follows the same rule. */
const ServerName = new t.Type<string, string, unknown>(
  'McpServerName',
  (u): u is string => typeof u === 'string' && SERVER_NAME.test(u),
  (u, c) =>
    typeof u === 'string' && SERVER_NAME.test(u)
      ? t.success(u)
      : t.failure(u, c, `Invalid server name ${describeValue(u)}: it must be 1 to 64 characters of letters, digits, '_' or '-'`),
  t.identity,
)

/** Servers by name: every name a {@link ServerName}, every value a {@link McpServerConfig}. */
const Servers = new t.Type<Record<string, McpServerConfig>, Record<string, McpServerConfig>, unknown>(
  'Record<McpServerName, McpServerConfig>',
  (u): u is Record<string, McpServerConfig> => t.UnknownRecord.is(u) && Object.entries(u).every(([k, v]) => ServerName.is(k) && McpServerConfig.is(v)),
  (u, c) => {
    if (!t.UnknownRecord.is(u)) return t.failure(u, c)
    const errors: t.ValidationError[] = []
    for (const [name, config] of Object.entries(u)) {
      const at = t.appendContext(c, name, McpServerConfig, config)
      const key = ServerName.validate(name, at)
      if (key._tag === 'Left') errors.push(...key.left)
      const value = McpServerConfig.validate(config, at)
      if (value._tag === 'Left') errors.push(...value.left)
    }
    return errors.length > 0 ? t.failures(errors) : t.success(u as Record<string, McpServerConfig>)
  },
  t.identity,
)

/** The options of `connectMcp` and `mcpTools`. */
export const McpClientOptions = struct(
  'McpClientOptions',
  { servers: Servers },
  {
    /** How this client names itself to servers (default `rxagent`). */
    clientInfo: t.type({ name: t.string, version: t.string }),
  },
)
export interface McpClientOptions {
  /** The servers by name; the name prefixes their tools' names. */
  readonly servers: Readonly<Record<string, McpServerConfig>>
  /** How this client names itself to servers (default `{ name: 'rxagent', version: '0' }`). */
  readonly clientInfo?: { readonly name: string; readonly version: string }
}
