// Attack (seventh outsider pass; SECURITY.md in scope: the host process and its other sessions must
// carry on whatever a sandbox sends; "Host-side work of the file tools": "none of their own work may
// grow with that text past a bound"): `cat` reads a sandbox-written file of up to its 32 MiB cap and
// processes ALL of it synchronously on the host's event loop (splitting it into lines and computing
// the anchors), even when it returns one page of it.
//
// A file of 33 million empty lines ('\n' * 33_000_000, 31.5 MiB, under the cap) makes one
// `cat('nl.txt')` stop the host's event loop for seconds (here ~2.5-4 s under load), although the answer
// is one page of a few hundred lines. Nothing bounds the number of lines, only the bytes, and the
// file is reused by every call: a loop of `cat` calls from a block (or `gather`) keeps the host
// stopped for as long as the block runs. (patch by anchors on the same file does the same, ~3 s.)
//
// Reproduction: a real engine session writes the file, then cats it; a host timer measures the
// longest gap between its ticks. It fails on the current code because the host's event loop stops
// for seconds (a fix: split lazily up to the page asked for, bound the line count, or yield while
// splitting, or move the work off the loop).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { inStallSession, worstStall } from './event-loop-stall.js'

test("cat of a file of many short lines cannot stop the host's event loop", async () => {
  await inStallSession('cat-lines', async (engine, s) => {
    const w = await engine.runBlock(s.id, {
      code: "open('nl.txt', 'w').write('\\n' * 33_000_000)\nprint('ok')",
    })
    assert.equal(w.block.error, null, JSON.stringify(w.block.error))

    const { result: r, worst } = await worstStall(() =>
      engine.runBlock(s.id, {
        code: "r = await cat('nl.txt')\nprint(type(r).__name__, len(str(r)) < 200_000)",
        timeout_ms: 300_000,
      }),
    )
    assert.equal(r.block.error, null, JSON.stringify(r.block.error))
    assert.match(r.block.stdout ?? '', /True/, 'cat answers one page')
    assert.ok(
      worst < 1000,
      `the host's event loop (every session, stream and request it serves) stood still for ${Math.round(worst)} ms ` +
        'for one cat of a sandbox-written 31.5 MiB file of empty lines (one page answered)',
    )
  })
})
