// ATTACK (surface 4, the formatter thread: "making the thread restart forever ... starving another
// session"): a session view's codes are ONE call to the formatter thread, one turn in the round
// robin and "one 2 s bound" for the batch (SECURITY.md, display formatter; src/format/format-pool.ts
// formatBatch). But the bound counts only the time a code spends FORMATTING (from the thread's
// `started` message), and a code whose formatted output passes its bound ENDS the thread (`tooLarge`:
// ruff's WASM memory never shrinks), so the next code of the same batch waits for a fresh thread
// to start and load ruff, which the batch's bound does not count. A view of K distinct small blocks
// that each amplify (600 characters of `x = [a, [a, ...]]`, formatted past 8x in a few ms: tooLarge) is K
// thread restarts in ONE turn, and every other session's display waits behind all of them: past
// the 15 s queue bound it is answered unformatted (`busy`).
// Here: session A has K such blocks (each distinct: the cache remembers by content, so each costs
// once, and new blocks cost again). Session B's display works on its own (allowed direction); then
// A's page asks for its view with `?format=display&limit=K` and B's page for B's view just after:
// B's new ordinary block must come back formatted. On the current code it comes back as written:
// A's one view (150 blocks, within the 4 MiB page) held the thread ~31 s, each code ~5 ms of
// formatting and ~200 ms of a fresh thread.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { homeServer } from './fixtures/home-server.js'

const K = 150
const nested = (name: string, depth: number) => `${name} = ${'[a, '.repeat(depth)}1${']'.repeat(depth)}\n`

test("one session's view of amplifying blocks does not hold the formatter past another session's wait", async () => {
  const { call, close } = await homeServer('vis-attack17b-fmt-restart-home-')
  try {
    const a = (await call('POST', '/v1/sessions', {})).body
    const b = (await call('POST', '/v1/sessions', {})).body
    const first = await call('POST', `/v1/sessions/${b.id}/blocks`, { code: 'x=[1,2,3]\nprint( x )' })
    assert.equal(first.status, 200, first.text.slice(0, 300))
    // Allowed: B's view formats B's code.
    const alone = await call('GET', `/v1/sessions/${b.id}?format=display`)
    assert.equal(alone.status, 200, alone.text.slice(0, 300))
    assert.equal(
      alone.body.blocks[0].code_display,
      'x = [1, 2, 3]\nprint(x)\n',
      JSON.stringify(alone.body.blocks[0]),
    )

    for (let i = 0; i < K; i++) {
      const r = await call('POST', `/v1/sessions/${a.id}/blocks`, { code: nested(`v${i}`, 120) })
      assert.equal(r.status, 200, r.text.slice(0, 300))
    }
    const second = await call('POST', `/v1/sessions/${b.id}/blocks`, { code: 'y={"a":1}\nprint( y )' })
    assert.equal(second.status, 200, second.text.slice(0, 300))

    const aView = call('GET', `/v1/sessions/${a.id}?format=display&limit=${K}`)
    // B's page asks once A's request is on its way (the server reads requests in order).
    const bView = await call('GET', `/v1/sessions/${b.id}?format=display`)
    const aDone = await aView
    assert.equal(aDone.status, 200, aDone.text.slice(0, 300))
    assert.equal(bView.status, 200, bView.text.slice(0, 300))
    const shown = bView.body.blocks.find((x: { id: string }) => x.id === second.body.id)
    assert.ok(shown, JSON.stringify(bView.body).slice(0, 300))
    assert.equal(
      shown.code_display,
      'y = {"a": 1}\nprint(y)\n',
      `session B's ordinary block came back unformatted (${JSON.stringify(shown.code_display)}): it waited behind ` +
        `ONE turn of session A, a view of ${K} blocks that each ended the formatter thread (output past its bound), ` +
        "each restart uncounted by the batch's 2 s bound, until B's call passed the 15 s queue wait",
    )
  } finally {
    await close()
  }
})
