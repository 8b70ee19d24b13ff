// ATTACK (surface 7, the session view's bound; a twin the fix missed): the thirteenth pass found
// that reading a session "with its blocks" read EVERY block whole (stdout, value, result, error:
// up to 1 MiB of output and 1 MiB of value each) on the event loop that serves every session,
// and bounded `GET /v1/sessions/{id}` (listSummaries: 50 blocks, 65 536 characters a field).
// `vis serve`'s `/mcp` (and `vis mcp`) still lists its resources through the unbounded read:
// `resources/list` (src/mcp/server/resources.ts listResources) calls `engine.getSession(id)`,
// every block of every session the client made, in full, to count the blocks and name their
// attachments. MCP clients list resources on connect and on every `list_changed`. So a model
// that ran a few hundred blocks of capped output has made every listing cost the server
// hundreds of MiB and a stopped event loop, for every session it serves.
// Here: an MCP client of `vis serve` on loopback runs 240 blocks that each print 1 MB and end
// with a 1 MB value, then lists resources while a timer measures the server's event-loop stalls
// and its heap; the listing must not stop the loop for a second. Both directions: the listing
// still names the session's transcript.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { startServer, type VisServer } from '../../src/http/server.js'
import { python, tempDir } from '../mcp/helpers.js'

const TOKEN = 'attack14b-mcp-token-0123456789abcdef'
const BLOCKS = 240

test('listing MCP resources does not read every block of the history whole', async () => {
  const home = tempDir('attack-mcp-list-home')
  const root = tempDir('attack-mcp-list-root')
  const saved = process.env.VIS_HOME
  process.env.VIS_HOME = home
  let server: VisServer | undefined
  let client: Client | undefined
  let ticker: NodeJS.Timeout | undefined
  try {
    server = await startServer({
      home,
      python,
      port: 0,
      pool: { size: 0 },
      extensions: false,
      token: TOKEN,
      mcp: { roots: [root], network: { enabled: false, allow: [], deny: [] } },
    })
    const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
    })
    client = new Client({ name: 'attack14b', version: '1.0.0' })
    await client.connect(transport, { timeout: 60_000 })
    for (let i = 0; i < BLOCKS; i++) {
      const r = (await client.callTool(
        { name: 'python_execution', arguments: { code: `print('o' * 1_000_000)\n'v' * 1_000_000` } },
        undefined,
        { timeout: 120_000 },
      )) as CallToolResult
      assert.equal(r.isError, false, JSON.stringify(r.content).slice(0, 300))
    }
    let last = performance.now()
    let worst = 0
    ticker = setInterval(() => {
      const now = performance.now()
      worst = Math.max(worst, now - last)
      last = now
    }, 10)
    const heap0 = process.memoryUsage().heapUsed
    const { resources } = await client.listResources()
    const grew = Math.round((process.memoryUsage().heapUsed - heap0) / 2 ** 20)
    clearInterval(ticker)
    assert.ok(
      resources.some((r) => r.uri.endsWith('/transcript')),
      JSON.stringify(resources).slice(0, 300),
    )
    assert.ok(
      worst < 1_000,
      `one resources/list stopped the server's event loop for ${Math.round(worst)} ms (heap +${grew} MiB) ` +
        `reading ${BLOCKS} blocks of 1 MB output and a 1 MB value whole`,
    )
  } finally {
    clearInterval(ticker)
    await client?.close()
    await server?.close()
    if (saved === undefined) delete process.env.VIS_HOME
    else process.env.VIS_HOME = saved
  }
})
