// ATTACK (surface 2 + 1, "what is allowed must still work"): a block may leave a file of up to
// 32 MiB in its outbox, kept as an attachment (README, "A file closed in the outbox directory ...
// may hold 32 MiB"), and an MCP client reads a session's attachments as resources
// (`vis://sessions/{id}/attachments/{aid}`, `resources/read`, src/mcp/server/resources.ts). That
// answer is the whole file, base64 in one JSON-RPC message (4/3 of its size), and `/mcp` answers a
// POST as an event stream that the sixteenth pass bounded (`boundedStream`, src/http/answer-budget.ts:
// "past an event stream's bounds (16 MiB of its own, or the budget's) the connection is closed").
// Nothing bounds the resource to fit that stream, and the client is not told anything: an
// attachment past ~12 MiB can never be read through MCP, by the reading, well-behaved client that
// made it; its connection is simply closed (the SDK sees a network error, with no error code).
// Here: the MCP client runs a block that leaves a 20 MiB file in its outbox, lists its resources and
// reads the attachment: on the current code the read fails ("fetch failed"/"terminated") instead of
// giving the 20 MiB (or refusing with a specific error code that says how to get it).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { mcpOverHttp, textOf } from '../mcp/helpers.js'

const TOKEN = 'attack17b-mcp-attachment-read-0123456789ab'
const MIB = 20

test('an MCP client reads its own 20 MiB attachment resource', async () => {
  const { client: c, close } = await mcpOverHttp('mcp-attachment-read', TOKEN)
  try {
    const code = `import os\nopen(os.path.join(VIS_OUTBOX, "data.bin"), "wb").write(b"\\x89" * (${MIB} * 2**20))\nNone`
    const r = (await c.callTool({ name: 'python_execution', arguments: { code } }, undefined, {
      timeout: 120_000,
    })) as CallToolResult
    assert.equal(r.isError, false, textOf(r).slice(0, 300))
    const listed = await c.listResources()
    const uri = listed.resources.find((x) => x.uri.includes('/attachments/'))?.uri
    assert.ok(uri, `no attachment resource: ${JSON.stringify(listed.resources.map((x) => x.uri))}`)
    let got: string | undefined
    let failure: unknown
    try {
      const read = await c.readResource({ uri }, { timeout: 120_000 })
      got = (read.contents[0] as { blob?: string }).blob
    } catch (err) {
      failure = err
    }
    assert.ok(
      failure === undefined ||
        /"mcp\.[a-z-]+"/.test(JSON.stringify((failure as { data?: unknown }).data ?? null)),
      `resources/read of the client's own ${MIB} MiB attachment failed without an error code: ` +
        `${String((failure as Error)?.message ?? failure).slice(0, 200)} (its ${Math.round((MIB * 4) / 3)} MB ` +
        "base64 answer passed the MCP event stream's 16 MiB bound and the connection was closed)",
    )
    // Either the bytes arrive whole, or the refusal names its code (checked above).
    if (failure === undefined) {
      assert.equal(got?.length, Math.ceil((MIB * 2 ** 20) / 3) * 4, 'the attachment arrives whole')
    }
  } finally {
    await close()
  }
})
