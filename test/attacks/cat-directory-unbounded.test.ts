// Attack (seventh outsider pass; SECURITY.md in scope: the host process and its other sessions must
// carry on whatever a sandbox sends, and "exhausting the host's memory"; "Host-side work of the file
// tools": "none of their own work may grow with that text past a bound"): `cat` of a DIRECTORY
// answers every entry of it, with no page and no cap (src/tools/fs/read.ts listDirectory: readdir of
// the whole directory, a sort, one object per entry), and the answer is serialised to the guest on the
// host's event loop.
//
// Empty files cost no blocks, so the disk budget does not see them: a block makes 400 000 empty files
// with 254-character names in one directory (only the directory's own blocks, ~110 MB, count), then
// `cat('d')` makes the host build and send a ~110 MB answer, stopping its event loop for well over a
// second here; the time and the host memory grow with the number of entries (ls pages the same
// directory; cat does not), and nothing stops a block from calling it in a loop.
//
// Reproduction: a real engine session makes the files, then cats the directory; a host timer measures
// the longest gap between its ticks. It fails on the current code because the host's event loop stops
// for more than a second and the whole listing comes back (a fix: page or cap cat's directory listing
// as ls does).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { inStallSession, worstStall } from './event-loop-stall.js'

test("cat of a directory of many entries cannot stop the host's event loop", async () => {
  await inStallSession('cat-dir', async (engine, s) => {
    const w = await engine.runBlock(s.id, {
      code: [
        'import os',
        "os.makedirs('d')",
        'for i in range(400_000):',
        "    os.close(os.open(f'd/{i:08d}' + 'x' * 246, os.O_CREAT | os.O_WRONLY))",
        "print('ok')",
      ].join('\n'),
      timeout_ms: 300_000,
    })
    assert.equal(w.block.error, null, JSON.stringify(w.block.error))

    const { result: r, worst } = await worstStall(() =>
      engine.runBlock(s.id, {
        code: "r = await cat('d')\nprint(len(r['entries']))",
        timeout_ms: 300_000,
      }),
    )
    assert.equal(r.block.error, null, JSON.stringify(r.block.error))
    const n = Number((r.block.stdout ?? '').trim())
    assert.ok(
      worst < 1000 && n <= 10_000,
      `the host's event loop (every session, stream and request it serves) stood still for ${Math.round(worst)} ms ` +
        `answering one cat of a sandbox-made directory with all of its ${n} entries (no page, no cap)`,
    )
  })
})
