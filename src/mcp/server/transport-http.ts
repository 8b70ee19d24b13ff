import { randomUUID } from 'node:crypto'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import type { Hono } from 'hono'
import type { Engine } from '../../engine/engine.js'
import type { McpServePolicy } from '../../engine/mcp-config.js'
import { createVisMcpServer, pinServeRoots, type VisMcpServer } from './server.js'

export const MCP_PATH = '/mcp'
// An MCP session no request has touched for this long is closed with its vis sessions.
export const DEFAULT_MCP_IDLE_MS = 30 * 60 * 1000

type Entry = {
  transport: WebStandardStreamableHTTPServerTransport
  mcp: VisMcpServer
  lastSeen: number
  inFlight: number
}

export type McpHttpOptions = { policy: McpServePolicy; idleMs?: number }

const jsonRpcError = (status: number, code: number, message: string) =>
  new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json' },
  })

// The Streamable HTTP endpoint, mounted on the API's own Hono app so every request passes the
// same middleware (token, Host and Origin checks, body limit) as the rest of the API. Each MCP
// session (initialize → Mcp-Session-Id) gets its own server and its own vis sessions.
export function mountMcp(app: Hono, engine: Engine, options: McpHttpOptions): { close(): Promise<void> } {
  const entries = new Map<string, Entry>()
  // Pinned once, when vis serve starts: a root swapped before a client's first call is refused.
  const pins = pinServeRoots(options.policy.roots)
  const idleMs = options.idleMs ?? DEFAULT_MCP_IDLE_MS
  const drop = async (id: string) => {
    const e = entries.get(id)
    if (!e) return
    entries.delete(id)
    await e.mcp.close()
    await e.transport.close().catch(() => undefined)
  }
  const sweep = setInterval(
    () => {
      const now = Date.now()
      for (const [id, e] of entries)
        if (e.inFlight === 0 && e.mcp.active === 0 && now - e.lastSeen > idleMs) void drop(id)
    },
    Math.min(idleMs, 60_000),
  )
  sweep.unref()

  app.all(MCP_PATH, async (c) => {
    const req = c.req.raw
    const sid = req.headers.get('mcp-session-id')
    let entry: Entry | undefined
    if (sid) {
      entry = entries.get(sid)
      if (!entry)
        return jsonRpcError(404, -32001, 'No such MCP session (it ended or expired); initialize a new one.')
    } else if (req.method !== 'POST') {
      return jsonRpcError(400, -32000, 'Send Mcp-Session-Id, or POST an initialize request first.')
    } else {
      const mcp = createVisMcpServer(engine, options.policy, 'http', pins)
      // Registered once the initialize request has made the session id, not before.
      let created: Entry | undefined
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          if (created) entries.set(id, created)
        },
        onsessionclosed: (id) => {
          void drop(id)
        },
      })
      created = { mcp, transport, lastSeen: Date.now(), inFlight: 0 }
      await mcp.server.connect(transport)
      entry = created
    }
    entry.inFlight++
    entry.lastSeen = Date.now()
    try {
      const res = await entry.transport.handleRequest(req)
      // A request that did not start a session (not an initialize) leaves nothing behind.
      if (!sid && entry.transport.sessionId === undefined) await entry.mcp.close()
      return res
    } finally {
      entry.inFlight--
      entry.lastSeen = Date.now()
    }
  })
  return {
    async close() {
      clearInterval(sweep)
      await Promise.allSettled([...entries.keys()].map(drop))
    },
  }
}
