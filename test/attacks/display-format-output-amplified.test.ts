// ATTACK (surface 6 and 7, the formatter and the session view's bound): the session view
// (`GET /v1/sessions/{id}`) promises that "neither the read nor the answer grows with what the
// sandbox printed": every field of a listed block is cut at 65 536 characters. The display
// formatter (`?format=display`) is bounded by its INPUT (100 000 characters, 2 s a code, 1000
// remembered) but not by its OUTPUT: ruff breaks a nested literal too long for a line into one
// element per line, each indented four spaces deeper, so `x = [a, [a, ... 1]]` nested 800 deep
// (4 KB of code) formats to 3.8 MB, ~1000x, in ~0.2 s. A 16 KB block of four of them becomes a
// ~15 MB `code_display` in the bounded view (the block's `code` is under the cut, so the view
// formats it), and the formatter keeps every such result in its cache (1000 entries: ~15 GB of
// host memory from a thousand distinct blocks, or a view of 50 such blocks of ~750 MB).
// The model writes the code; it need not even run (CPython refuses the nesting: a SyntaxError).
// Here: three such blocks (distinct names, so three cache entries), then the view with
// ?format=display: each block's code_display must stay within the view's 65 536-character field
// bound (a formatted code that would pass it can be shown as written, as a too-long one is).
// Both directions: an ordinary block is still formatted.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { SESSION_VIEW_BLOCK_CHARS } from '../../src/engine/schemas.js'
import { homeServer } from './fixtures/home-server.js'

const nested = (name: string, depth: number) => `${name} = ${'[a, '.repeat(depth)}1${']'.repeat(depth)}\n`

test('the display formatter cannot blow a block past the session view field bound', async () => {
  const { call, close } = await homeServer('vis-attack-fmt-amp-home-')
  try {
    const s = (await call('POST', '/v1/sessions', {})).body
    const ordinary = await call('POST', `/v1/sessions/${s.id}/blocks`, { code: 'x=[1,2,3]\nprint( x )' })
    assert.equal(ordinary.status, 200, ordinary.text)
    for (let b = 0; b < 3; b++) {
      const code = [0, 1, 2, 3].map((i) => nested(`v${b}_${i}`, 800)).join('')
      assert.ok(code.length < SESSION_VIEW_BLOCK_CHARS)
      const r = await call('POST', `/v1/sessions/${s.id}/blocks`, { code })
      assert.equal(r.status, 200, r.text.slice(0, 300))
    }
    const heap0 = process.memoryUsage().heapUsed
    const view = await call('GET', `/v1/sessions/${s.id}?format=display`)
    assert.equal(view.status, 200, view.text.slice(0, 300))
    const blocks = view.body.blocks as { code: string; code_display?: string; truncated?: boolean }[]
    // Allowed: an ordinary block is formatted for people.
    assert.equal(blocks[0]?.code_display, 'x = [1, 2, 3]\nprint(x)\n')
    const over = blocks
      .filter((b) => (b.code_display?.length ?? 0) > SESSION_VIEW_BLOCK_CHARS)
      .map(
        (b) =>
          `${b.code.length} characters of code shown as ${b.code_display!.length} characters of code_display`,
      )
    const grew = Math.round((process.memoryUsage().heapUsed - heap0) / 2 ** 20)
    assert.deepEqual(
      over,
      [],
      `the bounded session view answered ${Math.round(view.text.length / 2 ** 20)} MiB for ${blocks.length} blocks ` +
        `(the server's heap grew ${grew} MiB; the formatter caches each result): ${over.join('; ')}`,
    )
  } finally {
    await close()
  }
})
