// Attack (seventh outsider pass; SECURITY.md in scope: the host process and its other sessions must
// carry on whatever a sandbox sends; the sixth pass's fix for grep's `include`): each glob is now a
// linear automaton and is capped at 1024 characters, but `include` takes a LIST of globs with no
// bound on its length, and globMatcher() runs every glob of the list, synchronously on the host's
// event loop, against every file grep meets (`tests.some(t => t(p))` in src/tools/fs/glob.ts, called
// from grep.ts `keep()` for each hit and each listed file).
//
// One glob of 1022 characters (`**a` * 340, plus `/b` so it never matches) against a workspace path
// of ~3800 characters costs the automaton ~100-300 ms here (O(glob × path) is linear, but large); a list
// of N such globs costs N times that in one synchronous call, with nothing yielding between globs.
// A list of 40 is already seconds of a stopped host; the host-call frame allows 16 MiB, so
// about 16 000 of them: hours of a frozen `vis serve` from one `grep` call.
//
// Reproduction: a real engine session makes one file under a deep (legal, < PATH_MAX) directory
// holding 'needle', then greps for it with include = 40 copies of that glob; a host timer measures
// the longest gap between its ticks. It failed before the fix because the host's event loop stopped
// for seconds (~19 s here). The fix bounds the list (INCLUDE_MAX_GLOBS, INCLUDE_MAX_TOTAL in
// src/tools/fs/glob.ts: refused with tool.bad-glob) and paces the matching of what is allowed, so
// the test also checks that the largest allowed list against the same path answers without a stall.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { inStallSession, worstStall } from './event-loop-stall.js'

test("a list of include globs cannot stop the host's event loop", async () => {
  await inStallSession('globlist', async (engine, s) => {
    const w = await engine.runBlock(s.id, {
      code: [
        'import os',
        "d = '/'.join(['a' * 250] * 15)",
        'os.makedirs(d)',
        "open(d + '/' + 'a' * 50, 'w').write('needle\\n')",
        "print(len((await grep('needle'))['hits']))",
      ].join('\n'),
    })
    assert.equal(w.block.error, null, JSON.stringify(w.block.error))
    assert.equal(w.block.stdout, '1\n')

    // The attack's list (40 globs of 1022 characters) is refused, at once, for its size.
    const { result: r, worst } = await worstStall(() =>
      engine.runBlock(s.id, {
        code: [
          'try:',
          "    r = await grep('needle', include=['**a' * 340 + '/b'] * 40)",
          "    print(r.get('hits'))",
          'except Exception as e:',
          "    print(getattr(e, 'code', type(e).__name__), 'limits are' in str(e))",
        ].join('\n'),
        timeout_ms: 300_000,
      }),
    )
    assert.equal(r.block.error, null, JSON.stringify(r.block.error))
    assert.equal(
      r.block.stdout,
      'tool.bad-glob True\n',
      'the list is refused for its size, with the limits named',
    )
    assert.ok(
      worst < 1000,
      `the host's event loop (every session, stream and request it serves) stood still for ${Math.round(worst)} ms ` +
        'matching a sandbox-chosen LIST of include globs against one sandbox-chosen path (each extra glob adds ~0.1-0.3 s; ' +
        'the list has no bound)',
    )

    // The largest list the bound lets through still answers, and its matching yields as it goes.
    const within = await worstStall(() =>
      engine.runBlock(s.id, {
        code: "r = await grep('needle', include=['**a' * 340 + '/b'] * 2)\nprint(r.get('hits'))",
        timeout_ms: 300_000,
      }),
    )
    assert.equal(within.result.block.error, null, JSON.stringify(within.result.block.error))
    assert.equal(within.result.block.stdout, '[]\n', 'no path ends in /b')
    assert.ok(
      within.worst < 1000,
      `the host's event loop stood still for ${Math.round(within.worst)} ms matching an include list within its bounds`,
    )
  })
})
