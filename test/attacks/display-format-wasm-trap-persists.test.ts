// ATTACK (surface 1, what the server serves from sandbox-chosen text): the display formatter
// (src/format/python.ts, `?format=display`, `vis sessions export`) runs ruff's WASM build in ONE
// instance shared by the whole process, and treats any exception as "this code did not parse".
// A long chain of call trailers (`x = a()()()…`, 10 000 of them, 20 KB) overflows the stack inside
// WASM: a trap, which leaves the instance's linear memory in whatever state the unwound frames left
// it (the same class of fault SECURITY.md, The structural index, retires tree-sitter's thread
// for). The formatter keeps using that instance: after a second such block the trap is "memory
// access out of bounds", and every later format, of every session's code, fails the same way
// until the server restarts. Two model-written blocks thus
// breaks the display of all sessions, and any later call runs on corrupted WASM memory.
// Here: one block of ordinary code is formatted (`x = 1`); two blocks of that shape run in
// another session and are shown; then a new ordinary block of the first session is shown. On the
// current code it comes back verbatim ("memory access out of bounds").
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { homeServer } from './fixtures/home-server.js'

test("one block's WASM trap in the display formatter does not break every later format", async () => {
  const { call, close } = await homeServer('vis-attack-fmtrap-home-')
  try {
    const victim = (await call('POST', '/v1/sessions', {})).body
    const attacker = (await call('POST', '/v1/sessions', {})).body
    const shown = async (sid: string, code: string) => {
      const b = await call('POST', `/v1/sessions/${sid}/blocks`, { code })
      assert.equal(b.status, 200, b.text.slice(0, 300))
      const v = await call('GET', `/v1/sessions/${sid}/blocks/${b.body.id}?format=display`)
      assert.equal(v.status, 200, v.text.slice(0, 300))
      return v.body.code_display as string
    }
    // Allowed: before the trap, ordinary code is formatted.
    assert.equal(await shown(victim.id, 'x  =  1'), 'x = 1\n')
    await shown(attacker.id, `x = a${'()'.repeat(10_000)}`)
    await shown(attacker.id, `x = a${'()'.repeat(10_001)}`)
    const after = await shown(victim.id, 'y  =  2')
    assert.equal(
      after,
      'y = 2\n',
      "after another session's block trapped ruff's WASM, the victim's code is no longer formatted",
    )
  } finally {
    await close()
  }
})
