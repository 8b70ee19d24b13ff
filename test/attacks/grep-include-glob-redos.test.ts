// Attack (sixth outsider pass; SECURITY.md in scope: the host process and its other sessions must
// carry on whatever a sandbox sends): grep's `include` glob becomes a backtracking regex that runs on
// the host's main thread.
//
// src/tools/fs/glob.ts globToRegExp() turns each `**` into `.*` (and `*` into `[^/]*`), and
// grep.ts filters every hit's path with it on the host (`include(await guard.display(abs))`),
// whatever engine found the hit (ripgrep in its jail, or the builtin one). Both the glob and the
// file names are the sandbox's: `include='**a**a**a**a**a**a**a**b'` is `^.*a.*a.*a.*a.*a.*a.*a.*b$`,
// and against a file named fifty `a`s (no `b`) V8's backtracking tries every way to place the seven
// `a`s: about 6 s on this machine, with the whole host process stopped (every session, stream,
// HTTP request). Each extra `**a` multiplies it (the time grows like n^k): twelve of them against a
// 200-character name does not finish in any lifetime, so one `grep` call from a block freezes
// `vis serve` for good. The tool has no deadline of its own the host could enforce: the loop that
// would run the timer is the one that is stuck.
//
// Reproduction (kept to a few seconds): a real engine session writes a file named 'a' * 50
// holding 'needle' and greps for it with that include; a host timer measures the longest gap
// between its ticks. It fails on the current code because the host's event loop stops for seconds.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { inStallSession, worstStall } from './event-loop-stall.js'

test("grep's include glob cannot stop the host's event loop", async () => {
  await inStallSession('glob', async (engine, s) => {
    const w = await engine.runBlock(s.id, {
      code: "open('a' * 50, 'w').write('needle\\n')\nprint(len((await grep('needle'))['hits']))",
    })
    assert.equal(w.block.error, null, JSON.stringify(w.block.error))

    const { result: r, worst } = await worstStall(() =>
      engine.runBlock(s.id, {
        code: "r = await grep('needle', include='**a' * 7 + '**b')\nprint(r.get('hits'))",
        timeout_ms: 120_000,
      }),
    )
    assert.equal(r.block.error, null, JSON.stringify(r.block.error))
    assert.equal(r.block.stdout, '[]\n', 'no file name ends in b')
    // The same shape of glob still matches what it should.
    const ok = await engine.runBlock(s.id, {
      code: "print(len((await grep('needle', include='**a' * 7 + '**'))['hits']))",
    })
    assert.equal(ok.block.stdout, '1\n')
    assert.ok(
      worst < 1000,
      `the host's event loop (every session, stream and request it serves) stood still for ${Math.round(worst)} ms ` +
        "matching a sandbox-chosen include glob against a sandbox-chosen file name (each extra '**a' multiplies it)",
    )
  })
})
