// Attack (sixth outsider pass; SECURITY.md in scope: "exhausting the host's memory"; the index
// tool's own rule "the event loop never waits on a parse"): `patch` on a .js/.ts file parses
// sandbox-written source with the TypeScript compiler ON THE HOST'S MAIN THREAD.
//
// src/tools/fs/syntax.ts scriptError() calls `ts.transpileModule(text)` synchronously in the
// process that serves every session (vis serve, vis mcp, the engine), for the file's original text
// and again for the patched text (patch.ts), both up to patch's 32 MiB read cap and written by the
// sandbox. Measured here: 2 MB of `x = [1,1,…]` takes 1.9 s and 427 MB in the host process per
// parse, so one patch of a 32 MiB file stalls every session, stream and HTTP request for about a
// minute and pushes the host's V8 heap past its limit ("JavaScript heap out of memory" ends the
// server and every session it runs). No worker thread, size bound or deadline (the index tool has
// all three: SECURITY.md, The structural index).
//
// Reproduction (kept small): a real engine session writes 2 MB to big.js and patches it from a
// block; a timer in the host process measures the longest gap between its ticks while that runs.
// It fails on the current code because the host's event loop stops for seconds.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { inStallSession, worstStall } from './event-loop-stall.js'

test("patch's syntax check of a sandbox-written .js file does not stop the host's event loop", async () => {
  await inStallSession('patch-loop', async (engine, s) => {
    // Warm up: the worker and the TypeScript module are loaded before the measurement.
    const w = await engine.runBlock(s.id, {
      code: "open('small.js', 'w').write('x = 1\\n')\nawait patch([{'path': 'small.js', 'search': 'x = 1', 'replace': 'x = 2'}])",
    })
    assert.equal(w.block.error, null, JSON.stringify(w.block.error))
    const w2 = await engine.runBlock(s.id, {
      code: "open('big.js', 'w').write('x = [' + '1,' * 1_000_000 + ']\\n')",
    })
    assert.equal(w2.block.error, null, JSON.stringify(w2.block.error))

    const { result: r, worst } = await worstStall(() =>
      engine.runBlock(s.id, {
        code: "r = await patch([{'path': 'big.js', 'search': 'x = [', 'replace': 'y = ['}])\nprint('unchecked:', r['files'][0].get('syntax_unchecked'))",
        timeout_ms: 120_000,
      }),
    )
    assert.equal(r.block.error, null, JSON.stringify(r.block.error))
    assert.ok(
      worst < 1000,
      `the host's event loop (every session, stream and request it serves) stood still for ${Math.round(worst)} ms ` +
        'while patch parsed 2 MB of sandbox-written JavaScript on it (patch reads up to 32 MiB)',
    )
    // Not silently: the result says the file was too large to check.
    assert.match(
      r.block.stdout.slice(0, 300),
      /^unchecked: the file is \d+ bytes, over the 131072-byte limit for syntax checks/,
    )
  })
})
