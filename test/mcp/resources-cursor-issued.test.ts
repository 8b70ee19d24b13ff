// A resources/list cursor is good only where it was given (src/mcp/server/resources.ts: an HMAC of
// the position and the MCP session): the cursor one MCP client was given is refused for another,
// and so is the same cursor with a character of its tag changed; in the client it was given to it
// pages on, as often as it is sent, and the pages together list every resource once.
// (test/attacks/mcp-resources-forged-cursor.test.ts: positions written by a client.)
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'
import { RESOURCES_PAGE } from '../../src/mcp/server/resources.js'
import { mcpOverHttp, run, textOf } from './helpers.js'

const TOKEN = 'cursor-issued-token-0123456789abcdef0123'

const invalidCursor = (err: unknown) =>
  err instanceof McpError && err.code === ErrorCode.InvalidParams && /cursor/.test(err.message)

test('a cursor pages on only in the MCP session it was given to, only as it was given', async () => {
  const { server, client: a, close } = await mcpOverHttp('mcp-cursor-issued', TOKEN)
  const b = new Client({ name: 'other', version: '1' })
  try {
    const made = await run(
      a,
      `for i in range(${RESOURCES_PAGE}):\n    vis_attach_bytes(b'x', f'a{i}.txt')\nNone`,
    )
    assert.equal(made.isError, false, textOf(made).slice(0, 300))
    await b.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
      }),
    )
    const own = await run(b, `vis_attach_bytes(b'y', 'b.txt')\nNone`)
    assert.equal(own.isError, false, textOf(own))

    const first = await a.listResources()
    const cursor = first.nextCursor
    assert.ok(cursor, 'a transcript and a page of attachments do not fit one page')
    // Allowed: the client it was given to pages on, the same page each time it sends it.
    const rest = await a.listResources({ cursor })
    const again = await a.listResources({ cursor })
    assert.deepEqual(again, rest)
    const all = [...first.resources, ...rest.resources].map((r) => r.uri)
    assert.equal(all.length, 1 + RESOURCES_PAGE, 'the transcript and every attachment')
    assert.equal(new Set(all).size, all.length, 'none twice')
    assert.equal(rest.nextCursor, undefined)

    // Refused: the same cursor in another MCP session (which has a session and resources too).
    await assert.rejects(b.listResources({ cursor }), invalidCursor, 'another MCP session')
    const last = cursor.at(-1) === 'A' ? 'B' : 'A'
    await assert.rejects(
      a.listResources({ cursor: cursor.slice(0, -1) + last }),
      invalidCursor,
      'a changed tag',
    )
    const [session, skip, tag] = cursor.split('.')
    await assert.rejects(
      a.listResources({ cursor: `${session}.${Number(skip) - 1}.${tag}` }),
      invalidCursor,
      'another position under the tag',
    )
    // Allowed: B's own listing is untouched.
    assert.equal((await b.listResources()).resources.length, 2)
  } finally {
    await b.close().catch(() => undefined)
    await close()
  }
})
