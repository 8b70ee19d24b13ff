import { join } from 'node:path'
import { z } from 'zod'
import { McpServersSchema } from '../mcp-client/config.js'
import { VisError } from '../util/errors.js'
import { readHomeFile } from '../util/home-files.js'
import { openHome } from '../util/home-guard.js'
import { issuesText } from '../util/zod-issues.js'
import { SessionPolicySchema } from './schemas.js'

// The vis home's mcp.json: the servers whose tools sessions get, and the policy of the
// sessions vis itself serves over MCP.
// No review mode over MCP: a review ends with a person reading the diff and applying it, and an
// MCP client has no such step (its model would apply its own draft). Refused with the way to
// let a client look without changing anything.
export const MCP_NO_REVIEW =
  'MCP sessions have no review mode: an MCP client has no step where a person reads the diff and applies it. ' +
  'Use read-only (vis mcp --read-only, or "serve": {"mode": "read-only"} in mcp.json) to let a client look without changing anything, ' +
  "or vis run --review / vis chat --review to review an agent's changes"
export const McpServePolicySchema = SessionPolicySchema.pick({
  roots: true,
  network: true,
  mode: true,
}).refine((p) => p.mode !== 'review', { message: MCP_NO_REVIEW, path: ['mode'] })
export type McpServePolicy = z.output<typeof McpServePolicySchema>

// "mcpServers" is what Claude, Cursor and most READMEs call the servers: a file written for them
// works here unchanged. Giving both names is refused rather than one silently ignored.
export const McpConfigSchema = z
  .object({
    servers: McpServersSchema.optional(),
    mcpServers: McpServersSchema.optional(),
    serve: McpServePolicySchema.default({}),
  })
  .strict()
  .refine((c) => c.servers === undefined || c.mcpServers === undefined, {
    message: 'give the servers as "servers" or as "mcpServers", not both',
  })
  .transform(({ servers, mcpServers, serve }) => ({ servers: servers ?? mcpServers ?? {}, serve }))
export type McpConfig = z.output<typeof McpConfigSchema>

export const CONFIG_FILE = 'mcp.json'

export function loadMcpConfig(home?: string): McpConfig {
  // The servers in it start on this host: never from a home a running sandbox can write.
  const h = openHome(home, 'mcp.config')
  const path = join(h, CONFIG_FILE)
  // Nor from a file the home links to where a sandbox writes (home-files.ts).
  const text = readHomeFile(h, path, 'home.file-writable', 'mcp.config')
  if (text === undefined) return McpConfigSchema.parse({})
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch (err) {
    throw new VisError('mcp.config', `${path} is not valid JSON: ${(err as Error).message}`, { path })
  }
  const parsed = McpConfigSchema.safeParse(raw)
  if (!parsed.success) {
    throw new VisError('mcp.config', `${path}: ${issuesText(parsed.error, '(top level)')}`, { path })
  }
  return parsed.data
}
