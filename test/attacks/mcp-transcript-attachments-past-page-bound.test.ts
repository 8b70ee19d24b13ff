// ATTACK (surface 3 + 2, the transcript resource's page): a transcript resource "also stops at the
// session view's byte bound (the same SESSION_PAGE_BYTES and jsonBytes, in listSummaries: 4 MiB of
// the blocks' fields as JSON)" (SECURITY.md, MCP, "Resources are read bounded"). The Markdown lists
// each block's attachments by name (src/persistence/markdown.ts renderBlock), up to 1000 a block,
// names the sandbox chose, and the measure never counts them (src/persistence/transcript.ts
// exportTranscriptPage reads them after the page is measured). In JSON-RPC a control character of
// a name is six bytes.
// Here: the MCP client's session runs BLOCKS blocks that each attach 1000 one-byte files named with
// 400 U+0001; one `resources/read` of its transcript is measured as the JSON-RPC result it is.
// On the current code it is ~27 MB, all its blocks on one page, so it passes the MCP event stream's
// 16 MiB and the client that made the session cannot read its transcript at all.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { SESSION_PAGE_BYTES } from '../../src/persistence/json-bytes.js'
import { mcpOverHttp, textOf } from '../mcp/helpers.js'

const TOKEN = 'attack17b-mcp-transcript-attachments-0123456789'
const BLOCKS = 10

test("a transcript page's byte bound counts the blocks' attachment names", async () => {
  const { client: c, close } = await mcpOverHttp('mcp-transcript-attachments', TOKEN)
  try {
    for (let i = 0; i < BLOCKS; i++) {
      const code = `for i in range(1000):\n    vis_attach_bytes(b"x", "\\x01" * 400 + f"-${i}-{i}")\nNone`
      const r = (await c.callTool({ name: 'python_execution', arguments: { code } }, undefined, {
        timeout: 120_000,
      })) as CallToolResult
      assert.equal(r.isError, false, textOf(r).slice(0, 200))
    }
    let cursor: string | undefined
    let uri: string | undefined
    do {
      const listed = await c.listResources(cursor ? { cursor } : undefined)
      uri ??= listed.resources.find((x) => x.uri.endsWith('/transcript'))?.uri
      cursor = listed.nextCursor
    } while (cursor && !uri)
    assert.ok(uri, 'the transcript resource is listed')
    let read: Awaited<ReturnType<typeof c.readResource>>
    try {
      read = await c.readResource({ uri }, { timeout: 120_000 })
    } catch (err) {
      assert.fail(
        `the client could not read its own transcript (${(err as Error).message}): its one page, with the ` +
          `attachment names of ${BLOCKS} blocks uncounted by the ${SESSION_PAGE_BYTES / 2 ** 20} MiB page bound, ` +
          "passed the MCP event stream's 16 MiB and the connection was closed",
      )
    }
    const text = (read.contents[0] as { text: string }).text
    const blocks = (text.match(/^#### Block /gm) ?? []).length
    const bytes = Buffer.byteLength(JSON.stringify(read))
    assert.ok(
      bytes <= SESSION_PAGE_BYTES + bytes / Math.max(1, blocks) || blocks <= 1,
      `one resources/read of the transcript was ${(bytes / 2 ** 20).toFixed(1)} MiB of JSON-RPC listing ${blocks} ` +
        `blocks, past the ${SESSION_PAGE_BYTES / 2 ** 20} MiB page bound: the blocks' attachment names are not counted`,
    )
  } finally {
    await close()
  }
})
