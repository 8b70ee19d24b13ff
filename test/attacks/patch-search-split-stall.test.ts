// Attack (seventh outsider pass; SECURITY.md in scope: the host process and its other sessions must
// carry on whatever a sandbox sends; the sixth pass's fix for patch's search, `tool.search-too-costly`):
// the whitespace-tolerant search is now bounded in LINE COMPARISONS (4M), but the work before the
// first comparison is not bounded at all, and it all runs synchronously on the host's event loop.
//
// src/tools/fs/patch.ts searchRange(), when the search text is not in the file as written, splits the
// whole file into lines and normalises every one of them (`lines.map(normWs)`: trim + a regex
// replace), whatever the budget; only then does the comparison loop start counting. A .py-free,
// plain text file may be up to patch's 32 MiB read cap; 32 MB of 'x y\n' is 8M lines: splitting and
// normalising them costs the host seconds of a stopped event loop (here ~7 s under load) before the
// call is refused with `tool.search-too-costly`. Each edit of a patch list repeats the split and the
// normalisation (nothing yields between edits of one call: `await load()` of an already-loaded file is
// a microtask), so N edits of the same file multiply the stall. The file costs 32 MiB of the 1 GiB
// disk budget and is reused by every call.
//
// Reproduction: a real engine session writes 32 MB of 'x y\n' to big.txt and patches it with a
// search that is not in it; a host timer measures the longest gap between its ticks. It fails on the
// current code because the host's event loop stops for seconds (a fix: bound the file size or the
// line count the tolerant search will normalise, yield while normalising, or move it off the loop).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { inStallSession, worstStall } from './event-loop-stall.js'

test("patch's whitespace-tolerant search cannot stop the host's event loop before its budget counts", async () => {
  await inStallSession('patch-split', async (engine, s) => {
    const w = await engine.runBlock(s.id, {
      code: "open('big.txt', 'w').write('x y\\n' * 8_000_000)\nprint('ok')",
    })
    assert.equal(w.block.error, null, JSON.stringify(w.block.error))

    const { result: r, worst } = await worstStall(() =>
      engine.runBlock(s.id, {
        code: [
          'try:',
          "    await patch([{'path': 'big.txt', 'search': 'x  y\\nnot here', 'replace': 'z'}])",
          'except Exception as e:',
          "    print(getattr(e, 'code', type(e).__name__))",
        ].join('\n'),
        timeout_ms: 300_000,
      }),
    )
    assert.equal(r.block.error, null, JSON.stringify(r.block.error))
    assert.match(r.block.stdout ?? '', /tool\.(search-too-costly|no-match)/)
    assert.ok(
      worst < 1000,
      `the host's event loop (every session, stream and request it serves) stood still for ${Math.round(worst)} ms ` +
        'splitting and normalising a sandbox-written 32 MB file for one patch search (before any comparison is counted)',
    )
  })
})
