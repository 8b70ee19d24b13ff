// ATTACK (surface 2, "other resource kinds not gated"): the seventeenth pass put attachment reads
// behind a server-wide read gate (src/mcp/server/read-gate.ts: each read reserves what it will
// build, 96 MiB at once) because a batch of reads built every answer before the answer budget saw a
// byte (24 reads of a 30 MiB attachment: +2 GB peak). A transcript read (`vis://sessions/{id}/
// transcript`) is not gated (resources.ts returns it with `noRelease`): its page is bounded to
// ~4 MiB of JSON, but a batch may hold 100 of them, each built (Markdown, the SDK's JSON-RPC text,
// its bytes) with nothing reserving room.
// Here: the client's session runs 50 blocks whose code and output are U+0001 (six bytes each as
// JSON), then ONE POST asks for its transcript 100 times in a batch and reads only the head. The
// server process's peak resident memory must not grow past twice the 64 MiB everything the server
// holds for clients may come to (the attachment batch's own test's bound).
// Both directions: the transcript reads alone.
import assert from 'node:assert/strict'
import type { Socket } from 'node:net'
import { resourceUsage } from 'node:process'
import { test } from 'node:test'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { DEFAULT_MAX_QUEUED_BYTES_TOTAL } from '../../src/http/sse-budget.js'
import { mcpOverHttp, textOf } from '../mcp/helpers.js'
import { rawRequest, stalledRequest } from './fixtures/host-memory.js'

const TOKEN = 'attack18b-mcp-transcript-peak-0123456789ab'
const BLOCKS = 50
const READS = 100

test("a batch of transcript reads does not raise the server's peak memory past the budget (the read gate covers transcripts)", async () => {
  const { server, client: c, close } = await mcpOverHttp('attack18b-transcript-peak', TOKEN)
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
    const before = resourceUsage().maxRSS * 1024
    const sent = await stalledRequest(port, rawRequest('POST', '/mcp', port, more, batch))
    stalled = sent.sock
    const status = sent.head.split('\r\n')[0] || 'closed'
    assert.match(status, /^(HTTP\/1\.1 200 |closed$)/, status)
    // Every read answered or dropped: the server has read the whole batch once a fresh read answers.
    await c.readResource({ uri })
    const grew = resourceUsage().maxRSS * 1024 - before
    const mib = Math.round(grew / 2 ** 20)
    assert.ok(
      grew < 2 * DEFAULT_MAX_QUEUED_BYTES_TOTAL,
      `one POST of ${Buffer.byteLength(batch)} bytes (a batch of ${READS} resources/read of one transcript, ` +
        `${Math.round(oneBytes / 2 ** 20)} MiB each as JSON-RPC) raised the server's peak resident memory by ${mib} MiB: ` +
        'the read gate reserves only attachment reads; a transcript page is built, serialised and encoded for every ' +
        'read of the batch before the answer budget sees it',
    )
  } finally {
    stalled?.destroy()
    await close()
  }
})
