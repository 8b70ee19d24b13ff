import { randomUUID } from 'node:crypto'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import type { Hono } from 'hono'
import type { Engine } from '../../engine/engine.js'
import type { McpServePolicy } from '../../engine/mcp-config.js'
import type { ErrorCode } from '../../util/error-catalogue.js'
import { createVisMcpServer, pinServeRoots, type VisMcpServer } from './server.js'

export const MCP_PATH = '/mcp'
// An MCP session no request has touched for this long is closed with its vis sessions.
export const DEFAULT_MCP_IDLE_MS = 30 * 60 * 1000
// One that never sent anything after its initialize (not even the handshake's
// `notifications/initialized`) is closed after this long idle instead.
export const DEFAULT_MCP_UNUSED_IDLE_MS = 60 * 1000
// At most this many MCP sessions live at once, server-wide: every initialize made one, each
// with its own server, tool table and transport, kept for the idle time above, and nothing
// bounded their number (sixteenth pass: 4000 initializes from one client, +113 MiB of heap).
// There is one bearer token and so no client to count per; at the bound an initialize closes
// the least recently used idle session (those never used after their initialize first), whose
// next request is answered like any ended session (404, "No such MCP session"), and with none
// idle it is refused (503, mcp.sessions-full).
export const DEFAULT_MCP_MAX_SESSIONS = 256

const SESSIONS_FULL: ErrorCode = 'mcp.sessions-full'

type Entry = {
  transport: WebStandardStreamableHTTPServerTransport
  mcp: VisMcpServer
  lastSeen: number
  inFlight: number
  // A request has come with this session's id since its initialize.
  used: boolean
}

export type McpHttpOptions = {
  policy: McpServePolicy
  idleMs?: number
  unusedIdleMs?: number
  maxSessions?: number
  // The bound of the event stream a POST is answered on (app.ts: the server's `maxQueuedBytes`):
  // one resources/read answer must fit it (resources.ts).
  maxAnswerBytes?: number
}

const jsonRpcError = (
  status: number,
  code: number,
  message: string,
  data?: Record<string, unknown>,
  headers: Record<string, string> = {},
) =>
  new Response(
    JSON.stringify({ jsonrpc: '2.0', error: { code, message, ...(data ? { data } : {}) }, id: null }),
    { status, headers: { 'content-type': 'application/json', ...headers } },
  )

// The Streamable HTTP endpoint, mounted on the API's own Hono app so every request passes the
// same middleware (token, Host and Origin checks, body limit) as the rest of the API. Each MCP
// session (initialize → Mcp-Session-Id) gets its own server and its own vis sessions.
export function mountMcp(
  app: Hono,
  engine: Engine,
  options: McpHttpOptions,
): { readonly sessions: number; close(): Promise<void> } {
  const entries = new Map<string, Entry>()
  // Pinned once, when vis serve starts: a root swapped before a client's first call is refused.
  const pins = pinServeRoots(options.policy.roots)
  const idleMs = options.idleMs ?? DEFAULT_MCP_IDLE_MS
  const unusedIdleMs = Math.min(idleMs, options.unusedIdleMs ?? DEFAULT_MCP_UNUSED_IDLE_MS)
  const maxSessions = options.maxSessions ?? DEFAULT_MCP_MAX_SESSIONS
  // Sessions being made now (an initialize in its request): counted against the bound before
  // the transport registers them, so concurrent initializes cannot pass it together.
  let opening = 0
  const drop = async (id: string) => {
    const e = entries.get(id)
    if (!e) return
    entries.delete(id)
    await e.mcp.close()
    await e.transport.close().catch(() => undefined)
  }
  const idle = (e: Entry) => e.inFlight === 0 && e.mcp.active === 0
  const sweep = setInterval(
    () => {
      const now = Date.now()
      for (const [id, e] of entries)
        if (idle(e) && now - e.lastSeen > (e.used ? idleMs : unusedIdleMs)) void drop(id)
    },
    Math.min(unusedIdleMs, 60_000),
  )
  sweep.unref()
  // Room for one more session: true when there is, after closing the least recently used idle
  // one if the bound is reached (one never used after its initialize before any other).
  const makeRoom = (): boolean => {
    if (entries.size + opening < maxSessions) return true
    let victim: [string, Entry] | undefined
    for (const [id, e] of entries) {
      if (!idle(e)) continue
      const better =
        victim === undefined ||
        (victim[1].used && !e.used) ||
        (victim[1].used === e.used && e.lastSeen < victim[1].lastSeen)
      if (better) victim = [id, e]
    }
    if (!victim) return false
    void drop(victim[0])
    return entries.size + opening < maxSessions
  }

  app.all(MCP_PATH, async (c) => {
    const req = c.req.raw
    const sid = req.headers.get('mcp-session-id')
    let entry: Entry | undefined
    let reserved = false
    if (sid) {
      entry = entries.get(sid)
      if (!entry)
        return jsonRpcError(404, -32001, 'No such MCP session (it ended or expired); initialize a new one.')
      entry.used = true
    } else if (req.method !== 'POST') {
      return jsonRpcError(400, -32000, 'Send Mcp-Session-Id, or POST an initialize request first.')
    } else {
      if (!makeRoom()) {
        return jsonRpcError(
          503,
          -32000,
          `The server keeps at most ${maxSessions} MCP sessions and every one is busy; initialize again later (${SESSIONS_FULL}).`,
          { code: SESSIONS_FULL, maxSessions },
          { 'retry-after': '5' },
        )
      }
      opening++
      reserved = true
      const mcp = createVisMcpServer(engine, options.policy, 'http', pins, {
        resourceAnswerBytes: options.maxAnswerBytes,
      })
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
      created = { mcp, transport, lastSeen: Date.now(), inFlight: 0, used: false }
      try {
        await mcp.server.connect(transport)
      } catch (err) {
        opening--
        throw err
      }
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
      if (reserved) opening--
      entry.inFlight--
      entry.lastSeen = Date.now()
    }
  })
  return {
    // MCP sessions live now.
    get sessions() {
      return entries.size
    },
    async close() {
      clearInterval(sweep)
      await Promise.allSettled([...entries.keys()].map(drop))
    },
  }
}
