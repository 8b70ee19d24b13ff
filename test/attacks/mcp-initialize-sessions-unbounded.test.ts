// ATTACK (surface 1/3, per-stream objects and memory not in any budget; the MCP front door): every
// `initialize` POSTed to `/mcp` makes an MCP session: its own MCP server, its tool table, its
// client-session map and a Streamable HTTP transport (src/mcp/server/transport-http.ts mountMcp),
// kept in a map until a request closes it or it has been idle for 30 minutes (DEFAULT_MCP_IDLE_MS).
// Nothing bounds how many there are: the connection caps (SECURITY.md, Slow and hostile clients)
// count connections, and an initialize needs a connection only for its one request, so one client
// on one keep-alive connection makes sessions as fast as it can POST, and each stays in the
// server's heap for half an hour. The event streams' bytes are budgeted (64 MiB for all of them,
// src/http/sse-budget.ts); the sessions that stream them are not.
// Here: SESSIONS initialize requests, one after another, never followed by anything. The V8 heap
// of the server process (garbage collected) is compared with that 64 MiB, as the bound the server
// keeps for what all clients' streams hold together. On the current code 1000 of them took ~4 s
// and ~31 MiB of heap.
// Both directions: an MCP client made afterwards still works.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { DEFAULT_MAX_QUEUED_BYTES_TOTAL } from '../../src/http/sse-budget.js'
import { mcpOverHttp, textOf } from '../mcp/helpers.js'

const TOKEN = 'attack16b-mcp-init-token-0123456789abcdef'
const SESSIONS = 4000

setFlagsFromString('--expose-gc')
const collect = runInNewContext('gc') as () => void

test('initialize requests do not make MCP sessions without bound', async () => {
  const { server, client: c, close } = await mcpOverHttp('mcp-init-unbounded', TOKEN)
  try {
    const headers = {
      authorization: `Bearer ${TOKEN}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    }
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'many', version: '1' } },
    })
    collect()
    const base = process.memoryUsage().heapUsed
    let made = 0
    for (let i = 0; i < SESSIONS; i++) {
      const r = await fetch(`${server.url}/mcp`, { method: 'POST', headers, body })
      await r.text()
      if (r.status === 200 && r.headers.get('mcp-session-id')) made++
    }
    collect()
    const grown = process.memoryUsage().heapUsed - base
    const mib = Math.round(grown / 2 ** 20)

    // Allowed: the client made before still runs a block.
    const r = (await c.callTool({
      name: 'python_execution',
      arguments: { code: 'print(6 * 7)' },
    })) as CallToolResult
    assert.equal(r.isError, false, textOf(r))
    assert.match(textOf(r), /42/)

    assert.ok(
      grown < DEFAULT_MAX_QUEUED_BYTES_TOTAL,
      `${SESSIONS} initialize requests from one client made ${made} MCP sessions, each kept for 30 minutes, and ` +
        `grew the server's heap by ${mib} MiB (past the ${DEFAULT_MAX_QUEUED_BYTES_TOTAL / 2 ** 20} MiB all event ` +
        'streams together may hold): nothing bounds how many MCP sessions the server keeps',
    )
  } finally {
    await close()
  }
})
