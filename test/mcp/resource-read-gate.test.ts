// Every resources/read kind reserves what it builds at the one read gate of the process
// (src/mcp/server/resources.ts readResource, read-gate.ts; eighteenth outsider pass: transcript
// pages were answered ungated, `test/attacks/mcp-transcript-read-batch-peak-memory.test.ts`).
// Here, through a real `/mcp` in this process: with the gate full a transcript read waits its
// turn and is answered once room is given back; with the waiting room full it is refused,
// mcp.resource-busy; its reservation ends once its answer is handed on; the page built is the one
// weighed (a block finished while the read waited is left to the next read). And the page's weight,
// judged from SQL before the page is read, is no less than the answer it becomes.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { McpError } from '@modelcontextprotocol/sdk/types.js'
import {
  BLOCK_POSITION_MAX,
  SESSION_VIEW_BLOCK_CHARS,
  SESSION_VIEW_DEFAULT_BLOCKS,
} from '../../src/engine/schemas.js'
import { resourceReads } from '../../src/mcp/server/read-gate.js'
import { transcriptCost, transcriptPageBound } from '../../src/mcp/server/resources.js'
import { SESSION_PAGE_BYTES } from '../../src/persistence/index.js'
import { mcpOverHttp, textOf, waitFor } from './helpers.js'

const TOKEN = 'resource-read-gate-token-0123456789abcdef'

test('a transcript read reserves at the read gate: it waits, is refused past the queue, and gives back', async () => {
  const { server, client: c, close } = await mcpOverHttp('mcp-read-gate', TOKEN)
  const held: Array<() => void> = []
  try {
    // Control characters (six bytes each as JSON) and a few of every width.
    const code = `print('\\x01' * 5000 + 'é€😀' * 500)\n'\\x02' * 3000`
    const r = (await c.callTool({ name: 'python_execution', arguments: { code } }, undefined, {
      timeout: 120_000,
    })) as CallToolResult
    assert.equal(r.isError, false, textOf(r).slice(0, 200))
    const uri = (await c.listResources()).resources.find((x) => x.uri.endsWith('/transcript'))!.uri
    const sessionId = decodeURIComponent(uri.split('/')[3]!)

    // The weight judged before the read is no less than the answer's text as JSON.
    const whole = (await c.readResource({ uri })).contents[0] as { text: string }
    const { bytes: bound } = transcriptPageBound(server.engine.store, sessionId, {
      beforePosition: BLOCK_POSITION_MAX,
      limit: SESSION_VIEW_DEFAULT_BLOCKS,
      maxChars: SESSION_VIEW_BLOCK_CHARS,
      maxBytes: SESSION_PAGE_BYTES,
    })
    const asJson = Buffer.byteLength(JSON.stringify(whole.text))
    assert.ok(bound >= asJson, `weighed ${bound} bytes before reading, the answer's text is ${asJson}`)
    assert.equal(resourceReads.reserved, 0, 'the read gave back what it reserved once answered')

    // The gate full: the read waits, queued at the gate, and is answered once room is given back.
    held.push(await resourceReads.take(resourceReads.bound))
    const waiting = c.readResource({ uri })
    await waitFor('the transcript read queued at the gate', () => resourceReads.waitingBytes > 0)
    assert.equal(resourceReads.waitingBytes, transcriptCost(bound))
    // A block finished while it waits is not in the page it reserved for (built unreserved, it
    // could be any size): the next read shows it.
    const later = (await c.callTool(
      { name: 'python_execution', arguments: { code: `print('later' * 3)` } },
      undefined,
      {
        timeout: 120_000,
      },
    )) as CallToolResult
    assert.equal(later.isError, false, textOf(later).slice(0, 200))
    held.shift()!()
    const answered = (await waiting).contents[0] as { text: string }
    assert.ok(answered.text.includes('#### Block 1 '), answered.text.slice(0, 300))
    assert.ok(!answered.text.includes('laterlaterlater'), 'the block finished after the weighing is not read')
    assert.equal(resourceReads.reserved, 0)
    const next = ((await c.readResource({ uri })).contents[0] as { text: string }).text
    assert.ok(next.includes('laterlaterlater'), next.slice(0, 300))

    // The gate full and as much waiting as may: refused, retryable, without being read.
    held.push(await resourceReads.take(resourceReads.bound))
    const aborter = new AbortController()
    const queued = resourceReads.take(resourceReads.waitBound, aborter.signal)
    queued.catch(() => undefined)
    await assert.rejects(
      c.readResource({ uri }),
      (err: unknown) =>
        err instanceof McpError && (err.data as { code?: string } | undefined)?.code === 'mcp.resource-busy',
    )
    aborter.abort()
    await assert.rejects(queued)
    held.shift()!()
    // And the room back, it reads again.
    assert.equal(((await c.readResource({ uri })).contents[0] as { text: string }).text, next)
  } finally {
    for (const release of held) release()
    await close()
  }
})
