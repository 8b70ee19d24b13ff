// ATTACK (surface 1, memory not in the SSE budget; the MCP front door): the thirteenth to fifteenth
// passes bounded what the server queues for event-stream readers that stop reading: 16 MiB a
// stream, 32 MiB a session and 64 MiB for all streams together (src/http/sse-budget.ts; SECURITY.md,
// Slow and hostile clients), because "a frame carries sandbox output (a block's output and value,
// up to the caps), so a count alone let one stalled stream hold ~100 MiB over 100 blocks". But
// `/mcp` answers a POST as an event stream too (Streamable HTTP: every response and notification of
// the request's JSON-RPC messages goes to it), made by the MCP SDK's transport, which enqueues each
// message into a ReadableStream whatever its consumer takes (`controller.enqueue`, no desiredSize,
// no bound) and is charged to no budget. One POST may carry a batch of up to 100 requests, so one
// connection that never reads its answer makes the server hold every block's result: a
// `tools/call` of `python_execution` answers with the block's value as text, and JSON-escaping
// makes each control character of it six bytes (`\u0001`). The same stalled reader on
// /v1/sessions/{id}/events is dropped at the bounds above.
// Here: an MCP session (initialize over HTTP) sends ONE POST with a batch of BLOCKS tools/call
// requests whose blocks each print 1M characters of U+0001 in 64 pieces and end with a 1M-character value, reads the response head
// and stops reading. Once every block has finished, what the server process holds in
// ArrayBuffers (where the encoded frames live), garbage collected, is compared with the 64 MiB the
// server's streams together may queue.
// Both directions: an MCP client that reads gets such a block's value whole.
import assert from 'node:assert/strict'
import type { Socket } from 'node:net'
import { test } from 'node:test'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { DEFAULT_MAX_QUEUED_BYTES_TOTAL } from '../../src/http/sse-budget.js'
import { client } from '../http/helpers.js'
import { mcpOverHttp, textOf } from '../mcp/helpers.js'
import { buffersHeld, collect, rawRequest, stalledRequest, tick } from './fixtures/host-memory.js'

const TOKEN = 'attack16b-mcp-stalled-token-0123456789abcdef'
const BLOCKS = 24
// 64 pieces of 16 000 characters of U+0001, each printed on its own (a pause lets the event log
// commit each as an output event of its own, and each goes out as a progress notification of up to
// 16 Ki characters, six bytes each JSON-escaped), then a value of 1M characters (the value cap is
// about 1 MiB of its JSON). About 7 MB of answer for each block, all within the output caps.
const CODE = [
  'import time',
  'for i in range(64):',
  "    print('\\x01' * 16_000, flush=True)",
  '    time.sleep(0.03)',
  "'ab' * 500_000",
].join('\n')

const headers = () => ({
  authorization: `Bearer ${TOKEN}`,
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
})

test('an MCP client that stops reading its POST answer does not make the server hold past the stream budget', async () => {
  const { server, client: reader, close } = await mcpOverHttp('mcp-stalled-post', TOKEN)
  let stalled: Socket | undefined
  try {
    const port = Number(new URL(server.url).port)
    // Allowed: a reading client gets the whole value.
    const ok = (await reader.callTool({ name: 'python_execution', arguments: { code: CODE } }, undefined, {
      timeout: 120_000,
    })) as CallToolResult
    assert.equal(ok.isError, false, textOf(ok).slice(0, 300))
    assert.ok(textOf(ok).includes('ab'.repeat(500_000)), 'the reading client got the whole value')

    // The attacker's MCP session.
    const init = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: headers(),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'stall', version: '1' },
        },
      }),
    })
    assert.equal(init.status, 200, await init.clone().text())
    await init.text()
    const sid = init.headers.get('mcp-session-id')
    assert.ok(sid, 'initialize named an MCP session')
    const more = { ...headers(), 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' }
    const note = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: more,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    })
    assert.equal(note.status, 202, await note.text())

    collect()
    const base = buffersHeld()
    const batch = JSON.stringify(
      Array.from({ length: BLOCKS }, (_, i) => ({
        jsonrpc: '2.0',
        id: i + 1,
        method: 'tools/call',
        params: {
          name: 'python_execution',
          arguments: { code: CODE, session: 'stall' },
          _meta: { progressToken: i + 1 },
        },
      })),
    )
    // A connection closed before the answer's head (the server dropped a reader already too far
    // behind) leaves the head empty: the assertions below say so.
    const sent = await stalledRequest(port, rawRequest('POST', '/mcp', port, more, batch))
    stalled = sent.sock
    const head = sent.head
    assert.match(head, /^HTTP\/1\.1 200 /, head.slice(0, 300))
    assert.match(head, /text\/event-stream/i, head.slice(0, 300))

    // Every block of the batch finishes (they run one after another in the client's session).
    const call = client(server.url, { authorization: `Bearer ${TOKEN}` })
    let done = 0
    for (let i = 0; i < 3000 && done < BLOCKS; i++) {
      await tick()
      const list = await call('GET', '/v1/sessions')
      const sessions = (list.body.sessions ?? list.body) as Array<{ id: string; title: string | null }>
      const mine = sessions.find((s) => s.title?.includes('(stall)'))
      if (!mine) continue
      const view = await call('GET', `/v1/sessions/${mine.id}?limit=1000`)
      // The view lists the newest blocks up to its byte bound; the blocks run one after another, so
      // those before it (blocks_before) have finished.
      done =
        Number(view.body.blocks_before ?? 0) +
        (view.body.blocks as Array<{ status: string }>).filter(
          (b) => b.status !== 'running' && b.status !== 'queued',
        ).length
    }
    assert.equal(done, BLOCKS, 'every block of the batch finished')
    // Let the transport enqueue the last answers.
    for (let i = 0; i < 10; i++) await tick()
    collect()
    const held = buffersHeld() - base
    const mib = Math.round(held / 2 ** 20)
    assert.ok(
      held < DEFAULT_MAX_QUEUED_BYTES_TOTAL,
      `one MCP POST (a batch of ${BLOCKS} tools/call) whose client stopped reading made the server hold ` +
        `${mib} MiB of answers, past the ${DEFAULT_MAX_QUEUED_BYTES_TOTAL / 2 ** 20} MiB all event streams ` +
        "together may queue: the MCP transport's event stream is charged to no budget",
    )
  } finally {
    stalled?.destroy()
    await close()
  }
})
