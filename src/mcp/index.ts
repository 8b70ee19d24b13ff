// MCP both ways: vis as an MCP server (stdio, and Streamable HTTP on the API app; here, above the engine), and MCP
// servers' tools bound into sessions as Python functions (src/mcp-client/, below the engine).

export {
  loadMcpConfig,
  type McpConfig,
  type McpServePolicy,
  McpServePolicySchema,
} from '../engine/mcp-config.js'
export { bindMcpServers, pythonToolName, SessionMcpClients } from '../mcp-client/bind.js'
export {
  type McpServerConfig,
  type McpServers,
  type McpServersInput,
  McpServersSchema,
} from '../mcp-client/config.js'
export { createVisMcpServer, type VisMcpServer } from './server/server.js'
export { MCP_PATH, mountMcp } from './server/transport-http.js'
export { serveStdio } from './server/transport-stdio.js'
