// ATTACK (surface 1/5, the session page; a request that starves the server): `GET
// /v1/sessions/{id}?format=display` (what the session page loads for the session it shows, and
// `GET …/blocks/{id}?format=display` for each finished block) formats every block's code with
// ruff's WASM build, synchronously, on the event loop that serves every session and client
// (src/format/python.ts). Its only bound is the code's length (100 000 characters). Block code
// is the model's (hostile, like all guest code) or a client's, and ruff's parser is far from
// linear on some shapes: `x = a()()()…` with 30 000 call trailers (60 KB) takes seconds to fail
// with "Maximum call stack size exceeded" (16 s here; 45 000 of them: ~30 s). Each distinct block costs
// it again (the cache is by content), so a model that wrote a few such blocks freezes the whole
// server (every session's blocks, turns, event streams, /v1/health) whenever a person opens that
// session in the page.
// Here: a block with that code runs (it fails in the guest, as it would for the model); then the
// page's request for the session is sent while a timer measures the server process's event-loop
// stalls. On the current code the loop stops for seconds.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { homeServer } from './fixtures/home-server.js'

test("formatting a block's code for display never stalls the server's event loop", async () => {
  const { call, close } = await homeServer('vis-attack-fmt-home-')
  let ticker: NodeJS.Timeout | undefined
  try {
    const s = (await call('POST', '/v1/sessions', {})).body
    // Allowed: ordinary code is formatted for display.
    const plain = await call('POST', `/v1/sessions/${s.id}/blocks`, { code: 'x  =  1' })
    assert.equal(plain.status, 200, plain.text)
    const code = `x = a${'()'.repeat(30_000)}`
    const hostile = await call('POST', `/v1/sessions/${s.id}/blocks`, { code })
    assert.equal(hostile.status, 200, hostile.text.slice(0, 300))
    let last = performance.now()
    let worst = 0
    ticker = setInterval(() => {
      const now = performance.now()
      worst = Math.max(worst, now - last)
      last = now
    }, 20)
    const page = await call('GET', `/v1/sessions/${s.id}?format=display`)
    clearInterval(ticker)
    assert.equal(page.status, 200, page.text.slice(0, 300))
    assert.ok(
      worst < 2_000,
      `the server's event loop stopped for ${Math.round(worst)} ms while it formatted one block for display`,
    )
    assert.equal(page.body.blocks[0].code_display, 'x = 1\n')
  } finally {
    clearInterval(ticker)
    await close()
  }
})
