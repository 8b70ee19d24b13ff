// The transcript resource reads like the session view (src/mcp/server/resources.ts): the last
// blocks, each field cut in the database, earlier ones by `?before=`, so reading it costs the same
// whatever the blocks printed (fourteenth outsider pass: it read and rendered the whole history).
// Both directions: a short session's transcript is whole and says nothing of pages, and every block
// of a long one can still be read, page by page.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { SESSION_VIEW_BLOCK_CHARS, SESSION_VIEW_DEFAULT_BLOCKS } from '../../src/engine/schemas.js'
import { mcpOverHttp } from './helpers.js'

const TOKEN = 'transcript-page-token-0123456789abcdef'

test('the transcript resource is one bounded page, earlier blocks by ?before=', async () => {
  const { client: c, close } = await mcpOverHttp('mcp-transcript-page', TOKEN)
  try {
    const run = async (code: string) => {
      const r = (await c.callTool({ name: 'python_execution', arguments: { code } }, undefined, {
        timeout: 120_000,
      })) as CallToolResult
      assert.equal(r.isError, false, JSON.stringify(r.content).slice(0, 300))
    }
    const read = async (uri: string) => ((await c.readResource({ uri })).contents[0] as { text: string }).text
    const transcriptUri = async () =>
      (await c.listResources()).resources.find((r) => r.uri.endsWith('/transcript'))!.uri

    await run(`print('short block')`)
    const short = await read(await transcriptUri())
    assert.match(short, /short block/)
    assert.doesNotMatch(short, /^> Blocks /m, 'a whole, uncut session says nothing of pages')

    // Block 2 prints twice the cut; then enough small blocks to push it off the last page.
    await run(`print('y' * ${2 * SESSION_VIEW_BLOCK_CHARS})`)
    for (let i = 0; i < SESSION_VIEW_DEFAULT_BLOCKS; i++) await run(`print('small ${i}')`)
    const total = SESSION_VIEW_DEFAULT_BLOCKS + 2
    const uri = await transcriptUri()
    const lastPage = await read(uri)
    assert.match(lastPage, new RegExp(`^> Blocks 3 to ${total} of the session's ${total},`, 'm'))
    assert.match(lastPage, new RegExp(`small ${SESSION_VIEW_DEFAULT_BLOCKS - 1}`))
    assert.doesNotMatch(lastPage, /short block/, 'the first block is on the earlier page')
    const earlier = lastPage.match(/^> The 2 earlier blocks: (\S+)$/m)?.[1]
    assert.equal(earlier, `${uri}?before=3`)

    const firstPage = await read(earlier!)
    assert.match(firstPage, /short block/)
    assert.match(firstPage, /^> Cut \(.*\): blocks 2\.$/m)
    // Block 2's output is there, cut to the bound: never the whole of what it printed.
    const run2 = firstPage.match(/y+/g)?.reduce((a, b) => Math.max(a, b.length), 0) ?? 0
    assert.ok(
      run2 > 0 && run2 <= SESSION_VIEW_BLOCK_CHARS,
      `block 2's output in the page: ${run2} characters`,
    )
  } finally {
    await close()
  }
})
