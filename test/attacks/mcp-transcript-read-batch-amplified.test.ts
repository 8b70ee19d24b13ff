// ATTACK (surface 3, the transcript resource; surface 1, memory not in any budget): the fourteenth
// pass bounded a transcript resource like the session view: "the last 50 blocks, each field cut in
// the database to 65 536 characters" (SECURITY.md, MCP, "Resources are read bounded"). The bound
// counts CHARACTERS; the answer is a JSON-RPC message, where each control character the sandbox
// wrote (in its code or its output) is six bytes (`\u0001`): one read of a transcript of 50 such
// blocks is ~39 MB. And one POST to /mcp may carry a batch of up to 100 requests, all answered into
// the request's event stream as soon as each is built (the SDK's ReadableStream, charged to no
// budget), so ONE small POST of `resources/read` of the same transcript makes the server build and
// hold 100 × 39 MB; a client that does not read keeps it all.
// Here: the client's session runs 50 blocks whose code is ~65 000 characters (a comment of U+0001)
// and which print 65 536 U+0001. One POST then asks for its transcript READS times in a batch and
// its client reads the response head only. What the server process holds afterwards (ArrayBuffers
// and V8 heap, garbage collected) is compared with the 64 MiB all event streams together may queue.
// Both directions: the reading client reads the transcript (50 blocks, the page note).
import assert from 'node:assert/strict'
import type { Socket } from 'node:net'
import { test } from 'node:test'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { DEFAULT_MAX_QUEUED_BYTES_TOTAL } from '../../src/http/sse-budget.js'
import { mcpOverHttp, textOf } from '../mcp/helpers.js'
import {
  buffersAndHeapHeld,
  collect,
  rawRequest,
  settledPeak,
  stalledRequest,
} from './fixtures/host-memory.js'

const TOKEN = 'attack16b-mcp-transcript-token-0123456789ab'
const BLOCKS = 50
const READS = 12

test('a batch of transcript reads does not make the server hold past the stream budget', async () => {
  const { server, client: c, close } = await mcpOverHttp('mcp-transcript-batch', TOKEN)
  let stalled: Socket | undefined
  try {
    for (let i = 0; i < BLOCKS; i++) {
      const head = `print('\\x01' * 65536)\n# ${i} `
      const code = `${head}${'\x01'.repeat(65_000 - head.length)}\nNone`
      const r = (await c.callTool({ name: 'python_execution', arguments: { code } }, undefined, {
        timeout: 120_000,
      })) as CallToolResult
      assert.equal(r.isError, false, textOf(r).slice(0, 200))
    }
    const listed = await c.listResources()
    const uri = listed.resources.find((x) => x.uri.endsWith('/transcript'))?.uri
    assert.ok(uri, JSON.stringify(listed.resources.map((x) => x.uri)))
    // Allowed: the transcript reads.
    const one = await c.readResource({ uri })
    const text = (one.contents[0] as { text: string }).text
    assert.ok(text.includes(`#### Block ${BLOCKS} `), text.slice(0, 300))
    const oneBytes = Buffer.byteLength(JSON.stringify(one))

    const port = Number(new URL(server.url).port)
    const headers = {
      authorization: `Bearer ${TOKEN}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    }
    // Only the MCP session that made a vis session reads its transcript: the batch goes out on the
    // reading client's MCP session (its id, from the SDK transport), on a connection of its own.
    const sid = (c.transport as { sessionId?: string } | undefined)?.sessionId
    assert.ok(sid, 'the reading client has an MCP session id')
    const batch = JSON.stringify(
      Array.from({ length: READS }, (_, i) => ({
        jsonrpc: '2.0',
        id: 1000 + i,
        method: 'resources/read',
        params: { uri },
      })),
    )
    const more = {
      ...headers,
      'mcp-session-id': sid,
      'mcp-protocol-version': '2025-06-18',
    }
    collect()
    const base = buffersAndHeapHeld()
    // The server may close the connection before it writes the answer's head: the answers it
    // queued for this reader passed the stream's bound before the first was sent (the fix).
    const sent = await stalledRequest(port, rawRequest('POST', '/mcp', port, more, batch))
    stalled = sent.sock
    const status = sent.head.split('\r\n')[0] || 'closed'
    assert.match(status, /^(HTTP\/1\.1 200 |closed$)/, status)
    const peak = await settledPeak(base, buffersAndHeapHeld)
    const mib = Math.round(peak / 2 ** 20)
    assert.ok(
      peak < DEFAULT_MAX_QUEUED_BYTES_TOTAL,
      `one POST of ${Buffer.byteLength(batch)} bytes (a batch of ${READS} resources/read of one transcript, ` +
        `${Math.round(oneBytes / 2 ** 20)} MiB each as JSON-RPC though its fields are within the 65 536-character ` +
        `bound) made the server hold ${mib} MiB, past the ${DEFAULT_MAX_QUEUED_BYTES_TOTAL / 2 ** 20} MiB all event ` +
        'streams together may queue',
    )
  } finally {
    stalled?.destroy()
    await close()
  }
})
