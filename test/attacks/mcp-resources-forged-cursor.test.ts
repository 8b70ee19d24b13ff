// ATTACK (surface 3, MCP resources/list paging): SECURITY.md (MCP, "Resources are read bounded")
// promises that "a cursor the server did not give is refused as invalid params (-32602,
// mcp.invalid-cursor)". The cursor is only base64url("<session index>.<skip>")
// (src/mcp/server/resources.ts cursorOf), and parseCursor checks its SHAPE, not that the server
// gave it: any well-formed position is taken, including positions no page ever ended at
// ("0.1": the first session without its transcript, "0.2": skipping an attachment), the end
// of the list ("1.0" with one session), a skip past every attachment, and non-canonical spellings
// of a position (leading zeros, padding, characters base64url decoding ignores). Nothing binds a
// cursor to the page that made it, so a client can page from anywhere, and pages that skip or
// repeat resources are one forged string away.
// Here: the client's one session has a transcript and three attachments, which fit one page, so
// the server gave NO cursor at all. Every cursor below is therefore one it did not give; each
// must be refused with -32602. On the current code they are answered as pages.
// Both directions: the listing without a cursor still lists all four resources.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { type CallToolResult, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'
import { mcpOverHttp } from '../mcp/helpers.js'

const TOKEN = 'forged-cursor-token-0123456789abcdef0123'
const b64 = (s: string) => Buffer.from(s).toString('base64url')

test('resources/list refuses every cursor the server did not give', async () => {
  const { client: c, close } = await mcpOverHttp('mcp-forged-cursor', TOKEN)
  try {
    const r = (await c.callTool(
      {
        name: 'python_execution',
        arguments: { code: "for i in range(3):\n    vis_attach_bytes(b'x', f'a{i}.txt')\nNone" },
      },
      undefined,
      { timeout: 120_000 },
    )) as CallToolResult
    assert.equal(r.isError, false, JSON.stringify(r.content).slice(0, 300))

    // Allowed: the whole listing, one page, and so no cursor given.
    const whole = await c.listResources()
    assert.equal(whole.resources.length, 4, JSON.stringify(whole.resources.map((x) => x.uri)))
    assert.equal(whole.nextCursor, undefined, 'one page: the server gives no cursor')

    const forged = [
      b64('0.1'), // the session without its transcript
      b64('0.2'), // and without its first attachment too
      b64('1.0'), // past the client's last session
      b64('0.999999999999999'), // past every attachment
      b64('00.01'), // a non-canonical spelling of 0.1
      `${b64('0.1')}==`, // padded
      `M!C@4#x`, // "MC4x" (= 0.1) with characters the decoder skips
    ]
    const accepted: string[] = []
    for (const cursor of forged) {
      try {
        const page = await c.listResources({ cursor })
        accepted.push(
          `${JSON.stringify(cursor)} (${Buffer.from(cursor, 'base64url').toString('latin1')}) -> ` +
            `${page.resources.length} resources [${page.resources.map((x) => x.name).join(', ')}]`,
        )
      } catch (err) {
        assert.ok(
          err instanceof McpError && err.code === ErrorCode.InvalidParams && /cursor/.test(err.message),
          `cursor ${cursor}: refused, but not as invalid params: ${String(err)}`,
        )
      }
    }
    assert.deepEqual(
      accepted,
      [],
      `resources/list answered pages for cursors the server never gave (it gave none): ${accepted.join('; ')}`,
    )
  } finally {
    await close()
  }
})
