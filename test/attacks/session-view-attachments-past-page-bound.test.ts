// ATTACK (surface 3, "byte-bounded pages": what `jsonBytes` does not count): the session view
// (GET /v1/sessions/{id}) lists blocks newest first "while their fields' JSON (`jsonBytes`,
// `SESSION_PAGE_BYTES`) stays within 4 MiB" (SECURITY.md, session view; src/persistence/blocks.ts
// listSummaries). The measure counts a block's code, stdout, result, value and error, and 1 KB for
// the rest, but each block in the view also carries ITS ATTACHMENTS (src/engine/session-lifecycle.ts
// sessionPage: `listByBlockPositions`, added after the page was measured), and a block may keep
// 1000 of them, each with a name the sandbox chose (`vis_attach_bytes(data, name)`), in JSON six
// bytes per control character. None of that is counted, so the page passes its bound by as much as
// the sandbox likes.
// Here: BLOCKS blocks each attach 1000 one-byte files named with 400 U+0001 characters; the view
// (default limit) is asked for and its size compared with the 4 MiB bound (plus the slack the
// one-always-listed block would justify: one block's share). On the current code it answers
// ~25 MB in one go.
// Both directions: paging with `blocks_before`/`?before=` still reaches every block.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { SESSION_PAGE_BYTES } from '../../src/persistence/json-bytes.js'
import { homeServer } from './fixtures/home-server.js'

const BLOCKS = 10
const PER_BLOCK = 1000

test("the session view's byte bound counts the blocks' attachments", async () => {
  const { call, close } = await homeServer('vis-attack17b-view-attachments-home-')
  try {
    const s = (await call('POST', '/v1/sessions', {})).body
    const ids: string[] = []
    for (let i = 0; i < BLOCKS; i++) {
      const r = await call('POST', `/v1/sessions/${s.id}/blocks`, {
        code: `for i in range(${PER_BLOCK}):\n    vis_attach_bytes(b"x", "\\x01" * 400 + f"-${i}-{i}")\nNone`,
      })
      assert.equal(r.status, 200, r.text.slice(0, 300))
      assert.equal(r.body.attachments?.length, PER_BLOCK, JSON.stringify(r.body).slice(0, 400))
      ids.push(r.body.id)
    }
    const view = await call('GET', `/v1/sessions/${s.id}`)
    assert.equal(view.status, 200, view.text.slice(0, 300))
    const bytes = Buffer.byteLength(view.text)
    const listed = view.body.blocks.length
    // Both directions: every block is reachable by paging.
    const seen = new Set<string>(view.body.blocks.map((b: { id: string }) => b.id))
    let page = view.body
    while (page.blocks_before > 0) {
      const oldest = Math.min(...page.blocks.map((b: { position: number }) => b.position))
      const next = await call('GET', `/v1/sessions/${s.id}?before=${oldest}`)
      assert.equal(next.status, 200, next.text.slice(0, 300))
      for (const b of next.body.blocks) seen.add(b.id)
      page = next.body
    }
    assert.deepEqual([...seen].sort(), [...ids].sort(), 'paging reaches every block once')
    const oneBlock = bytes / Math.max(1, listed)
    assert.ok(
      bytes <= SESSION_PAGE_BYTES + oneBlock || listed <= 1,
      `the session view answered ${(bytes / 2 ** 20).toFixed(1)} MiB listing ${listed} blocks, past its ` +
        `${SESSION_PAGE_BYTES / 2 ** 20} MiB bound: each block's ${PER_BLOCK} attachments (names of control ` +
        'characters the sandbox chose) are not counted by the page measure',
    )
  } finally {
    await close()
  }
})
