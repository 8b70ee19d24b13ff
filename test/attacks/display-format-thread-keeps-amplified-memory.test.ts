// ATTACK (surface 2, the formatter's output bound; "inputs that amplify anyway"): the fourteenth
// pass bounded what the display formatter's OUTPUT may be (src/format/python.ts formattedBound:
// 8x the input, at most 200 000 characters) and lets the formatter thread send back only the
// length of a longer one. But the bound is checked on ruff's finished output (format-thread.ts:
// `out.length > maxChars`): ruff builds ALL of it first, in its WASM linear memory and as a JS
// string in the thread. `x0 = [a, [a, … 1]]` nested 1 000 deep, repeated to ~60 KB (one block's
// code, well under the 100 000-character input bound), formats to ~70 million characters in well
// under the 2 s time bound. And a WASM instance's memory never shrinks: the thread is only
// replaced after a timeout or a trap, so after one such block is shown (the session page asks for
// every finished block `?format=display`) the server keeps hundreds of MiB in the formatter thread
// for good, and the next ordinary block is formatted by that same bloated thread.
// Here: `vis serve` on loopback (its formatter warmed by an ordinary block's display), a session
// whose block has that code; its display is asked for once, then an ordinary block's again. The
// server process's resident memory stays hundreds of MiB above what it was before.
// Both directions: the hostile block is shown as written, the ordinary one formatted.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { homeServer } from './fixtures/home-server.js'

const DEPTH = 1000
const CHARS = 60_000

function hostileCode(): string {
  let code = ''
  for (let i = 0; code.length + DEPTH * 5 < CHARS; i++)
    code += `x${i} = ${'[a, '.repeat(DEPTH)}1${']'.repeat(DEPTH)}\n`
  return code
}

test('showing one block formatted does not leave the server holding the unbounded output', async () => {
  const { call, close } = await homeServer('vis-attack-fmt-mem-home-')
  try {
    const s = await call('POST', '/v1/sessions', {})
    assert.equal(s.status, 201, s.text)
    const plain = await call('POST', `/v1/sessions/${s.body.id}/blocks`, { code: 'y  =  [1,2 ,3]' })
    assert.equal(plain.status, 200, plain.text)
    const code = hostileCode()
    const hostile = await call('POST', `/v1/sessions/${s.body.id}/blocks`, { code })
    assert.equal(hostile.status, 200, hostile.text.slice(0, 300))
    // The formatter thread is loaded and warm before the baseline is taken.
    const warm = await call('GET', `/v1/sessions/${s.body.id}/blocks/${plain.body.id}?format=display`)
    assert.equal(warm.body.code_display, 'y = [1, 2, 3]\n', warm.text)
    const base = process.memoryUsage().rss
    const shown = await call('GET', `/v1/sessions/${s.body.id}/blocks/${hostile.body.id}?format=display`)
    assert.equal(shown.status, 200, shown.text.slice(0, 300))
    // Allowed: the hostile code is shown as written (its formatted form is far past the bound).
    assert.equal(shown.body.code_display, code)
    // The next ordinary code is formatted by the same thread (it was not replaced).
    const again = await call('POST', `/v1/sessions/${s.body.id}/blocks`, { code: 'z  =  {1:2}' })
    const next = await call('GET', `/v1/sessions/${s.body.id}/blocks/${again.body.id}?format=display`)
    assert.equal(next.body.code_display, 'z = {1: 2}\n', next.text)
    const grew = Math.round((process.memoryUsage().rss - base) / 2 ** 20)
    assert.ok(
      grew < 128,
      `showing one ${code.length}-character block formatted left the server ${grew} MiB larger for good: ruff ` +
        'built the whole amplified output before the bound was checked, and the formatter thread keeps that memory',
    )
  } finally {
    await close()
  }
})
