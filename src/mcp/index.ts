/**
 * rxagent/mcp: tools from MCP servers, and rxagent tools or an Agent served
 * as an MCP server. Needs the optional peers `@modelcontextprotocol/client`
 * (client side) and `@modelcontextprotocol/server` (server side); `ajv`, when
 * installed, validates MCP tools' arguments before they are sent.
 */
export { connectMcp, mcpTools, syncMcpTools, type McpConnection, type ToolsTarget } from './client.js'
export { McpClientOptions, McpHttpServer, McpServerConfig, McpStdioServer } from './config.js'
export type { McpToolDetails } from './result-content.js'
export { toolNameFor } from './names.js'
export { serveMcp, type McpServeTransport, type McpServing, type ServeMcpOptions } from './serve.js'
export type { ServableAgent, ServedAgent } from './serve-agent.js'
