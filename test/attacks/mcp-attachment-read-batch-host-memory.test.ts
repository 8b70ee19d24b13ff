// ATTACK (surface 1 + 2, "memory held before bytes reach the socket"): `/mcp` answers a POST as an
// event stream whose bytes are charged to the answer budget (64 MiB server-wide, 16 MiB a stream:
// src/http/answer-budget.ts `boundedStream`; SECURITY.md: "one stalled batch POST stays under
// 64 MiB"). The bound is applied to what the MCP SDK has ALREADY built: `resources/read` of an
// attachment (src/mcp/server/resources.ts) reads the whole stored file, makes its base64 string, and
// the SDK serialises that into a JSON-RPC message and encodes it to bytes, all before
// `boundedStream` sees the first chunk and closes the connection. One POST may carry a batch of up
// to 100 requests, whose handlers all run before any answer is written: a 32 MiB attachment is
// ~32 + 43 + 43 + 43 MB per read built at once, whatever the budget says.
// Here: the MCP client's block leaves a 30 MiB file in its outbox; one POST of READS
// `resources/read` of it goes out on the client's MCP session (the answer's head is all that is
// read). The server process's peak resident memory (`maxRSS`) is compared before and after with the
// 64 MiB everything the server holds for clients may come to.
// Both directions: a single read of a small attachment still works.
import assert from 'node:assert/strict'
import { connect, type Socket } from 'node:net'
import { resourceUsage } from 'node:process'
import { test } from 'node:test'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { DEFAULT_MAX_QUEUED_BYTES_TOTAL } from '../../src/http/sse-budget.js'
import { mcpOverHttp, textOf } from '../mcp/helpers.js'

const TOKEN = 'attack17b-mcp-attachment-batch-0123456789ab'
const READS = 24

test('a batch of attachment reads does not make the server build past the answer budget', async () => {
  const { server, client: c, close } = await mcpOverHttp('mcp-attachment-batch', TOKEN)
  let sock: Socket | undefined
  try {
    const code =
      'import os\nopen(os.path.join(VIS_OUTBOX, "small.txt"), "w").write("hello")\n' +
      'open(os.path.join(VIS_OUTBOX, "big.bin"), "wb").write(os.urandom(30 * 2**20))\nNone'
    const r = (await c.callTool({ name: 'python_execution', arguments: { code } }, undefined, {
      timeout: 120_000,
    })) as CallToolResult
    assert.equal(r.isError, false, textOf(r).slice(0, 300))
    const listed = await c.listResources()
    const uris = listed.resources.map((x) => x.uri).filter((u) => u.includes('/attachments/'))
    const small = listed.resources.find((x) => x.name === 'small.txt')?.uri
    const big = listed.resources.find((x) => x.name === 'big.bin')?.uri
    assert.ok(small && big, JSON.stringify(uris))
    // Allowed: a small attachment reads.
    const one = await c.readResource({ uri: small })
    assert.equal((one.contents[0] as { text?: string }).text, 'hello')

    const port = Number(new URL(server.url).port)
    const sid = (c.transport as { sessionId?: string } | undefined)?.sessionId
    assert.ok(sid, 'the client has an MCP session id')
    const batch = JSON.stringify(
      Array.from({ length: READS }, (_, i) => ({
        jsonrpc: '2.0',
        id: 5000 + i,
        method: 'resources/read',
        params: { uri: big },
      })),
    )
    const headers = {
      host: `127.0.0.1:${port}`,
      authorization: `Bearer ${TOKEN}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': sid,
      'mcp-protocol-version': '2025-06-18',
      'content-length': String(Buffer.byteLength(batch)),
    }
    const before = resourceUsage().maxRSS * 1024
    const s = connect({ host: '127.0.0.1', port })
    sock = s
    const status = await new Promise<string>((resolve, reject) => {
      let got = ''
      s.on('error', reject)
      const onData = (d: Buffer) => {
        got += d.toString('latin1')
        if (got.includes('\r\n\r\n')) {
          s.off('data', onData)
          s.pause()
          resolve(got.split('\r\n')[0] ?? '')
        }
      }
      s.on('data', onData)
      s.on('close', () => resolve(got.split('\r\n')[0] || 'closed'))
      const lines = Object.entries(headers)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('')
      s.write(`POST /mcp HTTP/1.1\r\n${lines}\r\n${batch}`)
    })
    assert.match(status, /^(HTTP\/1\.1 200 |closed$)/, status)
    // Wait until the server has answered every read or closed the connection.
    await new Promise<void>((resolve) => {
      if (s.destroyed) resolve()
      s.on('close', () => resolve())
      s.resume()
      s.on('end', () => resolve())
    })
    const grew = resourceUsage().maxRSS * 1024 - before
    const mib = Math.round(grew / 2 ** 20)
    assert.ok(
      grew < 2 * DEFAULT_MAX_QUEUED_BYTES_TOTAL,
      `one POST of ${Buffer.byteLength(batch)} bytes (a batch of ${READS} resources/read of one 30 MiB attachment) ` +
        `raised the server's peak resident memory by ${mib} MiB: each read's file, base64 and JSON-RPC text were ` +
        `built before the answer budget (${DEFAULT_MAX_QUEUED_BYTES_TOTAL / 2 ** 20} MiB) saw a byte of them`,
    )
  } finally {
    sock?.destroy()
    await close()
  }
})
