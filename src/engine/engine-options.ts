import type { McpServersInput } from '../mcp-client/config.js'
import type { Durability } from '../persistence/index.js'

export type EngineOptions = {
  home?: string
  // postgres://... stores sessions in PostgreSQL (default: VIS_DATABASE_URL; none: SQLite in home).
  databaseUrl?: string
  python?: string
  pool?: { size: number }
  // Where the HTTP API listens, when one does; reported by health().
  bindAddress?: string
  interruptAckMs?: number
  // Stored stdout per block is cut past this many characters.
  maxOutputChars?: number
  // What the attachments stored for one session may hold in all, in MiB (by the bytes stored;
  // default 512): past it a block's attachments are not kept (src/engine/attachment-budget.ts).
  maxSessionAttachmentsMb?: number
  durability?: Durability
  eventFlushMs?: number
  // Events kept per session for SSE replay (the store's default when unset).
  eventRetention?: number
  // Bind the default host tools (files, git, shell per policy) into sessions with roots.
  tools?: boolean
  // The project: its .vis/extensions load beside the home's, and its declared layout seeds
  // the sandbox's sys.path. `vis serve` passes its working directory; the library, none.
  project?: string
  // Load trusted Python extensions (default true; none exist unless their directories have files).
  extensions?: boolean
  // The configured `python.source_paths`, relative to the project: first on sys.path.
  sourcePaths?: string[]
  // The directories API clients' roots must resolve beneath (`vis serve --allow-root`,
  // VIS_ALLOW_ROOTS); unset: any directory the root rules allow (src/confinement/root-guard.ts).
  allowRoots?: string[]
  // MCP servers whose tools every session gets (default: "servers" of the home's mcp.json).
  mcpServers?: McpServersInput
}
