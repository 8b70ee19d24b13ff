// resources/list answers a page at a time (src/mcp/server/resources.ts RESOURCES_PAGE) with a
// `nextCursor` to the rest: a client's sessions and their attachments have no count bound of their
// own, and one answer listing them all grew with every attachment ever made. Both directions:
// following the cursors yields every resource exactly once, across sessions; a cursor the server
// did not give is refused as invalid params.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { type CallToolResult, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'
import { RESOURCES_PAGE } from '../../src/mcp/server/resources.js'
import { mcpOverHttp } from './helpers.js'

const TOKEN = 'resources-page-token-0123456789abcdef'
const MANY = RESOURCES_PAGE + 20

test('resources/list pages by cursor; every resource is listed once; a forged cursor is refused', async () => {
  const { client: c, close } = await mcpOverHttp('mcp-resources-page', TOKEN)
  try {
    const run = async (code: string, session?: string) => {
      const r = (await c.callTool(
        { name: 'python_execution', arguments: session ? { code, session } : { code } },
        undefined,
        { timeout: 120_000 },
      )) as CallToolResult
      assert.equal(r.isError, false, JSON.stringify(r.content).slice(0, 300))
    }
    await run(`for i in range(${MANY}):\n    vis_attach_bytes(b'x', f'a{i}.txt')\nNone`)
    await run(`vis_attach_bytes(b'y', 'b0.txt')\nvis_attach_bytes(b'y', 'b1.txt')\nNone`, 'second')

    const first = await c.listResources()
    assert.equal(first.resources.length, RESOURCES_PAGE, 'the first answer is one page')
    assert.ok(first.nextCursor, 'a page with more after it names where the rest starts')
    const rest = await c.listResources({ cursor: first.nextCursor })
    assert.equal(rest.nextCursor, undefined, 'the last page names no next one')
    const all = [...first.resources, ...rest.resources]
    assert.equal(all.length, 2 + MANY + 2, 'two transcripts and every attachment')
    assert.equal(new Set(all.map((r) => r.uri)).size, all.length, 'no resource twice')
    const names = new Set(all.map((r) => r.name))
    for (let i = 0; i < MANY; i++) assert.ok(names.has(`a${i}.txt`), `a${i}.txt listed`)
    assert.ok(names.has('b0.txt') && names.has('b1.txt'), "the second session's attachments")
    assert.equal(all.filter((r) => r.uri.endsWith('/transcript')).length, 2)

    for (const forged of ['bm90LWEtY3Vyc29y', Buffer.from('99.0').toString('base64url'), 'x'.repeat(5000)]) {
      await assert.rejects(
        c.listResources({ cursor: forged }),
        (err: unknown) =>
          err instanceof McpError && err.code === ErrorCode.InvalidParams && /cursor/.test(err.message),
        `cursor ${forged.slice(0, 20)} refused`,
      )
    }
  } finally {
    await close()
  }
})
