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
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { mcpOverHttp } from '../mcp/helpers.js'

const TOKEN = 'attack14b-mcp-token-0123456789abcdef'
const BLOCKS = 240

test('listing MCP resources does not read every block of the history whole', async () => {
  const { client, close } = await mcpOverHttp('attack-mcp-list', TOKEN)
  let ticker: NodeJS.Timeout | undefined
  try {
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
    await close()
  }
})
