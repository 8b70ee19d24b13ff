// Attachment resources are judged by their stored size before they are read, and reads reserve
// what they build at one server-wide gate (src/mcp/server/resources.ts, read-gate.ts; seventeenth
// outsider pass). Both directions: what one answer carries reads whole; past it the refusal is
// catalogued and names the HTTP URL that does serve the attachment whole.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { McpError } from '@modelcontextprotocol/sdk/types.js'
import { ReadGate } from '../../src/mcp/server/read-gate.js'
import { RESOURCE_ANSWER_BYTES } from '../../src/mcp/server/resources.js'
import { VisError } from '../../src/util/errors.js'
import { mcpOverHttp, textOf } from './helpers.js'

const TOKEN = 'fx17b-attachment-resource-bounded-0123456789'
const MiB = 2 ** 20

test('attachment resources: a few MiB read whole, past one answer refused with the URL that serves it', async () => {
  const { server, client: c, close } = await mcpOverHttp('attachment-bounded', TOKEN)
  try {
    // small.bin: 3 MiB of bytes; ctl.txt: 3 MiB of control characters (18 MiB as JSON text, so it
    // comes as base64); big.bin: 20 MiB, 27 MB as base64, past the 16 MiB answer.
    const code =
      'import os\n' +
      'open(os.path.join(VIS_OUTBOX, "small.bin"), "wb").write(bytes(range(256)) * (3 * 4096))\n' +
      'open(os.path.join(VIS_OUTBOX, "ctl.txt"), "wb").write(b"\\x01" * (3 * 2**20))\n' +
      'open(os.path.join(VIS_OUTBOX, "big.bin"), "wb").write(b"\\x89" * (20 * 2**20))\nNone'
    const r = (await c.callTool({ name: 'python_execution', arguments: { code } }, undefined, {
      timeout: 120_000,
    })) as CallToolResult
    assert.equal(r.isError, false, textOf(r).slice(0, 300))
    const listed = await c.listResources()
    const uriOf = (name: string) => {
      const uri = listed.resources.find((x) => x.name === name)?.uri
      assert.ok(uri, `${name} listed: ${JSON.stringify(listed.resources.map((x) => x.name))}`)
      return uri
    }

    const small = await c.readResource({ uri: uriOf('small.bin') }, { timeout: 60_000 })
    const smallBlob = (small.contents[0] as { blob?: string }).blob
    assert.ok(smallBlob, 'small.bin comes as a blob')
    const row = Buffer.from(Array.from({ length: 256 }, (_, i) => i))
    const want = Buffer.concat(Array.from({ length: 3 * 4096 }, () => row))
    assert.ok(Buffer.from(smallBlob, 'base64').equals(want), 'small.bin whole')

    const ctl = await c.readResource({ uri: uriOf('ctl.txt') }, { timeout: 60_000 })
    const ctlContent = ctl.contents[0] as { text?: string; blob?: string; mimeType?: string }
    assert.equal(ctlContent.text, undefined, 'text past the answer as JSON is not sent as text')
    assert.ok(ctlContent.blob, 'it comes as base64 instead')
    const ctlBytes = Buffer.from(ctlContent.blob, 'base64')
    assert.equal(ctlBytes.byteLength, 3 * MiB)
    assert.ok(
      ctlBytes.every((b) => b === 1),
      'ctl.txt whole',
    )

    let refused: unknown
    try {
      await c.readResource({ uri: uriOf('big.bin') }, { timeout: 60_000 })
    } catch (err) {
      refused = err
    }
    assert.ok(refused instanceof McpError, `big.bin refused: ${String(refused)}`)
    const data = refused.data as { code?: string; size?: number; maxAnswerBytes?: number; url?: string }
    assert.equal(data.code, 'mcp.resource-too-large')
    assert.equal(data.size, 20 * MiB)
    assert.equal(data.maxAnswerBytes, RESOURCE_ANSWER_BYTES)
    assert.match(refused.message, new RegExp(`GET ${data.url?.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`))
    // The URL it names serves the attachment whole.
    const got = await fetch(`${server.url}${data.url}`, { headers: { authorization: `Bearer ${TOKEN}` } })
    assert.equal(got.status, 200)
    const body = Buffer.from(await got.arrayBuffer())
    assert.equal(body.byteLength, 20 * MiB)
    assert.ok(body.every((b) => b === 0x89))

    // The connection is still good after the refusal.
    assert.ok((await c.listResources()).resources.length >= 4)
  } finally {
    await close()
  }
})

test('the read gate: reads past what it holds wait their turn, past what may wait are refused', async () => {
  const gate = new ReadGate(100, 150)
  const a = await gate.take(60)
  // Alone, a read bigger than the bound still runs (the largest answer must be readable).
  const b = gate.take(70)
  let bGot: (() => void) | undefined
  void b.then((r) => {
    bGot = r
  })
  const c = gate.take(50)
  // 70 + 50 wait; 40 more would pass the 150 that may wait.
  await assert.rejects(
    gate.take(40),
    (err: unknown) => err instanceof VisError && err.code === 'mcp.resource-busy',
  )
  const aborter = new AbortController()
  const d = gate.take(20, aborter.signal)
  aborter.abort()
  await assert.rejects(d, (err: unknown) => err instanceof VisError && err.code === 'mcp.resource-busy')
  assert.equal(gate.reserved, 60)
  assert.equal(bGot, undefined, 'b waits while a holds 60 of 100')
  a()
  a() // given back once
  const releaseB = await b
  assert.equal(gate.reserved, 70, 'b runs; c (50) waits: 120 would pass 100')
  releaseB()
  const releaseC = await c
  assert.equal(gate.reserved, 50)
  releaseC()
  assert.equal(gate.reserved, 0)
  const big = await gate.take(500)
  assert.equal(gate.reserved, 500, 'a read past the bound runs alone')
  big()
})
