// Attack (sixth outsider pass; the host process and its other sessions must carry on whatever a
// sandbox sends): `patch`'s whitespace-tolerant search is quadratic and runs on the host's main
// thread.
//
// src/tools/fs/patch.ts searchRange(): when the exact search text is not in the file, it compares
// the search's lines against every window of the file's lines (`for i … want.every(…)`), i.e.
// (file lines) × (search lines) string comparisons, synchronously in the process that serves every
// session. Both are the sandbox's: the file (up to patch's 32 MiB read cap, 16M lines) and the
// search text (up to the 16 MiB host-call frame, 8M lines). A file of N lines `a` and a search of
// N/2 lines `a` then one `b` (never found) costs N²/4 comparisons: 40 000 lines (80 KB) already
// stop the host for seconds here; a 2 MB file stops it for hours, and nothing can interrupt it (the
// block's deadline runs on the same stuck event loop).
//
// Reproduction (kept to seconds): a real engine session writes 40 000 lines of `a` and patches
// with a search of 20 000 `a` lines and a `b`; a host timer measures the longest gap between its
// ticks. It fails on the current code because the host's event loop stops for seconds.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { createEngine } from '../../src/engine/index.js'
import { python } from '../sessions/helpers.js'
import { worstStall } from './event-loop-stall.js'

const made: string[] = []
after(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

test("patch's whitespace-tolerant search cannot stop the host's event loop", async () => {
  const home = mkdtempSync(join(tmpdir(), 'vis-attack-patch-search-home-'))
  const root = mkdtempSync(join(tmpdir(), 'vis-attack-patch-search-root-'))
  made.push(home, root)
  process.env.VIS_HOME = home
  const engine = await createEngine({ home, python, pool: { size: 0 }, extensions: false })
  try {
    const s = await engine.createSession({ roots: [root] })
    const w = await engine.runBlock(s.id, { code: "open('lines.txt', 'w').write('a\\n' * 40_000)" })
    assert.equal(w.block.error, null, JSON.stringify(w.block.error))

    const { result: r, worst } = await worstStall(() =>
      engine.runBlock(s.id, {
        code: [
          'try:',
          "    await patch([{'path': 'lines.txt', 'search': 'a\\n' * 20_000 + 'b', 'replace': 'x'}])",
          'except Exception as e:',
          "    print('refused:', getattr(e, 'code', None), str(e)[-160:])",
        ].join('\n'),
        timeout_ms: 120_000,
      }),
    )
    assert.equal(r.block.error, null, JSON.stringify(r.block.error))
    assert.ok(
      worst < 1000,
      `the host's event loop (every session, stream and request it serves) stood still for ${Math.round(worst)} ms ` +
        "in patch's whitespace-tolerant search over 80 KB of sandbox-written lines (it grows with the square)",
    )
    // Refused with its own code and a way forward, not a silent miss.
    assert.match(r.block.stdout, /^refused: tool\.search-too-costly .*more specific search/)
  } finally {
    await engine.close()
  }
})
